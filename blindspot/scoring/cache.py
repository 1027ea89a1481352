"""The persistent score cache: SQLite in WAL mode, safe for several processes writing at once.

A score is keyed by the metric's name, its configuration, the model's revision and the exact
inputs, so re-scoring an already-scored set is near-free, a killed process leaves no corrupt
entry (each batch is one transaction), and a changed model or setting never reuses old scores.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from blindspot.paths import cache_dir
from blindspot.sqlite_utils import KeyValueStore


class ScoreCache:
    """key -> JSON-serialisable score store."""

    def __init__(self, path: Path | str):
        self.path = Path(path)
        self._store = KeyValueStore(self.path, "scores_v1", derived=True)  # table per version

    def get_many(self, keys: Sequence[str]) -> dict[str, Any]:
        """The cached values of those ``keys`` that are present."""
        return {k: json.loads(v) for k, v in self._store.get_many(keys).items()}

    def put_many(self, items: Iterable[tuple[str, Any]]) -> None:
        """Store values in one transaction (all of the batch or none of it)."""
        self._store.put_many((k, json.dumps(v, sort_keys=True)) for k, v in items)

    def __len__(self) -> int:
        return len(self._store)


class MemoryScoreCache:
    """The same interface in memory: where scores computed ahead wait when the disk cache is off
    (``BLINDSPOT_SCORE_CACHE=0``)."""

    def __init__(self) -> None:
        self._values: dict[str, Any] = {}

    def get_many(self, keys: Sequence[str]) -> dict[str, Any]:
        return {k: self._values[k] for k in keys if k in self._values}

    def put_many(self, items: Iterable[tuple[str, Any]]) -> None:
        self._values.update(items)

    def __len__(self) -> int:
        return len(self._values)


_DEFAULT: dict[str, ScoreCache] = {}


def default_score_cache() -> ScoreCache | None:
    """The process-wide cache at ``<cache dir>/scores.sqlite``; None when
    ``BLINDSPOT_SCORE_CACHE=0``."""
    if os.environ.get("BLINDSPOT_SCORE_CACHE", "1") == "0":
        return None
    path = str(cache_dir() / "scores.sqlite")
    if path not in _DEFAULT:
        _DEFAULT[path] = ScoreCache(path)
    return _DEFAULT[path]
