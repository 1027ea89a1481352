"""A small key -> text store in SQLite (WAL mode), shared by the parse cache and the score cache.

Several processes may read and write at once (WAL, a generous busy timeout), each process and
thread gets its own connection, and every batch is one explicit transaction: all of it is
written or none of it, so a killed process never leaves half a batch.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any


@contextmanager
def transaction(con: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """``BEGIN IMMEDIATE`` ... ``COMMIT``, rolled back on any error (autocommit connections
    need the BEGIN to be explicit)."""
    con.execute("BEGIN IMMEDIATE")
    try:
        yield con
    except BaseException:
        con.execute("ROLLBACK")
        raise
    con.execute("COMMIT")


class KeyValueStore:
    """``key TEXT PRIMARY KEY -> value TEXT`` in one table of one SQLite file."""

    def __init__(self, path: Path | str, table: str):
        self.path = Path(path)
        self.table = table
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        self._connect().execute(
            f"CREATE TABLE IF NOT EXISTS {table} (key TEXT PRIMARY KEY, value TEXT)")

    def _connect(self) -> sqlite3.Connection:
        con = getattr(self._local, "con", None)
        if con is None or getattr(self._local, "pid", None) != os.getpid():
            con = sqlite3.connect(self.path, timeout=120, isolation_level=None)
            con.execute("PRAGMA journal_mode=WAL")
            con.execute("PRAGMA synchronous=NORMAL")
            self._local.con, self._local.pid = con, os.getpid()
        return con

    def get_many(self, keys: Sequence[str]) -> dict[str, str]:
        """The stored values of those ``keys`` that are present."""
        found: dict[str, str] = {}
        con = self._connect()
        for i in range(0, len(keys), 500):
            chunk = list(keys[i: i + 500])
            marks = ",".join("?" * len(chunk))
            found.update(con.execute(
                f"SELECT key, value FROM {self.table} WHERE key IN ({marks})", chunk))
        return found

    def put_many(self, items: Iterable[tuple[str, str]], replace: bool = True) -> None:
        """Store a batch in one transaction."""
        rows = list(items)
        if not rows:
            return
        verb = "INSERT OR REPLACE" if replace else "INSERT OR IGNORE"
        with transaction(self._connect()) as con:
            con.executemany(f"{verb} INTO {self.table} (key, value) VALUES (?, ?)", rows)

    def __len__(self) -> int:
        return self._connect().execute(f"SELECT COUNT(*) FROM {self.table}").fetchone()[0]

    def __getstate__(self) -> dict[str, Any]:
        return {"path": self.path, "table": self.table}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.path, self.table = state["path"], state["table"]
        self._local = threading.local()
