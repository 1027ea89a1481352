"""Faults of the machine, not of the input: a full disk, a service down and a stopped run.

Each is one line for the user and a state that resumes:

* :class:`OutOfSpaceError`: the disk under the user's output (a report, a dataset file, the run
  state) is full. One line names the folder, what was being written, what it needed and what is
  left; the command line stops with exit 1, and the same command resumes once there is room (a
  full disk under a *cache* is no error: :mod:`blindspot.sqlite_utils` goes on without caching).
* :func:`atomic_path`: every file of the user's output is written whole or not at all (a
  temporary name beside it, renamed into place), so no fault leaves half a file.
* :class:`ScorerUnavailable`: a service a scorer calls (a judge's server) is still down after
  its retries; the run stops with its state kept, and the same command resumes.
* :class:`RunInterrupted`: Ctrl-C (SIGINT) or SIGTERM stopped a run. One line says how many
  cells the run state keeps and how to resume; the command line exits 128 + the signal (130,
  143), as a shell reports a process a signal ended.
"""

from __future__ import annotations

import errno
import os
import resource
import secrets
import shutil
import signal
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType

#: SQLITE_FULL: "database or disk is full"
_SQLITE_FULL = 13
#: SQLITE_IOERR: what SQLite reports when a write meets the file-size limit (EFBIG)
_SQLITE_IOERR = 10
#: what the run says how to resume with
RESUME = "run the same command to resume"


def is_out_of_space(error: BaseException) -> bool:
    """Whether ``error`` says the disk (or the file-size limit) is full: ``ENOSPC``, ``EDQUOT``,
    ``EFBIG``, or SQLite's ``SQLITE_FULL``, also when Arrow or another library wrapped it."""
    seen: set[int] = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        if isinstance(error, OutOfSpaceError):
            return True
        if isinstance(error, OSError) and error.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG):
            return True
        if isinstance(error, sqlite3.Error) and \
                (getattr(error, "sqlite_errorcode", 0) or 0) & 0xFF == _SQLITE_FULL:
            return True
        if isinstance(error, sqlite3.Error) and _file_size_limited() and \
                (getattr(error, "sqlite_errorcode", 0) or 0) & 0xFF == _SQLITE_IOERR:
            return True  # SQLite names EFBIG (a file-size limit) only as a write error
        if "No space left on device" in str(error) or "File too large" in str(error):
            return True  # pyarrow's own OSError carries the errno only in its text
        error = error.__cause__ or error.__context__  # type: ignore[assignment]
    return False


def _file_size_limited() -> bool:
    """Whether this process runs under a file-size limit (``ulimit -f``, RLIMIT_FSIZE)."""
    soft, _ = resource.getrlimit(resource.RLIMIT_FSIZE)
    return soft != resource.RLIM_INFINITY


def free_space(folder: Path) -> int | None:
    """The bytes free on the disk of ``folder`` (its nearest existing parent), or None."""
    folder = Path(folder).absolute()
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    try:
        return shutil.disk_usage(folder).free
    except OSError:
        return None


def size_text(size: int | None) -> str:
    """``size`` bytes for a person: ``812 bytes``, ``14.2 KB``, ``3.1 MB``, ``2.0 GB``.

    >>> size_text(812), size_text(14_540), size_text(3_250_000)
    ('812 bytes', '14.2 KB', '3.1 MB')
    """
    if size is None:
        return "unknown"
    if size < 1000:
        return f"{size} bytes"
    for unit, scale in (("KB", 1e3), ("MB", 1e6), ("GB", 1e9)):
        if size < scale * 1000 or unit == "GB":
            return f"{size / scale:.1f} {unit}"
    raise AssertionError("unreachable")


class OutOfSpaceError(OSError):
    """The output's disk is full: ``folder``, what was being ``written`` there, the bytes it
    ``needs`` (None: unknown) and what is ``free``; ``kept`` says what the run kept (set by the
    runner, which knows it). An ``OSError`` with ``errno.ENOSPC``, so code that handles a full
    disk already handles it."""

    def __init__(self, folder: str | Path, written: str, needs: int | None = None,
                 kept: str = "") -> None:
        self.folder, self.written, self.needs = Path(folder), written, needs
        self.free = free_space(self.folder)
        #: the file-size limit (``ulimit -f``) the write met, if one is set
        self.limit = resource.getrlimit(resource.RLIMIT_FSIZE)[0] if _file_size_limited() else None
        self.kept = kept
        super().__init__(errno.ENOSPC, str(self))

    def __str__(self) -> str:
        needs = f" (it needs at least {size_text(self.needs)})" if self.needs else ""
        room = f"{size_text(self.free)} free"
        if self.limit is not None:  # the disk may have room: a file may not grow past the limit
            room += f", files limited to {size_text(self.limit)}"
        text = f"no space left in {self.folder} ({room}) while writing {self.written}{needs}"
        if not self.kept:
            return f"{text}; free some space there or choose another folder"
        return (f"{text}; {self.kept}: free some space there or choose another folder, then "
                f"{RESUME}")

    def with_kept(self, kept: str) -> OutOfSpaceError:
        """This error, saying what the run kept ("5 of 20 cells kept in out/.state")."""
        self.kept = kept
        self.args = (errno.ENOSPC, str(self))
        return self

    def __reduce__(self) -> tuple[object, ...]:  # crosses process boundaries as it is
        return (_rebuild, (self.folder, self.written, self.needs, self.kept))


