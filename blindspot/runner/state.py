"""What a run has already computed, so a killed run continues where it stopped.

Two things are kept under the run's state folder (``<out>/.state`` by default):

* each dataset's perturbed suite, saved once it is complete (written to a temporary folder and
  renamed, so a half-written suite is never read back);
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
  one perturbation pass. An unreadable one (a truncated ``.arrow``, bad JSON) or one with the
  wrong number of rows is moved aside to ``<folder>.corrupt-<n>`` with one warning, and made
  again.
"""

from __future__ import annotations

import hashlib
import json
import math
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import datasets
import pyarrow
from datasets.utils.logging import disable_progress_bar, enable_progress_bar, is_progress_bar_enabled

from blindspot.sqlite_utils import KeyValueStore, move_aside, warn


def content_key(*parts: Any) -> str:
    """A sha256 of JSON-encoded parts."""
    payload = json.dumps(parts, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def _encode(scores: Sequence[float | None]) -> list[float | None]:
    return [None if s is None or math.isnan(s) else float(s) for s in scores]


def _decode(scores: Sequence[float | None]) -> list[float]:
    return [float("nan") if s is None else float(s) for s in scores]


class RunState:
    """The run's resumable state in ``folder``."""

    def __init__(self, folder: Path | str):
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self._cells = KeyValueStore(self.folder / "state.sqlite", "cells_v1", derived=False)

    # -- scores ----------------------------------------------------------------------------------

    def get_scores(self, key: str) -> dict[str, Any] | None:
        """``{"scores": [...]}`` or ``{"corpus": x}`` stored for ``key``, or None."""
        found = self._cells.get_many([key])
        if key not in found:
            return None
        value = json.loads(found[key])
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

    def get_record(self, key: str) -> dict[str, Any] | None:
        """A JSON record stored for ``key`` (e.g. a metric's sanity anchors), or None."""
        found = self._cells.get_many([key])
        return json.loads(found[key]) if key in found else None

    def put_record(self, key: str, value: dict[str, Any]) -> None:
        self._cells.put_many([(key, json.dumps(value, allow_nan=False))])

    # -- perturbed suites ------------------------------------------------------------------------

    def suite_path(self, key: str) -> Path:
        return self.folder / "suites" / key[:32]

    def load_suite(self, key: str, rows: int | None = None) -> Any | None:
        """The saved suite, or None when it was never completed or is damaged (unreadable, or
        not ``rows`` rows long): a damaged suite is moved aside with a warning, to be made again.
        """
        path = self.suite_path(key)
        if not (path / "dataset_info.json").is_file():
            return None
        try:
            suite = datasets.load_from_disk(str(path), keep_in_memory=True)
        except (OSError, ValueError, pyarrow.ArrowException) as error:
            problem = f"it cannot be read ({error})"
        else:
            if rows is None or len(suite) == rows:
                return suite
            problem = f"it has {len(suite)} rows, not {rows}"
        aside = move_aside(path)
        warn(f"the saved perturbed suite {path} was damaged ({problem}); moved it to "
             f"{aside.name} and made the suite again")
        return None

    def save_suite(self, key: str, suite: Any) -> None:
        """Save atomically: a temporary folder renamed into place."""
        path = self.suite_path(key)
        partial = path.with_name(path.name + ".partial")
        shutil.rmtree(partial, ignore_errors=True)
        shown = is_progress_bar_enabled()
        disable_progress_bar()  # a bar for a sub-second save is noise next to the run's own bars
        try:
            suite.save_to_disk(str(partial))
        finally:
            if shown:
                enable_progress_bar()
        shutil.rmtree(path, ignore_errors=True)
        partial.rename(path)
