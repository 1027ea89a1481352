"""The main job: perturb gold data, score it with each metric, judge every test, report.

The matrix is datasets x tests x levels x seeds x metrics. One code runs it for every kind of run:
a dataset is read as chunks of rows (:mod:`blindspot.runner.chunks`; data loaded whole is one
chunk, ``chunk_size=N`` streams a file ``N`` rows at a time, :mod:`blindspot.runner.stream`), and
each chunk is perturbed for every cell of the planned suite (on the run's engine: ``num_proc``
local processes or Ray), then scored with every metric (:class:`~blindspot.runner.metric_run.
MetricRun`: run state, score cache, the engine when it computes ahead). Per-row values go to a
temporary folder, and every test is judged from there at the end. Each chunk's perturbed cells
go to the run state as they are made and are read back one at a time (memory holds one cell, not
the chunk's suite); each cell's scores are kept there too, so a killed run resumes where it
stopped and ends with the same ``results.json`` as an uninterrupted one, whatever its chunk size
(a chunked run removes a chunk's perturbed cells once it is scored, and a resumed one perturbs
its finished chunks again to read their scores back).
"""

from __future__ import annotations

import math
import signal
import sys
import tempfile
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from functools import cached_property, partial
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from blindspot import defaults
from blindspot.faults import (
    OutOfSpaceError,
    RunInterrupted,
    ScorerUnavailable,
    WorkerLost,
    out_of_space_as,
    terminate_as_interrupt,
)
from blindspot.forking import check_num_proc, fit_threads_to_load
from blindspot.judging import gold_problem
from blindspot.parsing import get_parser
from blindspot.paths import cache_dir
from blindspot.perturbations.dataset import (
    SuiteItem,
    SuiteJob,
    SuitePlan,
    build_suite_tests,
    plan_suite,
    suite_state,
)
from blindspot.perturbations.perturbation import REGISTRY, Perturbation, canonical_task
from blindspot.perturbations.suites import suite_tests
from blindspot.progress import progress_bar, restart_clock
from blindspot.report.schema import DatasetResult, MetricResult, RunResult
from blindspot.runner.chunks import Chunk, DataSource, Spill, Tally
from blindspot.runner.curves import Cell, Gold, JudgeSettings, keep_worst, worst_candidates
from blindspot.runner.data import GoldData, default_resources, describe_resources, load_gold_data
from blindspot.runner.engines import ENGINES, Engine, engine_options, get_engine
from blindspot.runner.entries import (
    categories,
    error_text,
    fail_all,
    gold_summary,
    judge_metric,
    metric_entry,
    missing_input,
    tool,
)
from blindspot.runner.metric_run import Inputs, MetricRun, announce
from blindspot.runner.metric_spec import MetricSpec, resolve_metrics
from blindspot.runner.state import RunState, SavedSuite, content_key
from blindspot.runner.stream import (
    check_chunk_size,
    check_streamable,
    corpus_level_refusal,
    stream_path,
    streamed_source,
)
from blindspot.scoring.anchors import ANCHOR_COUNT, ANCHOR_ROWS, uninformative
from blindspot.seeding import parse_seeds
from blindspot.sqlite_utils import warn

DEFAULT_TESTS = defaults.TESTS
#: in a suite's key: suites saved in another layout are never read as this one
SUITE_FORMAT = "arrow-cells-1"
#: how many times a chunk is perturbed when a ``num_proc`` worker process dies under it
WORKER_ATTEMPTS = 3
DEFAULT_SEEDS = defaults.SEEDS
T = TypeVar("T")


