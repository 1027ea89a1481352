"""The main job: perturb gold data, score it with each metric, judge every test, report.

The matrix is datasets x tests x levels x seeds x metrics. Perturbation reuses the parse cache and
runs in ``num_proc`` worker processes; scoring goes through the shared scoring layer (score cache,
deduplication); every finished cell is kept in the run's state, so a killed run resumes where it
stopped and ends with the same ``results.json`` as an uninterrupted one. With ``chunk_size`` the
same job streams a data file of any size in bounded memory (:mod:`blindspot.runner.stream`).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from blindspot import defaults
from blindspot.forking import check_num_proc, fit_threads_to_load
from blindspot.judging import gold_problem, nan_error
from blindspot.paths import cache_dir
from blindspot.perturbations.base import REGISTRY, canonical_task
from blindspot.perturbations.catalogue import suite_tests
from blindspot.perturbations.dataset import plan_suite, run_suite
from blindspot.progress import progress_bar
from blindspot.report.schema import DatasetResult, MetricResult, RunResult
from blindspot.runner.data import GoldData, default_resources, describe_resources, load_gold_data
from blindspot.runner.engines import (
    ENGINES,
    Engine,
    ScoreJob,
    ScoreJobError,
    ScorerRecipe,
    engine_options,
    get_engine,
    run_score_job,
)
from blindspot.runner.entries import (
    by_test,
    categories,
    error_text,
    fail_all,
    gold_summary,
    judge_metric,
    metric_entry,
    missing_input,
    tool,
)
from blindspot.runner.judge import Cell, Gold, JudgeSettings
from blindspot.runner.metric_spec import MetricSpec, resolve_metrics
from blindspot.runner.state import RunState, content_key
from blindspot.runner.stream import check_chunk_size, check_streamable, stream_dataset, stream_path
from blindspot.scoring.anchors import ANCHOR_ROWS, sanity_anchors
from blindspot.scoring.base import ScoreInput
from blindspot.scoring.cache import MemoryScoreCache, default_score_cache
from blindspot.scoring.engine import (
    build_inputs,
    corpus_key,
    input_keys,
    pending_batches,
    score_corpus,
    score_rows,
)
from blindspot.seeding import parse_seeds

DEFAULT_TESTS = defaults.TESTS
DEFAULT_SEEDS = defaults.SEEDS


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
    chunk_size: int | None = None  # stream the data this many rows at a time (runner.stream)

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


def perturbed_suite(gold: GoldData, settings: RunSettings, resources: Mapping[str, Any],
                    state: RunState, engine: Engine | None = None) -> tuple[Any, Any]:
    """The suite of ``gold`` (from the state when a previous run completed it) and its plan."""
    cols = gold.columns
    plan = plan_suite(settings.tests, settings.task, settings.seeds, settings.levels, resources,
                      has_source=bool(cols["source"]))
    key = content_key("suite", gold.fingerprint(), settings.task,
                      [(i.test, str(i.level), i.seed) for i in plan.items],
                      _plan_versions(plan.items), describe_resources(resources))
    suite = state.load_suite(key, rows=len(plan.items) * len(gold.dataset))
    if suite is None:
        suite, plan = run_suite(gold.dataset.select_columns(gold.used_columns()),
                                settings.tests, settings.task, settings.seeds,
                                column=gold.required_column("hypothesis"), id_column=cols["id"],
                                source_column=cols["source"], levels=settings.levels,
                                resources=resources, num_proc=settings.num_proc,
                                progress=settings.progress,
                                executor=engine.perturb if engine is not None else None)
        state.save_suite(key, suite)
    return suite, plan


def suite_cells(suite: Any, plan: Any, rows: int) -> list[Cell]:
    """The suite's cells in plan order (each is ``rows`` consecutive rows of the suite)."""
    table = suite.select_columns(["perturbed", "applied", "noise_ratio"]).to_dict()
    cells = []
    for k, item in enumerate(plan.items):
        span = slice(k * rows, (k + 1) * rows)
        cells.append(Cell(item.test, str(item.level), int(item.seed),
                          noise_ratios=[float(x) for x in table["noise_ratio"][span]],
                          applied=[bool(x) for x in table["applied"][span]],
                          perturbed=table["perturbed"][span]))
    return cells


