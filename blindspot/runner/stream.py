"""Streamed runs of the main job: any number of rows in bounded memory on one machine.

``blindspot run --chunk-size N`` (``run_blindspot(..., chunk_size=N)``, the rank protocol's
``chunk_size`` option) reads a local JSON-lines or Parquet file ``N`` rows at a time. Each chunk
is parsed, perturbed for every (test, level, seed) cell of the suite and scored with every
metric (through the score cache, as always), then dropped. What stays in memory is one chunk and,
per (metric, cell), a NaN count and the few worst-example candidates with their texts. Every
per-row number the judge needs (each metric's gold and cell scores, each cell's noise ratios and
applied flags) is appended to one float64 (or bool) file per (metric, cell) in a temporary folder
under the run's state folder; at the end each metric is judged one test at a time, from that
test's files only, by the very code of the in-memory run (:func:`~blindspot.runner.entries.
judge_metric`). Every test draws its randomness per row (seed, test, level, row id), so chunking
changes no perturbation, and ``results.json`` and the report are byte-identical to those of the
in-memory run on the same data, seeds and metrics (tested on a CNN/DM slice with chunks that do
not divide the rows).

What cannot be streamed, and what happens instead:

* tests that draw other rows from the whole dataset (``requires=("pool",)``: injection,
  random_response, random_sentence_addition, sentence_replacement) are skipped, with the reason in
  ``skipped_tests`` (printed with the summary). A first pass could collect the pool, but the pool
  is every gold text: memory would grow with the rows again.
* the open-ended n-gram corpus that the in-memory run builds from all references is not built
  (same reason); frequent_ngram then needs ``--ngram-corpus``, else it is skipped with the reason.
* corpus-level metrics (MAUVE), and metrics that weight words by idf over all references
  (``bertscore.idf=true``), are refused with an error naming the metric, before any model loads.
* the data must be a local ``.jsonl`` or ``.parquet`` file; any other source (a Hub id, ``demo``,
  a Dataset, csv) is refused with a clear error; so is ``--engine ray``. ``--num-proc N``
  parses and perturbs each chunk in N processes (cells come back in plan order, at most 2N in
  flight, so memory stays one chunk's).

Limits: a streamed run does not resume (its folder of per-row files is removed at the end,
finished or not; the score cache still makes a rerun cheap). An error message that names a row
by its position (e.g. ``predictions[3] must be a string``) counts within the chunk. Neural
metrics whose scores depend on their batch's other texts (padding, BERTScore's embedding cache)
batch per chunk, so their last bits may differ from the in-memory run. Values read from a
JSON-lines file are the JSON values themselves; the in-memory run reads them through Arrow,
which may convert a column of mixed ints and floats, so such a column's fingerprint differs.

    >>> check_chunk_size(500)
    500
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sys
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow.parquet as pq

from blindspot import defaults
from blindspot.io import check_readable, json_rows, unreadable
from blindspot.judging import gold_problem, nan_message, nan_rows
from blindspot.parsing import get_parser
from blindspot.perturbations.base import REGISTRY
from blindspot.perturbations.catalogue import suite_tests
from blindspot.perturbations.dataset import (
    SuiteJob,
    SuitePlan,
    build_suite_tests,
    perturb_in_order,
    plan_suite,
    suite_state,
)
from blindspot.progress import progress_bar
from blindspot.report.schema import DatasetResult, MetricResult
from blindspot.runner.data import check_role_texts, describe_resources, machine_resources, resolve_columns
from blindspot.runner.entries import (
    categories,
    error_text,
    fail_all,
    gold_summary,
    judge_metric,
    metric_entry,
    missing_input,
)
from blindspot.runner.judge import Candidate, Cell, Gold, keep_worst, worst_candidates
from blindspot.runner.scorers import _idf_on, _named_model, scorer_for, signed_scores
from blindspot.scoring.anchors import ANCHOR_ROWS, sanity_anchors
from blindspot.scoring.base import SCORERS
from blindspot.seeding import text_row_id

DEFAULT_CHUNK_SIZE = defaults.CHUNK_SIZE
STREAM_FORMATS = (".jsonl", ".parquet")

#: why a test that needs a resource drawn from the whole dataset is skipped by a streamed run
UNSTREAMED = {
    "pool": "draws other rows' texts from the whole dataset (a pool), which a streamed run "
            "(--chunk-size) never holds; run without --chunk-size to include it",
}


def check_chunk_size(chunk_size: Any) -> int:
    """``chunk_size`` as a whole number of rows, at least 1, or a clear error."""
    if isinstance(chunk_size, bool) or not isinstance(chunk_size, int) or chunk_size < 1:
        raise ValueError(f"--chunk-size must be a whole number of rows, at least 1; got "
                         f"{chunk_size!r}")
    return chunk_size


def stream_path(source: Any) -> Path:
    """The local file a streamed run reads, or a clear error for any other kind of source."""
    path = Path(source) if isinstance(source, (str, Path)) else None
    if path is None or path.suffix.lower() not in STREAM_FORMATS:
        shown = str(source) if isinstance(source, (str, Path)) else type(source).__name__
        raise ValueError(f"--chunk-size streams a local .jsonl or .parquet file, not {shown!r}; "
                         "convert the data to one (e.g. Dataset.to_json('rows.jsonl')) or run "
                         "without --chunk-size")
    check_readable(path)
    return path


def iter_chunks(path: str | Path, chunk_size: int) -> Iterator[dict[str, list[Any]]]:
    """The file's rows ``chunk_size`` at a time, as columns; never the whole file at once."""
    path = Path(path)
    check_readable(path)
    check_chunk_size(chunk_size)
    if path.suffix.lower() == ".parquet":
        try:
            table = pq.ParquetFile(path)
        except Exception as error:  # noqa: BLE001  (any reader error: the file is unreadable)
            raise unreadable(path, "parquet", error) from error
        for batch in table.iter_batches(batch_size=chunk_size):
            yield batch.to_pydict()
        return
    rows: list[dict[str, Any]] = []
    for row in json_rows(path):
        rows.append(row)
        if len(rows) == chunk_size:
            yield _columns(rows)
            rows = []
    if rows:
        yield _columns(rows)


