"""The persistent score cache: SQLite in WAL mode, safe for several processes writing at once.

A score is keyed by the metric's name, its configuration, the model's revision and the exact
inputs, so re-scoring an already-scored set is near-free, a killed process leaves no corrupt
entry (each batch is one transaction), and a changed model or setting never reuses old scores.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from blindspot.paths import cache_dir


class ScoreCache:
    """key -> JSON value store; one connection per process and thread."""

    def __init__(self, path: Path | str):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        with self._connect() as con:
            con.execute("CREATE TABLE IF NOT EXISTS scores (key TEXT PRIMARY KEY, value TEXT)")

    def _connect(self) -> sqlite3.Connection:
        con = getattr(self._local, "con", None)
        if con is None or getattr(self._local, "pid", None) != os.getpid():
            con = sqlite3.connect(self.path, timeout=120, isolation_level=None)
            con.execute("PRAGMA journal_mode=WAL")
            con.execute("PRAGMA synchronous=NORMAL")
            self._local.con, self._local.pid = con, os.getpid()
        return con

    def get_many(self, keys: Sequence[str]) -> dict[str, Any]:
        """The cached values of those ``keys`` that are present."""
        found: dict[str, Any] = {}
        con = self._connect()
        for i in range(0, len(keys), 500):
            chunk = list(keys[i: i + 500])
            marks = ",".join("?" * len(chunk))
            for key, value in con.execute(f"SELECT key, value FROM scores WHERE key IN ({marks})",
                                          chunk):
                found[key] = json.loads(value)
        return found

    def put_many(self, items: Iterable[tuple[str, Any]]) -> None:
        """Store values in one transaction (all of the batch or none of it)."""
        rows = [(k, json.dumps(v, sort_keys=True)) for k, v in items]
        if not rows:
            return
        con = self._connect()
        with con:
            con.executemany("INSERT OR REPLACE INTO scores (key, value) VALUES (?, ?)", rows)

    def __len__(self) -> int:
        return self._connect().execute("SELECT COUNT(*) FROM scores").fetchone()[0]

    def __getstate__(self) -> dict[str, Any]:
        return {"path": self.path}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.path = state["path"]
        self._local = threading.local()


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