# -- scoring --------------------------------------------------------------------------------------

def _cost(inputs: Sequence[Any]) -> int:
    return sum(item.cost() for item in inputs)


@dataclass(frozen=True)
class ScoringEstimate:
    """A measured forecast of one metric's scoring, printed before long work."""

    metric: str
    texts: int  # distinct inputs still to score (not in the run state or score cache)
    seconds: float  # after the two measured batches
    rate: float  # input characters per second in the timed batch

    #: forecasts shorter than this are not printed
    QUIET_BELOW_S: ClassVar[float] = 5.0

    def __str__(self) -> str:
        return (f"scoring {self.texts:,} texts with {self.metric}: about {self.seconds:.0f} s "
                f"(measured {self.rate:,.0f} characters/s on this machine)")


class MetricRun:
    """One metric on one dataset: its scorer, inputs, and cell scores kept in the run state."""

    def __init__(self, spec: MetricSpec, gold: GoldData, state: RunState, settings: RunSettings):
        self.spec, self.gold, self.state, self.settings = spec, gold, state, settings
        self.references = gold.column("references")
        self.sources = gold.column("source")
        self.recipe = ScorerRecipe(spec, self.references)
        self.scorer = self.recipe.build()
        self.identity = self.scorer.identity()
        self.sign = 1.0 if spec.higher_is_better else -1.0
        # the score cache (None when switched off); scores computed ahead by an engine land here
        self.cache: Any = default_score_cache()

    def check_inputs(self) -> str | None:
        """Why this metric cannot score this data (a missing references/source column), or None."""
        return missing_input(self.spec, self.scorer, self.gold.columns,
                             self.gold.dataset.column_names)

    def _inputs(self) -> dict[str, Any]:
        return {"references": self.references if self.scorer.uses_references != "none" else None,
                "sources": self.sources if self.scorer.uses_source != "none" else None}

    def _state_key(self, texts: list[str]) -> str:
        return content_key("scores", self.identity, self.spec.output, texts, self._inputs())

    def pending_jobs(self, cell_texts: Sequence[list[str]]) -> list[ScoreJob]:
        """The score jobs the cells (``cell_texts``, in scoring order) still need: those not in
        the run state nor the score cache, batched exactly as :meth:`score` would batch them
        one cell after the other, so every engine computes the very same numbers."""
        known: set[str] = set()
        jobs: list[ScoreJob] = []
        for texts in cell_texts:
            if self.state.get_scores(self._state_key(texts)) is not None:
                continue
            try:
                inputs = build_inputs(self.scorer, texts, **self._inputs())
            except ValueError:
                continue  # the cell reports this error itself when it is scored
            if self.scorer.corpus_level:
                key = corpus_key(self.scorer, inputs)
                if key not in known and not self.cache.get_many([key]):
                    jobs.append(("corpus", inputs))
                known.add(key)
                continue
            keys = input_keys(self.scorer, inputs)
            known.update(self.cache.get_many([k for k in keys.values() if k not in known]))
            jobs += [("rows", batch) for batch in
                     pending_batches(self.scorer, keys, known, self.settings.batch_size)]
            known.update(keys.values())
        return jobs

    def compute_ahead(self, cell_texts: Sequence[list[str]], engine: Engine, bar: Any) -> None:
        """Score what the cells need on ``engine``, written once, here, into the score cache.

        A job the metric fails on (:class:`ScoreJobError`, declared by the engine) stops this:
        the cells are then scored one by one in this process, which reports the failure on the
        cell it belongs to. Any other error (the engine's own) is raised.
        """
        jobs = self.pending_jobs(cell_texts)
        try:
            for done, (job, scores) in enumerate(zip(jobs, engine.score(self.recipe, jobs), strict=True), 1):
                self._keep(job, scores)
                bar.set_postfix_str(f"{self.spec.name} batch {done}/{len(jobs)}")
        except ScoreJobError as error:
            bar.write(f"{self.spec.name}: {error}; scoring its cells one by one here to find "
                      "the cell it belongs to", file=sys.stderr)

    def anchors(self, texts: list[str], engine: Engine | None) -> dict[str, float | None] | None:
        """The metric's sanity anchors on these gold rows (:func:`sanity_anchors`), kept in the
        run state like a cell's scores, so a resumed run scores nothing again."""
        key = content_key("anchors", self.identity, self.spec.output, texts[:ANCHOR_ROWS],
                          self._inputs(), ANCHOR_ROWS)
        kept = self.state.get_record(key)
        if kept is None:
            kept = {"anchors": sanity_anchors(self.scorer, self.spec, texts, self.references,
                                              self.sources,
                                              score_batch=self.engine_batches(engine))}
            self.state.put_record(key, kept)
        return kept["anchors"]

    def engine_batches(self, engine: Engine | None
                       ) -> Callable[[list[ScoreInput]], list[dict[str, float]]]:
        """One batch's scores through the score cache: what is missing is scored on ``engine``
        when it computes ahead (a Ray run scores on Ray, never on the driver), else by the
        scorer in this process, and kept in the cache (the same code scores nothing twice)."""

        def cached(inputs: list[ScoreInput]) -> list[dict[str, float]]:
            keys = input_keys(self.scorer, inputs)
            found = self.cache.get_many(list(keys.values())) if self.cache is not None else {}
            missing = [item for item, key in keys.items() if key not in found]
            if missing:
                job: ScoreJob = ("rows", missing)
                scores = (next(iter(engine.score(self.recipe, [job])))
                          if engine is not None and engine.computes_ahead
                          else run_score_job(self.scorer, job))
                self._keep(job, scores)
                found.update(zip([keys[item] for item in missing], scores, strict=True))
            return [found[keys[item]] for item in inputs]
        return cached

    def _keep(self, job: ScoreJob, scores: list[dict[str, float]]) -> None:
        """Write a job's scores into the score cache (a memory one when the cache is off)."""
        if self.cache is None:  # no score cache: keep what is computed ahead for this run only
            self.cache = MemoryScoreCache()
        kind, inputs = job
        keys = ([corpus_key(self.scorer, inputs)] if kind == "corpus"
                else list(input_keys(self.scorer, inputs).values()))
        self.cache.put_many(zip(keys, scores, strict=True))

    def estimate(self, cell_texts: Sequence[list[str]]) -> ScoringEstimate | None:
        """How long scoring the cells will take, measured: the first pending batch is scored
        (it loads the model), the second is timed, and the rest is extrapolated by input length
        (:meth:`ScoreInput.cost`). Both batches land in the score cache, batched as
        :meth:`score` batches them, so the scores are the same. None when fewer than two
        batches are pending (nothing long to announce) or when a batch fails (the cell that
        holds it reports the error when it is scored)."""
        jobs = [job for job in self.pending_jobs(cell_texts) if job[0] == "rows"]
        if len(jobs) < 2:
            return None
        first = self._try(jobs[0])
        if first is None:
            return None
        self._keep(jobs[0], first)
        fit_threads_to_load()  # the first batch loaded the model, and torch with it
        start = time.perf_counter()
        second = self._try(jobs[1])
        took = time.perf_counter() - start
        if second is None:
            return None
        self._keep(jobs[1], second)
        rate = _cost(jobs[1][1]) / max(took, 1e-6)
        rest = sum(_cost(inputs) for _, inputs in jobs[2:])
        return ScoringEstimate(self.spec.name, sum(len(inputs) for _, inputs in jobs),
                               rest / rate, rate)

    def _try(self, job: ScoreJob) -> list[dict[str, float]] | None:
        """A job's scores, or None when the metric raises on it: the cell that holds the job
        reports that error when it is scored (:func:`_fill_cell`)."""
        try:
            return run_score_job(self.scorer, job)
        except Exception:  # noqa: BLE001  (the metric's own error, reported on its cell)
            return None

    def score(self, texts: list[str]) -> tuple[list[float] | None, float | None]:
        """Per-row scores (or the corpus score) of ``texts``, from the state when already done."""
        inputs = self._inputs()
        key = self._state_key(texts)
        kept = self.state.get_scores(key)
        if kept is None:
            output = self.spec.output or self.scorer.outputs[0]
            if self.scorer.corpus_level:
                corpus = float(score_corpus(self.scorer, texts, cache=self.cache,
                                            **inputs)[output])
                self.state.put_scores(key, corpus=corpus)
                kept = {"corpus": corpus}
            else:
                rows = score_rows(self.scorer, texts, batch_size=self.settings.batch_size,
                                  cache=self.cache, **inputs)[output]
                self.state.put_scores(key, scores=[float(x) for x in rows])
                kept = {"scores": [float(x) for x in rows]}
        if "corpus" in kept:
            return None, self.sign * kept["corpus"]
        return [self.sign * s for s in kept["scores"]], None


