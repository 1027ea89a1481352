"""The named suites, and the listing of the tests (`blindspot list`).

A suite is a category: every registered test names one (``fluency``, ``consistency`` and
``targeted`` for the blind-spots paper; other papers' tests bring their own, e.g. ``menli``), and
``all`` is the blind-spots paper's core suite (its three categories), so adding another paper's
tests never changes what ``all`` runs.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from blindspot.perturbations.perturbation import REGISTRY, canonical_name, canonical_task

#: The blind-spots paper's categories, in report order; ``all`` selects these.
CATEGORIES = ("fluency", "consistency", "targeted")


def suite_names() -> list[str]:
    """Every suite name: the core categories, the other registered categories, then ``all``."""
    extra = sorted({cls.category for cls in REGISTRY.values()} - set(CATEGORIES))
    return [*CATEGORIES, *extra, "all"]


def suite_tests(selection: str | Iterable[str], task: str | None = None) -> list[str]:
    """Canonical test names for a suite name (a category, or ``all``) or test names.

    ``selection`` may be a comma-separated string mixing suites and test names. With ``task``,
    tests the paper does not run on that task are left out of suites (never out of explicit names).
    """
    items = selection.split(",") if isinstance(selection, str) else list(selection)
    suites = suite_names()
    names: list[str] = []
    for item in (i.strip() for i in items if i and i.strip()):
        if item in suites:
            cats = CATEGORIES if item == "all" else (item,)
            chosen = [n for n, cls in REGISTRY.items() if cls.category in cats]
            if task is not None:
                key = canonical_task(task)
                chosen = [n for n in chosen if REGISTRY[n].levels.get(key)]
            names.extend(sorted(chosen, key=_order))
        else:
            names.append(canonical_name(item, suites))
    return list(dict.fromkeys(names))


def _order(name: str) -> tuple[int, str]:
    cls = REGISTRY[name]
    return (CATEGORIES.index(cls.category) if cls.category in CATEGORIES else 9, name)


def list_perturbations(task: str | None = None) -> list[dict[str, Any]]:
    """One catalogue entry per test (description, levels per task, what it needs)."""
    entries = []
    for name in sorted(REGISTRY, key=_order):
        cls = REGISTRY[name]
        if task is not None and not cls.levels.get(canonical_task(task)):
            continue
        entries.append(cls.info())
    return entries