def _columns(rows: list[dict[str, Any]]) -> dict[str, list[Any]]:
    names = list(dict.fromkeys(k for row in rows for k in row))
    return {name: [row.get(name) for row in rows] for name in names}


def count_rows(path: Path) -> int:
    """How many rows the file has (for the progress bar), without parsing them."""
    if path.suffix.lower() == ".parquet":
        return pq.ParquetFile(path).metadata.num_rows
    with open(path, "rb") as fh:
        return sum(1 for line in fh if line.strip())


def check_streamable(specs: Sequence[Any], settings: Any) -> None:
    """Refuse, before any data or model is loaded, what a streamed run cannot do."""
    if settings.engine != "local":
        raise ValueError("--chunk-size streams on this machine; it cannot be combined with "
                         f"--engine {getattr(settings.engine, 'name', settings.engine)}")
    for spec in specs:
        registered = SCORERS.get(spec.metric, None) if spec.module is None else None
        if registered is not None and registered.corpus_level:
            raise ValueError(f"metric {spec.name!r} is corpus-level: its score needs every row "
                             "at once and cannot be streamed; run it without --chunk-size")
        if registered is not None and _idf_on(spec.metric, _named_model(spec.metric,
                                                                        spec.options)):
            raise ValueError(f"metric {spec.name!r} weights words by idf over all the "
                             "references, which a streamed run never holds; switch it off "
                             f"(--option {spec.metric}.idf=false) or run without --chunk-size")


def streamed_plan(plan: Any, resources: Mapping[str, Any], order: Sequence[str]) -> Any:
    """``plan`` without the tests that draw from the whole dataset (skipped, with the reason)."""
    dropped = {item.test: UNSTREAMED[need] for item in plan.items
               for need in REGISTRY[item.test].requires
               if need in UNSTREAMED and resources.get(need) is None}
    skipped = {**plan.skipped, **dropped}
    return SuitePlan([i for i in plan.items if i.test not in dropped],
                     {t: skipped[t] for t in order if t in skipped})