def _fill_cell(run: MetricRun, cell: Cell, ids: list[Any]) -> Cell:
    """The cell with this metric's scores, or its error."""
    scored = Cell(cell.test, cell.level, cell.seed, cell.noise_ratios, cell.applied,
                  cell.perturbed)
    try:
        scored.scores, scored.corpus_score = run.score(cell.perturbed)
    except Exception as error:  # a metric failing on a test's rows is reported, not fatal
        scored.error = error_text(error)
        return scored
    values = scored.scores if scored.scores is not None else [scored.corpus_score]
    scored.error = nan_error(values, ids if scored.scores is not None else ["(corpus)"])
    return scored


def _progress(total: int, enabled: bool) -> Any:
    # in a log (not a terminal) every refresh is a new line: refresh rarely there
    return progress_bar(total=total, desc="scoring", unit="cell", disable=not enabled, file=sys.stderr,
                mininterval=0.2 if sys.stderr.isatty() else 10)


# -- one dataset ----------------------------------------------------------------------------------

def run_metric(spec: MetricSpec, gold_data: GoldData, cells: list[Cell], state: RunState,
               settings: RunSettings, bar: Any, engine: Engine | None = None) -> MetricResult:
    """The results entry of one metric on one dataset."""
    tests = list(dict.fromkeys(c.test for c in cells))
    test_categories = categories(tests)
    ids = gold_data.ids()
    texts = gold_data.texts()
    try:
        run = MetricRun(spec, gold_data, state, settings)
    except Exception as error:
        entry = metric_entry(spec, None)
        fail_all(entry, tests, test_categories, f"could not build the metric: {error_text(error)}")
        bar.update(len(cells) + 1)
        return entry
    entry = metric_entry(spec, run.scorer)
    problem = run.check_inputs()
    if problem:
        fail_all(entry, tests, test_categories, problem)
        bar.update(len(cells) + 1)
        return entry
    if engine is not None and engine.computes_ahead:
        run.compute_ahead([list(texts)] + [cell.perturbed for cell in cells], engine, bar)
    elif run.scorer.model_option is not None:
        fit_threads_to_load()
        if settings.progress:
            announce(run.estimate([list(texts)] + [cell.perturbed for cell in cells]), bar)
    bar.set_postfix_str(f"{spec.name} gold", refresh=False)
    gold_cell = _fill_cell(run, Cell("gold", "gold", 0, [0.0] * len(texts),
                                     [False] * len(texts), list(texts)), ids)
    bar.update()
    if gold_cell.error:
        fail_all(entry, tests, test_categories, gold_problem(gold_cell.error))
        bar.update(len(cells))
        return entry
    gold = Gold(ids, list(texts), gold_cell.scores, gold_cell.corpus_score)
    entry.gold = gold_summary(gold)
    scored = []
    for cell in cells:
        bar.set_postfix_str(f"{spec.name} {cell.test} {cell.level} s{cell.seed}", refresh=False)
        scored.append(_fill_cell(run, cell, ids))
        bar.update()
    # after the cells, so an engine that computes ahead scores the very batches, in the very order
    entry.anchors = run.anchors(list(texts), engine)
    judge_metric(entry, gold, by_test(scored), test_categories, settings.judge())
    return entry