@dataclass
class RunSettings:
    """Everything about a run except its data and metrics."""

    task: str = defaults.TASK
    tests: str | Sequence[str] = defaults.TESTS
    seeds: Sequence[int] = defaults.SEEDS
    levels: Mapping[str, Sequence[Any]] | None = None
    resources: Mapping[str, Any] = field(default_factory=dict)
    noise_cap: float = defaults.NOISE_CAP
    tolerance: float = defaults.TOLERANCE
    worst_examples: int = defaults.WORST_EXAMPLES
    bootstrap_seed: int = defaults.BOOTSTRAP_SEED
    num_proc: int | None = None
    batch_size: int | None = None
    progress: bool = True
    engine: str | Engine = "local"  # a name in ENGINES, or an engine instance
    address: str | None = None
    actors: int | None = None
    gpus_per_actor: float | None = None
    chunk_size: int | None = None  # read the data this many rows at a time (runner.stream)

    def __post_init__(self) -> None:
        check_num_proc(self.num_proc)

    def judge(self) -> JudgeSettings:
        return JudgeSettings(self.tolerance, self.noise_cap, self.worst_examples,
                             self.bootstrap_seed)

    def as_json(self, tests: list[str], metrics: list[MetricSpec]) -> dict[str, Any]:
        return {"task": self.task, "tests": tests, "seeds": [int(s) for s in self.seeds],
                "levels": {k: [str(v) for v in vs] for k, vs in (self.levels or {}).items()},
                "noise_cap": self.noise_cap, "tolerance": self.tolerance,
                "worst_examples": self.worst_examples, "bootstrap_seed": self.bootstrap_seed,
                "metrics": [m.as_json() for m in metrics]}


# -- perturbation ---------------------------------------------------------------------------------

def _plan_versions(items: Sequence[Any]) -> dict[str, str]:
    return {item.test: REGISTRY[item.test].version for item in items}


class SuiteTests:
    """The plan's test instances, built and their one-off loads (a tokenizer, WordNet,
    CheckList) done on first need: a run whose every chunk was perturbed before (the run state
    keeps it) loads none of them."""

    def __init__(self, data: DataSource, task: str) -> None:
        self.data, self.task = data, task

    @cached_property
    def instances(self) -> dict[str, Perturbation]:
        built = build_suite_tests(self.data.plan, self.data.pool, self.data.resources, self.task)
        for perturbation in built.values():  # once: every chunk's workers fork from here
            perturbation.preload()
        return built


class ChunkCells:
    """A chunk's perturbed cells in plan order, kept in the run state and read one at a time
    (memory holds one cell of the chunk, never its whole suite)."""

    def __init__(self, items: Sequence[SuiteItem], suite: SavedSuite | None) -> None:
        self.items, self.suite = list(items), suite

    def __len__(self) -> int:
        return len(self.items)

    def __iter__(self) -> Iterator[Cell]:
        for index, item in enumerate(self.items):
            assert self.suite is not None  # a plan with cells has a suite
            columns = self.suite.cell(index)
            yield Cell(item.test, str(item.level), int(item.seed),
                       noise_ratios=columns["noise_ratio"], applied=columns["applied"],
                       perturbed=columns["perturbed"])

    def texts(self, gold: Sequence[str]) -> Iterable[list[str]]:
        """The gold texts, then each cell's perturbed texts (read as they are iterated)."""
        return _Texts(list(gold), self)

    def drop(self) -> None:
        """Remove the suite from the run state (once every metric's scores of it are kept)."""
        if self.suite is not None:
            self.suite.remove()


@dataclass
class _Texts:
    """Texts to score, cell after cell, read again from the run state at each iteration."""

    gold: list[str]
    cells: ChunkCells

    def __iter__(self) -> Iterator[list[str]]:
        yield self.gold
        for cell in self.cells:
            yield cell.perturbed