class _Spill:
    """Per-row values appended chunk by chunk to one raw file per name, read back whole."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def append(self, name: str, values: Sequence[Any], dtype: Any) -> None:
        with open(self.folder / name, "ab") as fh:
            fh.write(np.asarray(values, dtype=dtype).tobytes())

    def load(self, name: str, dtype: Any) -> np.ndarray:
        return np.fromfile(self.folder / name, dtype=dtype)


class _Fingerprint:
    """:meth:`GoldData.fingerprint` of a file read chunk by chunk: each used column's values go,
    JSON-encoded, to a file of their own, hashed in the order of the whole-table JSON at the end."""

    def __init__(self, folder: Path, roles: Mapping[str, str | None]) -> None:
        self.folder, self.roles = folder, dict(roles)
        self.used = sorted(dict.fromkeys(c for c in roles.values() if c))
        self.started: set[str] = set()

    def add(self, chunk: Mapping[str, list[Any]]) -> None:
        for k, name in enumerate(self.used):
            parts = [json.dumps(v, sort_keys=True, ensure_ascii=False) for v in chunk[name]]
            text = (", " if name in self.started else "") + ", ".join(parts)
            self.started.add(name)
            with open(self.folder / f"column-{k}.json", "a", encoding="utf-8") as fh:
                fh.write(text)

    def hexdigest(self) -> str:
        digest = hashlib.sha256()
        digest.update(("[" + json.dumps(self.roles, sort_keys=True, ensure_ascii=False)
                       + ", {").encode("utf-8"))
        for k, name in enumerate(self.used):
            head = (", " if k else "") + json.dumps(name, ensure_ascii=False) + ": ["
            digest.update(head.encode("utf-8"))
            with open(self.folder / f"column-{k}.json", "rb") as fh:
                for block in iter(lambda: fh.read(1 << 20), b""):
                    digest.update(block)
            digest.update(b"]")
        digest.update(b"}]")
        return digest.hexdigest()


@dataclass
class _Tally:
    """What a streamed run keeps in memory of one metric on one cell (or on the gold rows)."""

    error: str | None = None
    n_nan: int = 0
    nan_ids: list[Any] = field(default_factory=list)
    worst: list[Candidate] = field(default_factory=list)

    def count_nan(self, scores: Sequence[float], ids: Sequence[Any]) -> None:
        bad = nan_rows(scores)
        self.n_nan += len(bad)
        self.nan_ids += [ids[i] for i in bad[: 5 - len(self.nan_ids)]]

    def problem(self, rows: int) -> str | None:
        """The cell's error, as the in-memory run reports it, or None."""
        return self.error or (nan_message(self.nan_ids, self.n_nan, rows) if self.n_nan else None)


class _StreamedMetric:
    """One metric of a streamed run: its scorer and its tallies (gold and each cell)."""

    def __init__(self, index: int, spec: Any, roles: Mapping[str, str | None],
                 column_names: Sequence[str], settings: Any) -> None:
        self.index, self.spec, self.settings = index, spec, settings
        self.scorer: Any = None
        self.error: str | None = None
        self.gold = _Tally()
        self.cells: dict[int, _Tally] = {}
        #: the first gold rows (texts, references, sources), for the anchors of the report
        self.anchor_rows: list[tuple[Any, Any, Any]] = []
        try:
            self.scorer = scorer_for(spec, None)  # idf over all references was refused before
        except Exception as error:  # reported in the metric's entry, as the in-memory run does
            self.error = f"could not build the metric: {error_text(error)}"
            return
        if self.scorer.corpus_level:  # an evaluate module: known once it is loaded
            raise ValueError(f"metric {spec.name!r} is corpus-level: its score needs every row "
                             "at once and cannot be streamed; run it without --chunk-size")
        self.error = missing_input(spec, self.scorer, roles, column_names)

    def score(self, texts: list[str], references: Any, sources: Any) -> list[float]:
        """Direction-adjusted per-row scores (higher = better)."""
        return signed_scores(self.spec, self.scorer, texts, references, sources,
                             self.settings.batch_size)

    def file(self, cell: int | None) -> str:
        return f"m{self.index}-{'gold' if cell is None else cell}.f64"