def announce(estimate: ScoringEstimate | None, bar: Any) -> None:
    """Print a long scoring's forecast above the progress bar (short ones are not printed)."""
    if estimate is not None and estimate.seconds >= ScoringEstimate.QUIET_BELOW_S:
        bar.write(str(estimate), file=sys.stderr)


def run_dataset(gold: GoldData, metrics: list[MetricSpec], settings: RunSettings,
                state: RunState, engine: Engine | None = None) -> DatasetResult:
    """The results entry of one dataset: perturb once, then every metric."""
    resources = default_resources(settings.task, gold, settings.resources)
    suite, plan = perturbed_suite(gold, settings, resources, state, engine)
    cells = suite_cells(suite, plan, gold.dataset.num_rows)
    entry = DatasetResult(settings.task, gold.dataset.num_rows, gold.fingerprint(),
                          dict(gold.columns), describe_resources(resources), dict(plan.skipped))
    bar = _progress(len(metrics) * (len(cells) + 1), settings.progress)
    try:
        for spec in metrics:
            entry.metrics[spec.name] = run_metric(spec, gold, cells, state, settings, bar,
                                                  engine)
    finally:
        bar.close()
    return entry


# -- the whole run --------------------------------------------------------------------------------

def _as_sources(data: Any) -> list[Any]:
    return list(data) if isinstance(data, (list, tuple)) else [data]