def perturbed_cells(chunk: Chunk, data: DataSource, perturbations: SuiteTests,
                    state: RunState, engine: Engine, num_proc: int | None,
                    bar: Any) -> ChunkCells:
    """The chunk's cells in plan order, perturbed on ``engine`` and written to the state as they
    come (read from the state when a previous run perturbed the same rows with the same plan)."""
    plan = data.plan
    if not plan.items:
        return ChunkCells([], None)
    key = content_key("suite", chunk.texts, chunk.ids, chunk.sources,
                      [(i.test, str(i.level), i.seed) for i in plan.items],
                      _plan_versions(plan.items), describe_resources(data.resources),
                      SUITE_FORMAT)
    suite = state.load_suite(key, len(plan.items), len(chunk.texts))
    if suite is None:
        writer = state.suite_writer(key)
        done: set[int] = set()
        for attempt in range(1, WORKER_ATTEMPTS + 1):
            try:
                job = SuiteJob(plan, suite_state(plan, perturbations.instances, list(chunk.texts),
                                                 list(chunk.ids), chunk.sources, num_proc))
                restart_clock(bar)  # the parse and the tests' loads were one-off
                for index, table in engine.perturb(job):  # any order; each cell an Arrow table
                    if index not in done:  # a retried pool makes a cell again, the same
                        writer.add(index, table)
                        done.add(index)
                        bar.update()
                break
            except BrokenProcessPool:
                lost = (f"a --num-proc worker process died while perturbing {data.name} (rows "
                        f"{chunk.offset + 1}-{chunk.offset + len(chunk.texts)}, "
                        f"{len(plan.items) - len(done)} of {len(plan.items)} cells left)")
                if attempt == WORKER_ATTEMPTS:
                    raise WorkerLost(f"{lost}; it died {attempt} times, so the run stops") from None
                warn(f"{lost}; perturbing them again with fresh workers")
        suite = writer.finish(len(plan.items))
    else:
        bar.update(len(plan.items))
    return ChunkCells(plan.items, suite)


# -- scoring --------------------------------------------------------------------------------------

