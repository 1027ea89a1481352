"""Adversarial dataset builders: a task's gold data in, a versioned Hub dataset folder out.

:mod:`.gold_sources` knows the four gold sources of the blind-spots paper (local files, or their
upstream releases when online); :mod:`.build_adversarial` runs the stress-test suite on them and
writes the folder (parquet per test and level, dataset card, build record) and can push it.
The names below are imported on first use, so ``python -m`` on a submodule stays clean.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "PushError": "build_adversarial", "build_adversarial_dataset": "build_adversarial",
    "push_adversarial_dataset": "build_adversarial", "GOLD_SOURCES": "gold_sources",
    "GoldDataMissingError": "gold_sources", "get_gold_source": "gold_sources",
    "load_gold": "gold_sources",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_EXPORTS[name]}"), name)