def run_blindspot(data: Any, metrics: Any, *, task: str = defaults.TASK,
                  tests: str | Sequence[str] = defaults.TESTS,
                  seeds: Sequence[int] = defaults.SEEDS,
                  columns: Mapping[str, str | None] | None = None, out: str | Path | None = None,
                  state_dir: str | Path | None = None, split: str = "test",
                  metric_options: Mapping[str, Mapping[str, Any]] | None = None,
                  **settings: Any) -> dict[str, Any]:
    """Judge ``metrics`` on ``data`` (one source or a list: paths, ``"demo"``, Hub ids, Datasets).

    Returns the results dict (``blindspot.report.schema``); with ``out``, also writes the report
    folder there. ``state_dir`` (default ``<out>/.state``, else the cache) keeps finished work.
    ``chunk_size=N`` streams each data file (a local .jsonl/.parquet) N rows at a time in bounded
    memory, with the same results (:mod:`blindspot.runner.stream`; not resumable).
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
    folder = _state_folder(out, state_dir)
    if config.chunk_size is None:
        datasets = _run_in_memory(_as_sources(data), specs, config, columns, split, folder)
    else:
        datasets = _run_streamed(_as_sources(data), specs, config, columns, folder)
    results = RunResult(tool(), config.as_json(test_names, specs), datasets).to_dict()
    if out is not None:
        from blindspot.report.writer import write_report

        write_report(results, Path(out))
    return results


def _unique(names: list[str]) -> list[str]:
    """Dataset names, a repeated one numbered by its position (``rows.jsonl#2``)."""
    return [f"{n}#{i + 1}" if names.count(n) > 1 else n for i, n in enumerate(names)]


def _run_in_memory(sources: list[Any], specs: list[MetricSpec], config: RunSettings,
                   columns: Mapping[str, str | None] | None, split: str,
                   folder: Path) -> dict[str, DatasetResult]:
    """Every dataset loaded whole, perturbed once, scored cell by cell (resumable)."""
    golds = [load_gold_data(source, config.task, columns, split) for source in sources]
    for gold, name in zip(golds, _unique([g.name for g in golds]), strict=True):
        gold.name = name
    state = RunState(folder)
    engine = (get_engine(config.engine, **engine_options(config.engine, vars(config)))
              if isinstance(config.engine, str) else config.engine)
    try:
        return {gold.name: run_dataset(gold, specs, config, state, engine) for gold in golds}
    finally:
        engine.close()


def _run_streamed(sources: list[Any], specs: list[MetricSpec], config: RunSettings,
                  columns: Mapping[str, str | None] | None, folder: Path
                  ) -> dict[str, DatasetResult]:
    """Every dataset file read ``config.chunk_size`` rows at a time (:mod:`.stream`)."""
    chunk_size = check_chunk_size(config.chunk_size)
    check_streamable(specs, config)
    names = _unique([stream_path(source).name for source in sources])  # all checked first
    return {name: stream_dataset(source, specs, config, columns, chunk_size, folder)
            for name, source in zip(names, sources, strict=True)}


def _state_folder(out: str | Path | None, state_dir: str | Path | None) -> Path:
    if state_dir is not None:
        return Path(state_dir)
    if out is not None:
        return Path(out) / ".state"
    return cache_dir() / "runs"


__all__ = ["DEFAULT_SEEDS", "DEFAULT_TESTS", "RunSettings", "run_blindspot"]
