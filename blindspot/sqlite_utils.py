"""A small key -> text store in SQLite (WAL mode), shared by the caches and the run state.

Several processes may read and write at once (WAL, a generous busy timeout), each process and
thread gets its own connection, and every batch is one explicit transaction: all of it is
written or none of it, so a killed process never leaves half a batch.

A damaged file (not an SQLite database, truncated, "database disk image is malformed", a table
with other columns) is handled by what the store declares it holds:

* ``derived=True`` (the caches: parses, scores, MAUVE features): everything in it can be computed
  again, so it heals. The file (with its ``-wal``/``-shm`` companions) is moved aside to
  ``<name>.corrupt-<n>``, never deleted, one ``warning:`` line on stderr names both files, and an
  empty store is made in its place; a run then gives the results a fresh cache gives.
* ``derived=False`` (a run's resumable state): the user's finished work, which the store never
  moves or deletes. Opening it raises :class:`DamagedStoreError`, a one-paragraph message naming
  the file and what to delete to start over.

The cheap checks run once, when the store is opened (the header, the file's length against the
page count in the header, the table's columns), under a lock file so that parallel processes do
not heal the same file twice. Damage they cannot see (a page garbled in the middle of the file) is
caught when a query meets it, and handled the same way, once.

A full disk (``SQLITE_FULL``, ``ENOSPC``, a file-size limit) is handled by the same declaration:

* ``derived=True``: a cache that cannot grow is no reason to stop. One ``warning:`` line per
  folder names the file, the space left and how to move the cache (``BLINDSPOT_CACHE``); what
  does not fit is not cached (a cache that cannot even be opened is skipped), and the run's
  results are those of a run with room.
* ``derived=False``: :class:`~blindspot.report.files.OutOfSpaceError`, naming the folder, the
  file and the bytes of the batch that did not fit. Every batch written before stays (each is
  one transaction), so the run resumes once there is room.
"""

from __future__ import annotations

import os
import sqlite3
import sys
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from filelock import FileLock
from tqdm import tqdm

from blindspot.errors import BlindspotInputError
from blindspot.faults import OutOfSpaceError, free_space, is_out_of_space, size_text

T = TypeVar("T")

#: the SQLite result codes that mean the file itself is damaged (not busy, not locked):
#: SQLITE_CORRUPT and SQLITE_NOTADB (the sqlite3 module names them only from Python 3.11 on)
_DAMAGE_CODES = frozenset({11, 26})
_MAGIC = b"SQLite format 3\x00"
_COLUMNS = (("key", "TEXT", 1), ("value", "TEXT", 0))  # name, type, primary-key position
_COMPANIONS = ("-wal", "-shm", "-journal")
_PAGE = 4096
#: the cache folders whose full disk was already reported (one warning per folder and process)
_FULL_WARNED: set[Path] = set()


class DamagedStoreError(BlindspotInputError):
    """A damaged store that holds the user's work (``derived=False``): never touched, reported."""