@dataclass
class _Chunk:
    """One chunk's rows in their roles."""

    offset: int
    texts: list[Any]
    ids: list[Any]
    references: list[Any] | None
    sources: list[Any] | None


def _chunk_rows(chunk: Mapping[str, list[Any]], roles: Mapping[str, str | None],
                offset: int, file: str) -> _Chunk:
    check_role_texts(chunk, roles, file, first_row=offset + 1)
    texts = chunk[roles["hypothesis"] or ""]  # a loaded dataset always names its hypothesis
    ids = chunk[roles["id"]] if roles["id"] else [text_row_id(t) for t in texts]
    return _Chunk(offset, texts, ids, chunk[roles["references"]] if roles["references"] else None,
                  chunk[roles["source"]] if roles["source"] else None)


def _score_gold(metric: _StreamedMetric, rows: _Chunk, spill: _Spill) -> list[float] | None:
    try:
        scores = metric.score(list(rows.texts), rows.references, rows.sources)
    except Exception as error:  # the metric fails on the gold rows: nothing else is judged
        metric.error = gold_problem(error_text(error))
        return None
    metric.gold.count_nan(scores, rows.ids)
    spill.append(metric.file(None), scores, np.float64)
    missing = ANCHOR_ROWS - len(metric.anchor_rows)
    if missing > 0:
        metric.anchor_rows += list(zip(rows.texts, rows.references or [None] * len(rows.texts),
                                       rows.sources or [None] * len(rows.texts), strict=True))[:missing]
    return scores


def _score_cell(metric: _StreamedMetric, index: int, columns: Mapping[str, list[Any]],
                gold_scores: list[float], rows: _Chunk, spill: _Spill) -> None:
    tally = metric.cells.setdefault(index, _Tally())
    if tally.error:
        return
    try:
        scores = metric.score(columns["perturbed"], rows.references, rows.sources)
    except Exception as error:  # a metric failing on a test's rows is reported, not fatal
        tally.error = error_text(error)
        return
    tally.count_nan(scores, rows.ids)
    spill.append(metric.file(index), scores, np.float64)
    k = metric.settings.worst_examples
    if k > 0:
        found = worst_candidates(scores, gold_scores, columns["applied"], k, rows.ids,
                                 rows.texts, columns["perturbed"], rows.offset)
        tally.worst = keep_worst(tally.worst, found, k)


def _stream_chunk(rows: _Chunk, plan: Any, perturbations: dict[str, Any],
                  metrics: list[_StreamedMetric], spill: _Spill, num_proc: int | None) -> None:
    """Perturb one chunk for every cell (in ``num_proc`` processes) and score it with every
    metric, cell by cell in plan order; spill the rows."""
    live = [m for m in metrics if m.error is None]
    gold = {m.index: _score_gold(m, rows, spill) for m in live}
    state = suite_state(plan, perturbations, list(rows.texts), list(rows.ids), rows.sources,
                        num_proc)
    for index, columns in perturb_in_order(SuiteJob(plan, state), num_proc):
        spill.append(f"noise-{index}.f64", columns["noise_ratio"], np.float64)
        spill.append(f"applied-{index}.bool", columns["applied"], np.bool_)
        for metric in live:
            gold_scores = gold[metric.index]  # None only when the gold scoring failed (an error)
            if metric.error is None and gold_scores is not None:
                _score_cell(metric, index, columns, gold_scores, rows, spill)