class MetricAccount:
    """One metric on one dataset while its chunks pass: scored through :class:`MetricRun`, kept
    as :class:`Tally` s (in memory) and per-row scores (spilled), judged once every chunk was
    scored."""

    def __init__(self, index: int, spec: MetricSpec, data: DataSource, state: RunState,
                 settings: RunSettings) -> None:
        self.index, self.spec, self.settings = index, spec, settings
        self.run: MetricRun | None = None
        self.error: str | None = None
        self.gold = Tally()
        self.cells: dict[int, Tally] = {}
        #: the first gold rows (texts, references, sources), for the sanity anchors
        self.anchor_rows: list[tuple[Any, Any, Any]] = []
        try:
            self.run = MetricRun(spec, state, settings.batch_size, data.idf_references)
        except ScorerUnavailable:  # a judge's server that cannot serve the run: it stops here
            raise
        except Exception as error:  # reported in the metric's entry, every test an error
            self.error = f"could not build the metric: {error_text(error)}"
            return
        if self.run.scorer.corpus_level and not data.whole:  # a module: known once it is loaded
            raise ValueError(corpus_level_refusal(spec))
        self.error = missing_input(spec, self.run.scorer, data.roles, data.column_names)

    def file(self, cell: int | None) -> str:
        return f"m{self.index}-{'gold' if cell is None else cell}.f64"

    def score_chunk(self, chunk: Chunk, cells: ChunkCells, spill: Spill, engine: Engine,
                    bar: Any) -> None:
        """Score the chunk's gold rows and cells (cell by cell, in plan order)."""
        run = self.run
        if run is None or self.error is not None:
            bar.update(len(cells) + 1)
            return
        inputs = run.inputs(chunk.references, chunk.sources)
        texts = cells.texts(chunk.texts)
        anchors = 0 if self.anchor_rows else ANCHOR_COUNT * min(ANCHOR_ROWS, len(chunk.texts))
        run.reserve([list(chunk.texts), *cells.texts(chunk.texts)], inputs, anchors)
        if engine.computes_ahead:
            run.compute_ahead(texts, inputs, engine, bar)
        elif run.scorer.model_option is not None:
            fit_threads_to_load()
            if self.settings.progress:
                announce(run.estimate(texts, inputs), bar)
            if run.scorer.prepares_ahead():  # every job of the chunk in one stream, each next
                # one tokenized while the device scores this one; cells then read the cache
                run.compute_ahead(texts, inputs, engine, bar)
        bar.set_postfix_str(f"{self.spec.name} gold", refresh=False)
        gold = self._score(self.gold, None, list(chunk.texts), inputs, chunk, spill)
        bar.update()
        if self.gold.error is not None:  # the metric fails on the gold rows: nothing is judged
            self.error = gold_problem(self.gold.error)
        if self.error is not None or self.gold.n_nan:  # NaN gold scores: judged as an error
            bar.update(len(cells))
            return
        missing = ANCHOR_ROWS - len(self.anchor_rows)
        if missing > 0:
            blank = [None] * len(chunk.texts)
            self.anchor_rows += list(zip(chunk.texts, chunk.references or blank,
                                         chunk.sources or blank, strict=True))[:missing]
        for index, cell in enumerate(cells):
            bar.set_postfix_str(f"{self.spec.name} {cell.test} {cell.level} s{cell.seed}",
                                refresh=False)
            tally = self.cells.setdefault(index, Tally())
            if tally.error is None:
                scores = self._score(tally, index, cell.perturbed, inputs, chunk, spill)
                k = self.settings.worst_examples
                if scores is not None and gold is not None and k > 0:
                    found = worst_candidates(scores, gold, cell.applied, k, chunk.ids,
                                             chunk.texts, cell.perturbed, chunk.offset)
                    tally.worst = keep_worst(tally.worst, found, k)
            bar.update()

    def _score(self, tally: Tally, cell: int | None, texts: list[str], inputs: Inputs,
               chunk: Chunk, spill: Spill) -> list[float] | None:
        """Score ``texts`` into ``tally`` and the spill; the row scores (None for a corpus-level
        metric or when the metric raised: the tally keeps the error). A full disk under the
        run state is no error of the metric's: it stops the run."""
        assert self.run is not None
        try:
            scores, corpus = self.run.score(texts, inputs)
        except (ScorerUnavailable, OutOfSpaceError):  # a service down, a full disk: the run
            # stops with one line, its state kept
            raise
        except Exception as error:  # a metric failing on a test's rows is reported, not fatal
            tally.error = error_text(error)
            return None
        if scores is None:
            tally.corpus = corpus
            tally.count([math.nan if corpus is None else corpus], ["(corpus)"])
            return None
        tally.count(scores, chunk.ids)
        spill.append(self.file(cell), scores, np.float64)
        return scores

    def finish(self, plan: SuitePlan, rows: int, spill: Spill, engine: Engine) -> MetricResult:
        """The metric's results entry, judged one test at a time from the spilled rows."""
        tests = list(dict.fromkeys(item.test for item in plan.items))
        test_categories = categories(tests)
        run, self.run = self.run, None  # the scorer (and its model) goes with this metric
        entry = metric_entry(self.spec, run.scorer if run is not None else None,
                             self.settings.seeds)
        problem = self.gold.problem()
        error = self.error or (gold_problem(problem) if problem else None)
        if run is None or error is not None:
            fail_all(entry, tests, test_categories, error or "")
            return entry
        corpus = run.scorer.corpus_level
        gold = Gold([], [], None if corpus else spill.load(self.file(None), np.float64),
                    self.gold.corpus, size=rows)
        entry.gold = gold_summary(gold)
        texts, references, sources = (list(c) for c in zip(*self.anchor_rows, strict=True))
        entry.anchors = run.anchors(texts, None if references[0] is None else references,
                                    None if sources[0] is None else sources, engine)
        entry.usage = run.usage()
        if run.scorer.flags_uninformative:  # a judge that may grade every text alike
            tallies = [self.gold, *self.cells.values()]
            flag = uninformative(min(t.low for t in tallies), max(t.high for t in tallies),
                                 entry.anchors, self.settings.tolerance)
            entry.flags = [flag] if flag else None

        def cells_of(test: str) -> list[Cell]:
            cells = []
            for index, item in enumerate(plan.items):
                if item.test != test:
                    continue
                tally = self.cells[index]
                scores = (None if tally.error or corpus
                          else spill.load(self.file(index), np.float64))
                cells.append(Cell(item.test, str(item.level), int(item.seed),
                                  noise_ratios=spill.load(f"noise-{index}.f64", np.float64),
                                  applied=spill.load(f"applied-{index}.bool", np.bool_),
                                  perturbed=[], scores=scores, corpus_score=tally.corpus,
                                  error=tally.problem(), worst=tally.worst))
            return cells

        judge_metric(entry, gold, ((test, cells_of(test)) for test in tests), test_categories,
                     self.settings.judge())
        return entry


def _with_last(items: Iterable[T]) -> Iterator[tuple[T, bool]]:
    """Each item, and whether it is the last one."""
    iterator = iter(items)
    try:
        current = next(iterator)
    except StopIteration:
        return
    for following in iterator:
        yield current, False
        current = following
    yield current, True


