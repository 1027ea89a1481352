"""What a run reads of one dataset, and what it keeps of it while the rows pass.

Every run reads a dataset as a :class:`DataSource`: its planned suite, its column roles, and its
rows as :class:`Chunk` s. A run on data loaded whole reads one chunk (every row);
``--chunk-size N`` reads a file ``N`` rows at a time (:mod:`blindspot.runner.stream`). The same
code (:func:`blindspot.runner.pipeline.run_dataset`) perturbs and scores each chunk and keeps, per
(metric, cell), a :class:`Tally` in memory and the per-row values in a :class:`Spill` on disk,
from which every test is judged at the end: that is why a chunked run and a whole one write
the same ``results.json``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from blindspot.faults import out_of_space_as
from blindspot.judging import nan_message, nan_rows
from blindspot.perturbations.dataset import SuitePlan
from blindspot.runner.curves import Candidate


@dataclass
class Chunk:
    """Consecutive rows of a dataset in their roles; ``offset`` is the first row's position."""

    offset: int
    texts: list[Any]
    ids: list[Any]
    references: list[Any] | None
    sources: list[Any] | None


@dataclass
class DataSource:
    """One dataset as a run reads it: what is known before its rows, then the rows in chunks."""

    name: str
    roles: dict[str, str | None]
    column_names: list[str]
    resources: dict[str, Any]
    plan: SuitePlan
    #: how many chunks :attr:`chunks` yields (for the progress bars)
    chunk_count: int
    chunks: Iterator[Chunk]
    #: the dataset's fingerprint, read once every chunk was read
    fingerprint: Callable[[], str]
    #: True when one chunk holds every row: only then may a test draw a pool from the whole data,
    #: a metric weight words by idf over every reference, or a metric score the corpus at once
    whole: bool = True
    #: the gold texts a pool test draws from, and the references an idf weighting counts (whole
    #: data only)
    pool: list[Any] | None = None
    idf_references: list[Any] | None = None


class Spill:
    """Per-row values appended chunk by chunk to one raw file per name, read back whole."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def append(self, name: str, values: Sequence[Any] | np.ndarray, dtype: Any) -> None:
        data = np.asarray(values, dtype=dtype).tobytes()
        written = "the run's per-row values in a temporary folder there"
        with out_of_space_as(self.folder.parent, written, len(data)), \
                open(self.folder / name, "ab") as fh:
            fh.write(data)

    def load(self, name: str, dtype: Any) -> np.ndarray:
        return np.fromfile(self.folder / name, dtype=dtype)


@dataclass
class Tally:
    """What a run keeps in memory of one metric on one cell (or on the gold rows) while the
    chunks pass: an error, the NaN count with the first ids, the corpus score of a corpus-level
    metric, and the few worst-example candidates with their texts."""

    error: str | None = None
    values: int = 0
    n_nan: int = 0
    nan_ids: list[Any] = field(default_factory=list)
    corpus: float | None = None
    worst: list[Candidate] = field(default_factory=list)
    #: the lowest and highest finite score counted (equal: the metric gave one score to all)
    low: float = math.inf
    high: float = -math.inf

    def count(self, scores: Sequence[float], ids: Sequence[Any]) -> None:
        bad = nan_rows(scores)
        values = np.asarray(scores, dtype=np.float64)
        finite = values[np.isfinite(values)]
        if finite.size:
            self.low = min(self.low, float(finite.min()))
            self.high = max(self.high, float(finite.max()))
        self.values += len(scores)
        self.n_nan += len(bad)
        self.nan_ids += [ids[i] for i in bad[: 5 - len(self.nan_ids)]]

    def problem(self) -> str | None:
        """The error (a failure, or NaN scores named by their first ids), or None."""
        return self.error or (nan_message(self.nan_ids, self.n_nan, self.values)
                              if self.n_nan else None)


__all__ = ["Chunk", "DataSource", "Spill", "Tally"]
