"""blindspot: stress tests that find the blind spots of text-generation evaluation metrics.

The perturbation catalogue lives in :mod:`blindspot.perturbations`, the dataset builders in
:mod:`blindspot.datasets_scripts`; this package holds what they share (parsing, seeding,
noise ratio, file I/O, the offline model registry and the CLI).
"""

__version__ = "0.1.0"