def _progress(total: int, desc: str, unit: str, enabled: bool, leave: bool = True) -> Any:
    # in a log (not a terminal) every refresh is a new line: refresh rarely there
    return progress_bar(total=total, desc=desc, unit=unit, disable=not enabled, file=sys.stderr,
                        mininterval=0.2 if sys.stderr.isatty() else 10, leave=leave)


# -- one dataset ----------------------------------------------------------------------------------

def run_dataset(data: DataSource, specs: list[MetricSpec], settings: RunSettings,
                state: RunState, engine: Engine, work: Path) -> DatasetResult:
    """The results entry of one dataset: each chunk perturbed, then scored with every metric
    (one metric after the other, each with a bar of its own where the dataset is read whole);
    each metric judged after the last chunk, per-row values kept in ``work`` meanwhile."""
    plan = data.plan
    state.total += len(specs) * (len(plan.items) + 1) * data.chunk_count
    perturbations = SuiteTests(data, settings.task)
    accounts = [MetricAccount(i, spec, data, state, settings) for i, spec in enumerate(specs)]
    spill = Spill(work)
    entries: dict[str, MetricResult] = {}
    rows = 0
    scoring = None  # made after the first chunk was read (and checked) and perturbed
    try:
        for chunk, last in _with_last(data.chunks):
            # one bar at a time while a chunk is perturbed; a chunked run's bar is cleared after
            with _progress(len(plan.items), "perturbing", "cell", settings.progress,
                           leave=data.whole) as perturbing:
                cells = perturbed_cells(chunk, data, perturbations, state, engine,
                                        settings.num_proc, perturbing)
            for index, cell in enumerate(cells):
                spill.append(f"noise-{index}.f64", cell.noise_ratios, np.float64)
                spill.append(f"applied-{index}.bool", cell.applied, np.bool_)
            rows += len(chunk.texts)
            if scoring is None and not data.whole:
                scoring = _progress(len(specs) * (len(plan.items) + 1) * data.chunk_count,
                                    "scoring", "cell", settings.progress)
            for account in accounts:
                if data.whole:  # a bar per metric: its forecast counts only cells that cost alike
                    if scoring is not None:
                        scoring.close()
                    scoring = _progress(len(plan.items) + 1, "scoring", "cell", settings.progress)
                account.score_chunk(chunk, cells, spill, engine, scoring)
                if last:  # judged now, so its model goes before the next metric's loads
                    entries[account.spec.name] = account.finish(plan, rows, spill, engine)
            if not data.whole:  # every score of the chunk is kept: its texts can go
                cells.drop()
            get_parser().forget()  # the disk cache keeps the parses; memory stays one chunk's
    finally:
        if scoring is not None:
            scoring.close()
    return DatasetResult(settings.task, rows, data.fingerprint(), dict(data.roles),
                         describe_resources(data.resources), dict(plan.skipped), entries)


def whole_source(gold: GoldData, settings: RunSettings, work: Path | None = None) -> DataSource:
    """A dataset loaded whole, read as one chunk (pool tests draw from it, idf counts its
    references, the open-ended n-gram corpus is made of its references); it needs no ``work``
    folder of its own."""
    resources = default_resources(settings.task, gold, settings.resources)
    plan = plan_suite(settings.tests, settings.task, settings.seeds, settings.levels, resources,
                      has_source=bool(gold.columns["source"]))
    texts = gold.texts()
    references = gold.column("references")
    chunk = Chunk(0, texts, gold.ids(), references, gold.column("source"))
    return DataSource(gold.name, dict(gold.columns), list(gold.dataset.column_names), resources,
                      plan, 1, iter([chunk]), gold.fingerprint, whole=True, pool=texts,
                      idf_references=references)


# -- the whole run --------------------------------------------------------------------------------

def _as_sources(data: Any) -> list[Any]:
    return list(data) if isinstance(data, (list, tuple)) else [data]