def _rebuild(folder: Path, written: str, needs: int | None, kept: str) -> OutOfSpaceError:
    return OutOfSpaceError(folder, written, needs, kept)


@contextmanager
def out_of_space_as(folder: str | Path, written: str, needs: int | None = None) -> Iterator[None]:
    """Turn a full disk met in the block into :class:`OutOfSpaceError` naming ``folder`` and
    what was being ``written``."""
    try:
        yield
    except OutOfSpaceError:
        raise
    except Exception as error:
        if not is_out_of_space(error):
            raise
        raise OutOfSpaceError(folder, written, needs) from error


class WorkerLost(RuntimeError):
    """A worker process died under the run more often than it is retried: one line naming the
    work it held and what the run state keeps."""


# -- writing a whole file or none of it -----------------------------------------------------------

def _temporary_path(target: Path) -> Path:
    """A fresh hidden name beside ``target`` for the bytes in flight."""
    return target.with_name(f".{target.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")


@contextmanager
def atomic_path(path: Path, needs: int | None = None) -> Iterator[Path]:
    """A temporary name beside ``path`` to write the whole file to; renamed over ``path`` when
    the block ends, removed when it fails (readers see the old file or the new, never a part).
    A full disk is :class:`OutOfSpaceError` naming the folder, the file and ``needs``."""
    path = Path(path)
    with out_of_space_as(path.parent, path.name, needs):
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = _temporary_path(path)
        try:
            yield temporary
            os.replace(temporary, path)
        except BaseException:
            temporary.unlink(missing_ok=True)
            raise


# -- a stopped run --------------------------------------------------------------------------------

class ScorerUnavailable(RuntimeError):
    """The service a scorer calls (a judge's server) is still down after its retries: the run
    stops here, its state kept so that the same command resumes, rather than every remaining
    cell failing one by one."""


class RunInterrupted(KeyboardInterrupt):
    """A run stopped by ``signum`` (SIGINT: Ctrl-C, or SIGTERM), with what its state in
    ``folder`` keeps: ``kept`` of ``total`` cells (None: not known yet, the run had not
    started)."""

    def __init__(self, signum: int = signal.SIGINT, kept: int | None = None,
                 total: int | None = None, folder: Path | None = None) -> None:
        self.signum, self.kept, self.total, self.folder = int(signum), kept, total, folder
        super().__init__(str(self))

    @property
    def exit_code(self) -> int:
        """128 + the signal: 130 for SIGINT, 143 for SIGTERM (what a shell reports)."""
        return 128 + self.signum

    def __str__(self) -> str:
        if self.folder is None:
            return "interrupted before the run started; nothing to resume"
        if self.total is None:
            return f"interrupted: every cell is kept in {self.folder}; {RESUME}"
        return f"interrupted: {self.kept} of {self.total} cells kept in {self.folder}; {RESUME}"


def _raise_interrupted(signum: int, frame: FrameType | None) -> None:
    raise RunInterrupted(signum)


def _default_in_child() -> None:
    """In a worker process forked during a run (a ``num_proc`` pool), SIGTERM ends the worker as
    it ends any process (the pool terminates its workers so when one of them died), and Ctrl-C
    is left to the run's own process, which stops the pool: a worker would print a traceback.
    (``subprocess`` children run no fork hook unless given a ``preexec_fn``.)"""
    if signal.getsignal(signal.SIGTERM) is _raise_interrupted:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.SIG_IGN)


os.register_at_fork(after_in_child=_default_in_child)


@contextmanager
def terminate_as_interrupt() -> Iterator[None]:
    """Within the block, SIGTERM stops the main thread as Ctrl-C does (a
    :class:`RunInterrupted` raised where it is, so every ``finally`` runs and every transaction
    rolls back), where the process left SIGTERM at its default; the handler is restored after."""
    if threading.current_thread() is not threading.main_thread() \
            or signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        yield
        return
    signal.signal(signal.SIGTERM, _raise_interrupted)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


__all__ = ["OutOfSpaceError", "RunInterrupted", "ScorerUnavailable", "WorkerLost", "atomic_path",
           "free_space", "is_out_of_space", "out_of_space_as", "size_text",
           "terminate_as_interrupt"]
