"""The perturbation catalogue: every stress test of the four papers as a ``datasets.map`` transform.

Each test lives in its own module (``truncation.py``, ``article_removal.py``...) and registers
itself in :data:`REGISTRY`, which :mod:`blindspot.catalog` fills on its first read;
:func:`get_perturbation` finds one by canonical name or paper alias, and
:func:`list_perturbations` lists the catalogue. Running tests over a dataset
(:func:`~blindspot.perturbations.dataset.perturb_dataset`, ``run_suite``) lives in
:mod:`blindspot.perturbations.dataset`, which loads ``datasets``: import it from there, so that
reading the catalogue stays fast.
"""

from __future__ import annotations

from blindspot.perturbations.perturbation import (
    OUTPUT_COLUMNS,
    REGISTRY,
    TASKS,
    Perturbation,
    Row,
    canonical_name,
    canonical_task,
    get_perturbation,
    level_str,
    register,
)
from blindspot.perturbations.suites import list_perturbations, suite_tests

__all__ = ["OUTPUT_COLUMNS", "REGISTRY", "TASKS", "Perturbation", "Row", "canonical_name",
           "canonical_task", "get_perturbation", "level_str", "list_perturbations", "register",
           "suite_tests"]
