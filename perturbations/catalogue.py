"""The catalogue: listing the tests, and the named suites (fluency, consistency, targeted, all)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from blindspot.perturbations.base import REGISTRY, canonical_name, canonical_task

CATEGORIES = ("fluency", "consistency", "targeted")


def suite_tests(selection: str | Iterable[str], task: str | None = None) -> list[str]:
    """Canonical test names for a suite name (fluency/consistency/targeted/all) or names.

    ``selection`` may be a comma-separated string mixing suites and test names. With ``task``,
    tests the paper does not run on that task are left out of suites (never out of explicit names).
    """
    items = selection.split(",") if isinstance(selection, str) else list(selection)
    names: list[str] = []
    for item in (i.strip() for i in items if i and i.strip()):
        if item in CATEGORIES or item == "all":
            cats = CATEGORIES if item == "all" else (item,)
            chosen = [n for n, cls in REGISTRY.items() if cls.category in cats]
            if task is not None:
                key = canonical_task(task)
                chosen = [n for n in chosen if REGISTRY[n].levels.get(key)]
            names.extend(sorted(chosen, key=_order))
        else:
            names.append(canonical_name(item))
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