@contextmanager
def transaction(con: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """``BEGIN IMMEDIATE`` ... ``COMMIT``, rolled back on any error (autocommit connections
    need the BEGIN to be explicit)."""
    con.execute("BEGIN IMMEDIATE")
    try:
        yield con
    except BaseException:
        if con.in_transaction:  # a damaged file may have ended the transaction already
            con.execute("ROLLBACK")
        raise
    con.execute("COMMIT")


def is_damage(error: BaseException) -> bool:
    """Whether an sqlite3 error says the file is damaged (rather than busy or missing)."""
    code = getattr(error, "sqlite_errorcode", None)
    return isinstance(error, sqlite3.DatabaseError) and code is not None \
        and code & 0xFF in _DAMAGE_CODES


def header_damage(path: Path) -> str | None:
    """What is wrong with the file's 100-byte header or its length, or None.

    An empty file is a valid empty database. The page count in the header is only trusted when
    the header says it is current (its change counter equals "version valid for") and no WAL
    file is waiting to be replayed (a checkpoint killed half-way leaves a short file that SQLite
    completes from the WAL).
    """
    size = path.stat().st_size
    if size == 0:
        return None
    with path.open("rb") as handle:
        header = handle.read(100)
    if not header.startswith(_MAGIC[:len(header)]):
        return "it is not an SQLite database"
    if len(header) < 100:
        return f"it is truncated ({size} bytes, shorter than an SQLite header)"
    page_size = int.from_bytes(header[16:18], "big")
    page_size = 65536 if page_size == 1 else page_size
    pages = int.from_bytes(header[28:32], "big")
    current = header[24:28] == header[92:96]
    wal = Path(f"{path}-wal")
    replay = wal.exists() and wal.stat().st_size > 0
    if current and not replay and size < pages * page_size:
        return f"it is truncated ({size} of {pages * page_size} bytes)"
    return None


def table_damage(con: sqlite3.Connection, table: str) -> str | None:
    """What is wrong with ``table``'s columns, or None (a missing table is made later)."""
    columns = tuple((name, kind.upper(), pk) for _, name, kind, _, _, pk
                    in con.execute(f"PRAGMA table_info({table})"))
    if columns and columns != _COLUMNS:
        return (f"its table {table} has the columns {[c[0] for c in columns]}, "
                f"not {[c[0] for c in _COLUMNS]}")
    if columns:
        con.execute(f"SELECT key, value FROM {table} LIMIT 1").fetchall()
    return None


def move_aside(path: Path) -> Path:
    """Rename ``path`` (and its -wal/-shm/-journal files) to the first free ``.corrupt-<n>``."""
    n = 1
    while any(Path(f"{path}.corrupt-{n}{end}").exists() for end in ("", *_COMPANIONS)):
        n += 1
    target = Path(f"{path}.corrupt-{n}")
    for end in _COMPANIONS:  # the companions first: a stale WAL must never meet a fresh file
        companion = Path(f"{path}{end}")
        if companion.exists():
            companion.rename(f"{target}{end}")
    path.rename(target)
    return target


def _pages(size: int) -> int:
    """The bytes SQLite writes for ``size`` bytes of rows in one transaction: whole pages, and
    one more for the table's b-tree (the default page of 4096 bytes)."""
    return (-(-size // _PAGE) + 1) * _PAGE


def warn(message: str) -> None:
    """One ``warning:`` line on stderr, above any progress bar on screen."""
    tqdm.write(f"warning: {message}", file=sys.stderr)


def warn_cache_full(path: Path) -> None:
    """The one warning of a cache folder whose disk is full (once per folder and process)."""
    folder = path.parent.absolute()
    if folder in _FULL_WARNED:
        return
    _FULL_WARNED.add(folder)
    warn(f"the cache {path} cannot grow: its disk has {size_text(free_space(folder))} left; "
         f"going on without caching what does not fit (the results are the same). Set "
         f"BLINDSPOT_CACHE to a folder on a disk with room to move the cache")


class KeyValueStore:
    """``key TEXT PRIMARY KEY -> value TEXT`` in one table of one SQLite file.

    ``derived`` declares what a damaged file means (see the module docstring): True for caches
    (heal), False for the user's work (:class:`DamagedStoreError`).
    """

    def __init__(self, path: Path | str, table: str, *, derived: bool):
        self.path = Path(path)
        self.table = table
        self.derived = derived
        #: a derived store whose disk was full when it was opened: it keeps nothing
        self.off = False
        self._local = threading.local()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with FileLock(f"{self.path}.lock"):
                self._open_checked()
        except Exception as error:
            self._out_of_space(error)
            self._close()
            self.off = True

    def _out_of_space(self, error: Exception, needs: int | None = None) -> None:
        """Re-raise ``error`` unless the disk is full; then warn (a cache) or raise
        :class:`OutOfSpaceError` (the user's work) with the bytes that did not fit."""
        if not is_out_of_space(error):
            raise error
        if not self.derived:
            raise OutOfSpaceError(self.path.parent, f"the run state {self.path.name}",
                                  needs) from error
        warn_cache_full(self.path)

    # -- opening and healing ----------------------------------------------------------------------

    def _open_checked(self) -> None:
        """Open the file, check it once, heal or refuse a damaged one, make the table."""
        problem = header_damage(self.path) if self.path.exists() else None
        if problem is None and self.path.exists():
            check = sqlite3.connect(self.path, timeout=120)  # reads only: the file stays as it is
            try:
                problem = table_damage(check, self.table)
            except sqlite3.DatabaseError as error:
                if not is_damage(error):
                    raise
                problem = f"SQLite says: {error}"
            finally:
                check.close()
        if problem is not None:
            self._damaged(problem)
        self._connect().execute(
            f"CREATE TABLE IF NOT EXISTS {self.table} (key TEXT PRIMARY KEY, value TEXT)")

    def _damaged(self, problem: str) -> None:
        """Heal a derived store (move aside, warn, start empty); refuse the user's work."""
        self._close()
        if not self.derived:
            raise DamagedStoreError(
                f"this run state is damaged ({problem}); it holds the scores the run already "
                f"finished, and nothing was changed",
                fix=f"Delete {self.path.parent} (or choose another --out or state_dir) to start "
                    f"the run over, or restore the file from a backup to resume",
                file=self.path)
        aside = move_aside(self.path)
        warn(f"the cache {self.path} was damaged ({problem}); moved it to {aside.name} and "
             f"started an empty cache (what it held is computed again)")

    def _heal_during(self, action: Callable[[], T], error: sqlite3.DatabaseError) -> T:
        """Damage met by a query: heal once (unless another process already did) and retry."""
        with FileLock(f"{self.path}.lock"):
            seen = getattr(self._local, "inode", None)
            still_ours = self.path.exists() and self.path.stat().st_ino == seen
            if still_ours:
                self._damaged(f"SQLite says: {error}")
            self._close()
            self._open_checked()
        return action()

    def _guard(self, action: Callable[[], T]) -> T:
        try:
            return action()
        except sqlite3.DatabaseError as error:
            if not is_damage(error):
                raise
            return self._heal_during(action, error)

    def _close(self) -> None:
        con = getattr(self._local, "con", None)
        if con is not None:
            con.close()
        self._local.con = None

    def _connect(self) -> sqlite3.Connection:
        con = getattr(self._local, "con", None)
        if con is None or getattr(self._local, "pid", None) != os.getpid():
            con = sqlite3.connect(self.path, timeout=120, isolation_level=None)
            con.execute("PRAGMA journal_mode=WAL")
            con.execute("PRAGMA synchronous=NORMAL")
            self._local.con, self._local.pid = con, os.getpid()
            self._local.inode = self.path.stat().st_ino
        return con

    # -- the store ------------------------------------------------------------------------------

    def get_many(self, keys: Sequence[str]) -> dict[str, str]:
        """The stored values of those ``keys`` that are present."""
        if self.off:
            return {}
        try:
            return self._guard(lambda: self._get_many(keys))
        except Exception as error:
            self._out_of_space(error)
            return {}

    def _get_many(self, keys: Sequence[str]) -> dict[str, str]:
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

        def write() -> None:
            with transaction(self._connect()) as con:
                con.executemany(f"{verb} INTO {self.table} (key, value) VALUES (?, ?)", rows)

        if self.off:
            return
        try:
            self._guard(write)
        except Exception as error:  # a full disk: the cache goes on without this batch
            self._out_of_space(error, _pages(sum(len(k) + len(v) for k, v in rows)))

    def __len__(self) -> int:
        if self.off:
            return 0
        return self._guard(lambda: self._connect().execute(
            f"SELECT COUNT(*) FROM {self.table}").fetchone()[0])

    def __getstate__(self) -> dict[str, Any]:
        return {"path": self.path, "table": self.table, "derived": self.derived, "off": self.off}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.path, self.table = state["path"], state["table"]
        self.derived, self.off = state["derived"], state["off"]
        self._local = threading.local()
