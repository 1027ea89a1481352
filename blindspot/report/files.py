"""File-system helpers: safe file names and atomic writes.

A report is written next to a run's results; a killed run must never leave a half-written file
behind, so every file goes to a temporary name in the same folder and is then renamed over the
target (:func:`blindspot.faults.atomic_path`; ``os.replace`` is atomic within one file system).
A full disk meanwhile is :class:`~blindspot.faults.OutOfSpaceError` naming the folder and the
file, and the old file (if any) stays as it was.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from blindspot.faults import atomic_path

_UNSAFE = re.compile(r"[^A-Za-z0-9._]+")
MAX_SLUG = 80


def slugify(name: str) -> str:
    """A file-system-safe form of ``name``: runs of other characters become one ``-``.

    The result never contains ``--`` (so it can join two slugs unambiguously), never starts
    with a dot or dash, and is at most ``MAX_SLUG`` characters; an empty result becomes ``_``.
    """
    slug = _UNSAFE.sub("-", str(name)).strip("-.")[:MAX_SLUG].strip("-.")
    return slug or "_"


# -- atomic writes --------------------------------------------------------------------------------

def atomic_write_bytes(path: Path, data: bytes) -> Path:
    """Write ``data`` to ``path`` all at once: readers see the old file or the new, never a part."""
    path = Path(path)
    with atomic_path(path, len(data)) as temporary:
        # 0o666 less the umask, like an ordinary open(); O_EXCL never follows a planted link
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
    return path


def atomic_write_text(path: Path, text: str) -> Path:
    """:func:`atomic_write_bytes` for UTF-8 text (newlines written as given)."""
    return atomic_write_bytes(path, text.encode("utf-8"))
