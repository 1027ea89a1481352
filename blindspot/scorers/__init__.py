"""Every metric's :class:`~blindspot.scoring.scorer.Scorer`, one module per metric family; each
registers itself in :data:`~blindspot.scoring.scorer.SCORERS`, which :mod:`blindspot.catalog` fills
on its first read."""
