"""Report folders: the one writer every protocol's report goes through, safe file names and
atomic writes.

A protocol renders its report as :class:`ReportFiles` (``Protocol.render``): the results dict
and every other file, each a name and its text or bytes, all rendered before anything is
written, so a result that cannot be saved (a NaN, an infinity) writes nothing.
:func:`write_folder` writes one: ``results.json`` first, always by :func:`results_json`, then the
other files in their order, then any nested report folder; the file names come from the
constants here (:data:`RESULTS_FILE`, :data:`MARKDOWN_FILE`, :data:`HTML_FILE`,
:data:`PLOT_FOLDER`).

A killed run must never leave a half-written file behind, so every file goes to a temporary name
in the same folder and is then renamed over the target (:func:`blindspot.faults.atomic_path`;
``os.replace`` is atomic within one file system). A full disk meanwhile is
:class:`~blindspot.faults.OutOfSpaceError` naming the folder and the file, and the old file (if
any) stays as it was.

This module imports no renderer (matplotlib loads with a protocol's own report code), so the
protocol registry can name it.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from blindspot.faults import atomic_path

#: every report folder's file names
RESULTS_FILE = "results.json"
MARKDOWN_FILE = "report.md"
HTML_FILE = "report.html"
#: the folder of a report's plots (rank, preference)
PLOT_FOLDER = "plots"

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


# -- a report folder ------------------------------------------------------------------------------

def results_json(results: Mapping[str, Any]) -> str:
    """The canonical text of ``results.json``; raises ValueError on NaN or infinity."""
    return json.dumps(results, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def _relative(name: str) -> str:
    """``name`` if it is a plain relative path inside a report folder, else a ValueError."""
    parts = PurePosixPath(name).parts
    if not parts or PurePosixPath(name).is_absolute() or ".." in parts or "\\" in name:
        raise ValueError(f"a report file's name must be a relative path inside its folder, "
                         f"got {name!r}")
    return name


@dataclass(frozen=True)
class ReportFiles:
    """One report folder, rendered: ``results`` (saved as :data:`RESULTS_FILE`), the other
    ``files`` (name relative to the folder, e.g. ``report.md`` or ``plots/x.png`` -> its text or
    bytes, in the order they are written) and nested report ``folders`` (e.g. a search's
    ``generalisation/``). Making one renders results.json's text, so invalid results raise here,
    before :func:`write_folder` writes anything."""

    results: Mapping[str, Any]
    files: Mapping[str, str | bytes] = field(default_factory=dict)
    folders: Mapping[str, ReportFiles] = field(default_factory=dict)
    #: the bytes of results.json (:func:`results_json`)
    results_text: str = field(init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "results_text", results_json(self.results))
        for name in [*self.files, *self.folders]:
            _relative(name)
        if RESULTS_FILE in self.files:
            raise ValueError(f"{RESULTS_FILE} is the results' own file, not one of the others")

    @property
    def names(self) -> list[str]:
        """Every file of the folder, relative to it, in the order they are written."""
        return [RESULTS_FILE, *self.files,
                *(f"{folder}/{name}" for folder, sub in self.folders.items()
                  for name in sub.names)]


def write_folder(report: ReportFiles, out: str | Path) -> list[Path]:
    """Write ``report`` into the folder ``out`` (made when missing), every file atomically,
    results.json first; the paths written, in order."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    written = [atomic_write_text(out / RESULTS_FILE, report.results_text)]
    for name, content in report.files.items():
        written.append(atomic_write_bytes(out / name, content if isinstance(content, bytes)
                                          else content.encode("utf-8")))
    for name, folder in report.folders.items():
        written += write_folder(folder, out / name)
    return written