def judge_run(data: Any, metrics: Any, *, task: str = defaults.TASK,
              tests: str | Sequence[str] = defaults.TESTS,
              seeds: Sequence[int] = defaults.SEEDS,
              columns: Mapping[str, str | None] | None = None,
              state_dir: str | Path | None = None, split: str = "test",
              metric_options: Mapping[str, Mapping[str, Any]] | None = None,
              **settings: Any) -> RunResult:
    """Judge ``metrics`` on ``data`` (one source or a list: paths, ``"demo"``, Hub ids, Datasets)
    and return the typed result (:class:`~blindspot.report.schema.RunResult`); nothing written
    but the resumable state in ``state_dir`` (default: the cache).

    ``chunk_size=N`` streams each data file (a local .jsonl/.parquet) N rows at a time in bounded
    memory, with the same results (:mod:`blindspot.runner.stream`).
    Bad input (unknown test or metric, a missing column, an empty dataset) fails before any work.
    """
    config = RunSettings(task=canonical_task(task), tests=tests,
                         seeds=parse_seeds(seeds, "seeds"), **settings)
    specs = resolve_metrics(metrics, metric_options)
    test_names = suite_tests(tests, config.task)
    if not test_names:
        raise ValueError(f"no test selected by {tests!r} for task {config.task!r}")
    config.tests = test_names
    if isinstance(config.engine, str):  # an unknown engine or a stray option fails before any work
        ENGINES.get(config.engine)
        engine_options(config.engine, vars(config))
    folder = Path(state_dir) if state_dir is not None else default_state_folder()
    datasets = _run(_as_sources(data), specs, config, columns, split, folder)
    return RunResult(tool(), config.as_json(test_names, specs), datasets)


def _unique(names: list[str]) -> list[str]:
    """Dataset names, a repeated one numbered by its position (``rows.jsonl#2``)."""
    return [f"{n}#{i + 1}" if names.count(n) > 1 else n for i, n in enumerate(names)]


def _run(sources: list[Any], specs: list[MetricSpec], config: RunSettings,
         columns: Mapping[str, str | None] | None, split: str,
         folder: Path) -> dict[str, DatasetResult]:
    """Every dataset, loaded whole (one chunk) or, with ``config.chunk_size``, read that many
    rows at a time; every source checked before any work."""
    opens: list[Callable[[Path], DataSource]]
    if config.chunk_size is None:
        golds = [load_gold_data(source, config.task, columns, split) for source in sources]
        for gold, name in zip(golds, _unique([g.name for g in golds]), strict=True):
            gold.name = name
        opens = [partial(whole_source, gold, config) for gold in golds]
    else:
        chunk_size = check_chunk_size(config.chunk_size)
        check_streamable(specs)
        names = _unique([stream_path(source).name for source in sources])  # all checked first
        opens = [partial(streamed_source, source, name, config, columns, chunk_size)
                 for name, source in zip(names, sources, strict=True)]
    state = RunState(folder)
    engine = (get_engine(config.engine, **engine_options(config.engine, vars(config)))
              if isinstance(config.engine, str) else config.engine)
    results = {}
    try:
        with terminate_as_interrupt(), out_of_space_as(folder, "the run's working files"):
            for open_source in opens:
                with tempfile.TemporaryDirectory(prefix="run-", dir=folder) as work:
                    data = open_source(Path(work))
                    results[data.name] = run_dataset(data, specs, config, state, engine,
                                                     Path(work))
    except OutOfSpaceError as error:  # every finished cell is in the state: say so
        raise error.with_kept(state.kept_text()) from error.__cause__
    except WorkerLost as error:
        raise WorkerLost(f"{error}; {state.resume_text()}") from None
    except KeyboardInterrupt as stop:  # Ctrl-C, or SIGTERM (terminate_as_interrupt)
        raise RunInterrupted(getattr(stop, "signum", signal.SIGINT), state.kept, state.total,
                             folder) from None
    finally:
        engine.close()
    return results


def default_state_folder() -> Path:
    """Where a run without a report folder or ``state_dir`` keeps its state: the cache."""
    return cache_dir() / "runs"


__all__ = ["DEFAULT_SEEDS", "DEFAULT_TESTS", "MetricAccount", "RunSettings",
           "default_state_folder", "judge_run", "perturbed_cells", "run_dataset", "whole_source"]
