"""The perturbation catalogue: every stress test of the four papers as a ``datasets.map`` transform.

Each test lives in its own module (``truncation.py``, ``article_removal.py``...) and registers
itself; :func:`get_perturbation` finds one by canonical name or paper alias, and
:func:`list_perturbations` lists the catalogue.
"""

from __future__ import annotations

import importlib
import pkgutil

from blindspot.perturbations.base import (
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


def _import_all() -> None:
    """Import every module of this package so each test registers itself."""
    for module in pkgutil.iter_modules(__path__):
        if not module.name.startswith("_") and module.name not in ("base", "text_utils"):
            importlib.import_module(f"{__name__}.{module.name}")


_import_all()

from blindspot.perturbations.catalogue import list_perturbations, suite_tests  # noqa: E402
from blindspot.perturbations.dataset import perturb_dataset, run_suite  # noqa: E402

__all__ = ["OUTPUT_COLUMNS", "REGISTRY", "TASKS", "Perturbation", "Row", "canonical_name",
           "canonical_task", "get_perturbation", "level_str", "list_perturbations",
           "perturb_dataset", "register", "run_suite", "suite_tests"]
