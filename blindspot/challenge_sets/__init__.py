"""MT challenge sets in their own formats (DEMETR, ACES) through the preference protocol.

``blindspot run --protocol preference --data FILE --format demetr|aces`` reads the benchmark's
files as they are published (:mod:`blindspot.challenge_sets.formats`), scores the good and the
bad translation of every item with each metric, and reports per phenomenon the benchmark's own
statistic beside the preference protocol's (:mod:`blindspot.challenge_sets.figures`).
"""
