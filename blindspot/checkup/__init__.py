"""``blindspot checkup METRIC``: what a metric does besides reacting to noise.

Batch and order invariance, determinism across processes, the input length past which the
metric is blind (measured by bisection), normalisation invariance, reference handling and
sanity anchors in score units (:mod:`blindspot.checkup.checks`), for any metric the runner can
resolve (registered, a module or a plain function), reported like a run
(:mod:`blindspot.checkup.protocol`: ``results.json`` and ``report.md``).
"""
