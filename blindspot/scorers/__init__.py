"""Every metric's :class:`~blindspot.scoring.base.Scorer`, one module per metric family; each
registers itself in :data:`~blindspot.scoring.base.SCORERS`, which :mod:`blindspot.catalog` fills
on its first read."""
