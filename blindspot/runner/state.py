"""What a run has already computed, so a killed run continues where it stopped.

Two things are kept under the run's state folder (``<out>/.state`` by default):

* each chunk's perturbed suite (:class:`SavedSuite`): one Arrow file per (test, level, seed)
  cell, written as the cells come from the engine into a temporary folder renamed once every
  cell is in it (a half-written suite is never read back), and read back one cell at a time, so
  memory holds one cell of a chunk, never its whole suite. A chunked run removes a chunk's suite
  once every metric scored it (its scores are kept): the state then holds the scores and the
  suite of the chunk in progress, not every perturbed text of the data (a resumed chunked run
  perturbs its finished chunks again, which reads their scores back, scoring nothing twice);
* each metric's scores per (gold | test, level, seed) cell, keyed by the scorer's identity and
  the exact texts scored, one SQLite transaction per cell.

Keys are content hashes, so a changed input, seed or metric setting never reuses a stale entry,
and the final results of a resumed run are those of an uninterrupted one.

A damaged file is handled by what it holds:

* ``state.sqlite`` holds the scores already finished, which may have cost hours of model time:
  it is the user's work, never moved or deleted. A damaged one stops the run before any work
  with a message naming it and what to delete to start over
  (:class:`~blindspot.sqlite_utils.DamagedStoreError`, ``derived=False``).
* a suite is derived: the same gold data, tests, seeds and code make it again in the time of
  one perturbation pass. One with an unreadable cell (a truncated ``.arrow``), a missing cell,
  or a cell with the wrong number of rows is moved aside to ``<folder>.corrupt-<n>`` with one
  warning, and made again.
"""

from __future__ import annotations

import hashlib
import json
import math
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa

from blindspot.faults import RESUME, out_of_space_as
from blindspot.sqlite_utils import KeyValueStore, move_aside, warn