def _judge(metric: _StreamedMetric, plan: Any, rows: int, spill: _Spill,
           settings: Any) -> MetricResult:
    """The metric's results entry, judged one test at a time from the spilled rows."""
    tests = list(dict.fromkeys(item.test for item in plan.items))
    test_categories = categories(tests)
    entry = metric_entry(metric.spec, metric.scorer)
    problem = metric.gold.problem(rows) if metric.error is None else None
    if problem is not None and metric.gold.n_nan:
        metric.error = gold_problem(problem)
    if metric.error is not None:
        fail_all(entry, tests, test_categories, metric.error)
        return entry
    gold = Gold([], [], spill.load(metric.file(None), np.float64))
    entry.gold = gold_summary(gold)
    texts, references, sources = (list(c) for c in zip(*metric.anchor_rows, strict=True))
    entry.anchors = sanity_anchors(metric.scorer, metric.spec, texts,
                                   None if references[0] is None else references,
                                   None if sources[0] is None else sources)

    def cells_of(test: str) -> list[Cell]:
        cells = []
        for index, item in enumerate(plan.items):
            if item.test != test:
                continue
            tally = metric.cells[index]
            problem = tally.problem(rows)
            cells.append(Cell(item.test, str(item.level), int(item.seed),
                              noise_ratios=spill.load(f"noise-{index}.f64", np.float64),
                              applied=spill.load(f"applied-{index}.bool", np.bool_),
                              perturbed=[], error=problem, worst=tally.worst,
                              scores=None if tally.error else spill.load(metric.file(index),
                                                                         np.float64)))
        return cells

    judge_metric(entry, gold, ((test, cells_of(test)) for test in tests), test_categories,
                 settings.judge())
    return entry


def stream_dataset(source: Any, specs: Sequence[Any], settings: Any,
                   columns: Mapping[str, str | None] | None, chunk_size: int,
                   state_folder: Path) -> DatasetResult:
    """The results entry of one data file, streamed ``chunk_size`` rows at a time."""
    path = stream_path(source)
    chunks = iter_chunks(path, chunk_size)
    first = next(chunks, None)
    if first is None:
        raise ValueError(f"dataset {path.name!r} has no rows; nothing to perturb or score")
    roles = resolve_columns(_Names(list(first)), columns)
    resources = machine_resources(settings.resources)
    plan = streamed_plan(plan_suite(settings.tests, settings.task, settings.seeds,
                                    settings.levels, resources, has_source=bool(roles["source"])),
                         resources, suite_tests(settings.tests, settings.task))
    perturbations = build_suite_tests(plan, None, resources, settings.task)
    for perturbation in perturbations.values():  # once: every chunk's workers fork from here
        perturbation.preload()
    metrics = [_StreamedMetric(i, spec, roles, list(first), settings)
               for i, spec in enumerate(specs)]
    state_folder.mkdir(parents=True, exist_ok=True)
    folder = Path(tempfile.mkdtemp(prefix="stream-", dir=state_folder))
    try:
        spill, fingerprint = _Spill(folder), _Fingerprint(folder, roles)
        bar = progress_bar(total=count_rows(path), desc="streaming", unit="row",
                   disable=not settings.progress, file=sys.stderr,
                   mininterval=0.2 if sys.stderr.isatty() else 10)
        rows = 0
        with bar:
            for chunk in _chain(first, chunks):
                fingerprint.add(chunk)
                part = _chunk_rows(chunk, roles, rows, path.name)
                _stream_chunk(part, plan, perturbations, metrics, spill, settings.num_proc)
                get_parser().forget()  # the disk cache keeps the parses; memory stays bounded
                rows += len(part.texts)
                bar.update(len(part.texts))
        entry = DatasetResult(settings.task, rows, fingerprint.hexdigest(), dict(roles),
                              describe_resources(resources), dict(plan.skipped),
                              {m.spec.name: _judge(m, plan, rows, spill, settings)
                               for m in metrics})
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return entry


@dataclass
class _Names:
    """What :func:`resolve_columns` reads of a dataset: its column names."""

    column_names: list[str]


def _chain(first: dict[str, list[Any]], rest: Iterator[dict[str, list[Any]]]
           ) -> Iterator[dict[str, list[Any]]]:
    yield first
    yield from rest


__all__ = ["DEFAULT_CHUNK_SIZE", "check_chunk_size", "check_streamable", "iter_chunks",
           "stream_dataset", "stream_path"]