def content_key(*parts: Any) -> str:
    """A sha256 of JSON-encoded parts."""
    payload = json.dumps(parts, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def _encode(scores: Sequence[float | None]) -> list[float | None]:
    return [None if s is None or math.isnan(s) else float(s) for s in scores]


def _decode(scores: Sequence[float | None]) -> list[float]:
    return [float("nan") if s is None else float(s) for s in scores]


#: the file a suite saved in the old layout (``datasets.Dataset.save_to_disk``) holds
OLD_SUITE_MARK = "dataset_info.json"


class RunState:
    """The run's resumable state in ``folder``."""

    def __init__(self, folder: Path | str):
        self.folder = Path(folder)
        with out_of_space_as(self.folder, "the run state"):
            self.folder.mkdir(parents=True, exist_ok=True)
            self._cells = KeyValueStore(self.folder / "state.sqlite", "cells_v1", derived=False)
        self._drop_old_suites()
        #: the cells of this run kept here (found from an earlier run, or stored now), and how
        #: many the run has in all (each dataset adds its own as it starts)
        self._kept: set[str] = set()
        self.total = 0

    @property
    def kept(self) -> int:
        """How many of this run's cells the state keeps."""
        return len(self._kept)

    def kept_text(self) -> str:
        """What the state keeps: "5 of 20 cells kept in out/.state"."""
        return f"{self.kept} of {self.total} cells kept in {self.folder}"

    def resume_text(self) -> str:
        """What the state keeps and how to go on."""
        return f"{self.kept_text()}; {RESUME}"

    def _drop_old_suites(self) -> None:
        """Delete suites saved in the layout before one file per cell (a ``datasets`` folder
        with its ``dataset_info.json``): their keys no longer match any run, so nothing would
        read them again, and they can hold every perturbed text of a dataset."""
        suites = self.folder / "suites"
        if suites.is_dir():
            for folder in suites.iterdir():
                if (folder / OLD_SUITE_MARK).is_file():
                    shutil.rmtree(folder, ignore_errors=True)

    # -- scores ----------------------------------------------------------------------------------

    def get_scores(self, key: str) -> dict[str, Any] | None:
        """``{"scores": [...]}`` or ``{"corpus": x}`` stored for ``key``, or None."""
        found = self._cells.get_many([key])
        if key not in found:
            return None
        value = json.loads(found[key])
        self._kept.add(key)
        if "scores" in value:
            value["scores"] = _decode(value["scores"])
        if "corpus" in value:
            value["corpus"] = float("nan") if value["corpus"] is None else value["corpus"]
        return value

    def put_scores(self, key: str, scores: Sequence[float] | None = None,
                   corpus: float | None = None) -> None:
        value = {"scores": _encode(scores)} if scores is not None else {
            "corpus": _encode([corpus])[0]}
        self._cells.put_many([(key, json.dumps(value))])
        self._kept.add(key)

    def get_record(self, key: str) -> dict[str, Any] | None:
        """A JSON record stored for ``key`` (e.g. a metric's sanity anchors), or None."""
        found = self._cells.get_many([key])
        return json.loads(found[key]) if key in found else None

    def put_record(self, key: str, value: dict[str, Any]) -> None:
        self._cells.put_many([(key, json.dumps(value, allow_nan=False))])

    def mark_made(self, keys: Sequence[str]) -> None:
        """Mark score cache keys as computed by this run (not read from the score cache): a
        metric that pays per call (a judge) reports them as calls made, a resume included."""
        self._cells.put_many([(f"made:{key}", "1") for key in keys])

    def made(self, keys: Sequence[str]) -> set[str]:
        """Those of ``keys`` that this run computed (:meth:`mark_made`)."""
        return {key.removeprefix("made:")
                for key in self._cells.get_many([f"made:{key}" for key in keys])}

    # -- perturbed suites ------------------------------------------------------------------------

    def suite_path(self, key: str) -> Path:
        return self.folder / "suites" / key[:32]

    def load_suite(self, key: str, cells: int, rows: int) -> SavedSuite | None:
        """The saved suite, or None when it was never completed or is damaged (a cell
        unreadable, missing, or not ``rows`` rows long): a damaged suite is moved aside with a
        warning, to be made again. Every cell is read once here, one at a time."""
        path = self.suite_path(key)
        if not path.is_dir():
            return None
        suite = SavedSuite(path, cells)
        try:
            lengths = [suite.rows(index) for index in range(cells)]
        except (OSError, pa.ArrowException) as error:
            problem = f"it cannot be read ({error})"
        else:
            wrong = [n for n in lengths if n != rows]
            if not wrong:
                return suite
            problem = f"a cell has {wrong[0]} rows, not {rows}"
        aside = move_aside(path)
        warn(f"the saved perturbed suite {path} was damaged ({problem}); moved it to "
             f"{aside.name} and made the suite again")
        return None

    def suite_writer(self, key: str) -> SuiteWriter:
        """A writer of the suite ``key``, cell by cell, saved atomically by its ``finish``."""
        return SuiteWriter(self.suite_path(key))


#: the columns of a perturbed cell a run reads (``perturbations.dataset.OUTPUT_SCHEMA`` less
#: the test, level and seed, which the plan knows)
SUITE_COLUMNS = ("perturbed", "applied", "noise_ratio")
_COMPRESSION = pa.ipc.IpcWriteOptions(compression="zstd")


def _cell_file(folder: Path, index: int) -> Path:
    return folder / f"cell-{index}.arrow"


class SavedSuite:
    """A perturbed suite in the run state: one Arrow file per cell, each read when asked."""

    def __init__(self, path: Path, cells: int) -> None:
        self.path, self.cells = path, cells

    def _table(self, index: int) -> pa.Table:
        with pa.OSFile(str(_cell_file(self.path, index))) as source:  # read, not mapped
            return pa.ipc.open_file(source).read_all()

    def rows(self, index: int) -> int:
        """How many rows cell ``index`` has (reading it whole: a damaged file raises)."""
        return self._table(index).num_rows

    def cell(self, index: int) -> dict[str, list[Any]]:
        """Cell ``index``'s :data:`SUITE_COLUMNS` as Python lists."""
        return self._table(index).select(list(SUITE_COLUMNS)).to_pydict()

    def remove(self) -> None:
        """Delete the suite (its cells' scores, kept apart, stay)."""
        shutil.rmtree(self.path, ignore_errors=True)


class SuiteWriter:
    """Cells written as they come (any order) into ``<path>.partial``, renamed into place by
    :meth:`finish` once every cell is there."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.partial = path.with_name(path.name + ".partial")
        shutil.rmtree(self.partial, ignore_errors=True)
        with self._space():
            self.partial.mkdir(parents=True)

    def _space(self) -> Any:
        return out_of_space_as(self.path.parent.parent, f"a perturbed suite ({self.partial})")

    def add(self, index: int, table: pa.Table) -> None:
        kept = table.select(list(SUITE_COLUMNS))
        with self._space(), pa.OSFile(str(_cell_file(self.partial, index)), "wb") as sink, \
                pa.ipc.new_file(sink, kept.schema, options=_COMPRESSION) as writer:
            writer.write_table(kept)

    def finish(self, cells: int) -> SavedSuite:
        missing = [i for i in range(cells) if not _cell_file(self.partial, i).is_file()]
        if missing:
            raise RuntimeError(f"the perturbed suite lacks cells {missing[:5]}")
        shutil.rmtree(self.path, ignore_errors=True)
        self.partial.rename(self.path)
        return SavedSuite(self.path, cells)


__all__ = ["SUITE_COLUMNS", "RunState", "SavedSuite", "SuiteWriter", "content_key"]
