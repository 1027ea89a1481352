"""Applying tests to a ``datasets.Dataset``: one test at one level, or a whole suite.

Both keep every input column and the row order and add ``perturbed, applied, noise_ratio,
perturbation, level, seed``. Texts are parsed once (in memory and in the on-disk parse cache)
before any test runs, and every test, level and seed reuses that parse.
"""

from __future__ import annotations

import sys
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from typing import Any

import datasets
import pyarrow as pa
from datasets.table import InMemoryTable

from blindspot import defaults
from blindspot.forking import check_num_proc, single_thread_after_fork, worker_context
from blindspot.parsing import ParsedText, get_parser
from blindspot.perturbations.perturbation import (
    OUTPUT_COLUMNS,
    REGISTRY,
    Level,
    Perturbation,
    canonical_name,
    canonical_task,
    is_usable_text,
    text_row_id,
)
from blindspot.perturbations.suites import suite_tests
from blindspot.progress import progress_bar
from blindspot.seeding import parse_seeds
from blindspot.suggest import did_you_mean
from blindspot.text_columns import check_text_column

DEFAULT_SEEDS = defaults.SEEDS


def _check_columns(column_names: Sequence[str], column: str, source_column: str | None) -> None:
    if column not in column_names:
        raise ValueError(f"text column {column!r} not found; the data has columns "
                         f"{list(column_names)}; choose one with column=... (--column)"
                         f"{did_you_mean(column, column_names)}")
    if source_column and source_column not in column_names:
        raise ValueError(f"source column {source_column!r} not found; the data has columns "
                         f"{list(column_names)}{did_you_mean(source_column, column_names)}")
    clash = [c for c in OUTPUT_COLUMNS if c in column_names]
    if clash:
        raise ValueError(f"the data already has output column(s) {clash}; rename or remove them "
                         f"(e.g. ds.remove_columns({clash}))")


def check_inputs(ds: Any, column: str, source_column: str | None, num_proc: int | None) -> None:
    """Everything about the data and settings checked before any work: the columns exist, the
    text and source columns hold text in every row (a null or a number is refused, naming the
    rows, never passed through), ``num_proc`` is a number of processes."""
    _check_columns(ds.column_names, column, source_column)
    for name in (column, source_column):
        if name:
            check_text_column(ds, name)
    check_num_proc(num_proc)


def column_values(ds: Any, name: str) -> list[Any]:
    """A column as a plain list (``ds[name]`` is a lazy column whose per-item access is slow)."""
    return ds.select_columns([name]).to_dict()[name]


def build_perturbation(name: str, texts: Sequence[Any] | None = None,
                       resources: Mapping[str, Any] | None = None,
                       task: str | None = None) -> Perturbation:
    """An instance of test ``name``; a ``pool`` it needs defaults to the gold texts themselves."""
    cls = REGISTRY[canonical_name(name)]
    given = {k: v for k, v in (resources or {}).items() if v is not None}
    if "pool" in cls.requires and "pool" not in given and texts is not None:
        given["pool"] = [t for t in texts if is_usable_text(t)]
    return cls(task=task, **given)


def preparse(texts: Iterable[Any], num_proc: int | None = None) -> dict[str, ParsedText]:
    """Parse every usable distinct text once (in ``num_proc`` processes when that many are
    given); the parser keeps them for every later test."""
    usable = [t for t in dict.fromkeys(texts) if is_usable_text(t)]
    return dict(zip(usable, get_parser().parse_many(usable, num_proc), strict=True))


def perturb_dataset(ds: Any, test: str, level: Level, seed: int = 1, column: str = "gold",
                    id_column: str | None = "id", source_column: str | None = None,
                    num_proc: int | None = None, batch_size: int = 256, task: str | None = None,
                    **resources: Any) -> Any:
    """A new Dataset: every row of ``ds`` in order, with ``test`` applied at ``level``.

    ``task`` selects a test's task variant (e.g. open-ended sentence switching keeps the last
    sentence); ``resources`` are what the test needs (``mlm=``, ``lm=``, ``ngram_corpus=``...).
    """
    check_inputs(ds, column, source_column, num_proc)
    perturbation = build_perturbation(test, column_values(ds, column) if "pool" in
                                      REGISTRY[canonical_name(test)].requires else None,
                                      resources, task)
    if perturbation.needs_source and not source_column:
        raise ValueError(f"test {perturbation.name!r} needs the source text; pass source_column=...")
    if perturbation.needs_parse:
        preparse(column_values(ds, column), num_proc)  # workers only read the disk cache
    fn = perturbation.as_map(level, seed, column, id_column if id_column in ds.column_names else None,
                             source_column)
    return ds.map(fn, batched=True, batch_size=batch_size, num_proc=num_proc,
                  desc=f"{perturbation.name} @ {level}")


@dataclass(frozen=True)
class SuiteItem:
    """One (test, level, seed) cell of a suite."""

    test: str
    level: Level
    seed: int


@dataclass
class SuitePlan:
    """What a suite will run, and what it skipped and why."""

    items: list[SuiteItem]
    skipped: dict[str, str]


def plan_suite(tests: str | Sequence[str], task: str, seeds: Sequence[int] = DEFAULT_SEEDS,
               levels: Mapping[str, Sequence[Level]] | None = None,
               resources: Mapping[str, Any] | None = None, has_source: bool = False) -> SuitePlan:
    """The cells of a suite at the task's paper levels; deterministic tests run with one seed."""
    task = canonical_task(task)
    available = {k for k, v in (resources or {}).items() if v is not None}
    seeds = parse_seeds(seeds, "seeds")
    items: list[SuiteItem] = []
    skipped: dict[str, str] = {}
    for name in suite_tests(tests, task):
        cls = REGISTRY[name]
        missing = [r for r in cls.requires if r not in available and r != "pool"]
        if missing:
            skipped[name] = f"needs {', '.join(missing)} (" + ", ".join(
                f"--{m.replace('_', '-')}" for m in missing) + ")"
            continue
        if cls.needs_source and not has_source:
            skipped[name] = "needs the source text (--source-column)"
            continue
        chosen = list((levels or {}).get(name, ())) or list(cls.levels.get(task, ()))
        if not chosen:
            skipped[name] = f"no paper level for task {task!r}; give levels explicitly"
            continue
        for level in chosen:
            for seed in (seeds[:1] if cls.deterministic else seeds):
                items.append(SuiteItem(name, level, int(seed)))
    return SuitePlan(items, skipped)


OUTPUT_SCHEMA = pa.schema([
    ("perturbed", pa.string()), ("applied", pa.bool_()), ("noise_ratio", pa.float64()),
    ("perturbation", pa.string()), ("level", pa.string()), ("seed", pa.int64())])


def cell_table(columns: Mapping[str, list[Any]]) -> pa.Table:
    """A cell's output columns as an Arrow table (compact, and cheap to send between processes)."""
    return pa.table({name: columns[name] for name in OUTPUT_SCHEMA.names}, schema=OUTPUT_SCHEMA)


# The suite's shared state, in this process or in each worker process (set once per worker).
_STATE: dict[str, Any] = {}


@dataclass
class SuiteJob:
    """A planned suite with everything its cells need: built once, then run by any engine."""

    plan: SuitePlan
    state: dict[str, Any]  # items, perturbations, texts, ids, sources, parses


def apply_item(state: Mapping[str, Any], index: int) -> dict[str, list[Any]]:
    """The output columns of cell ``index`` of a suite (pure: any process or Ray worker)."""
    item: SuiteItem = state["items"][index]
    perturbation: Perturbation = state["perturbations"][item.test]
    return perturbation.apply_rows(state["texts"], state["ids"], item.level, item.seed,
                                   sources=state["sources"],
                                   parses=state["parses"] if perturbation.needs_parse else None)


def _init_worker(state: dict[str, Any]) -> None:
    single_thread_after_fork(load_torch=False)
    _STATE.update(state)


def _run_items(indices: list[int]) -> list[tuple[int, dict[str, list[Any]]]]:
    return [(index, apply_item(_STATE, index)) for index in indices]


def _run_tables(indices: list[int]) -> list[tuple[int, pa.Table]]:
    return [(index, cell_table(apply_item(_STATE, index))) for index in indices]


def worker_tasks(items: Sequence[SuiteItem], workers: int,
                 whole: Collection[str] = ()) -> list[list[int]]:
    """Cell indices in tasks for ``workers`` processes, in the order to hand them out.

    A test in ``whole`` (one that loads CheckList, WordNet... on first use) is one task, handed
    out first: one worker pays its load while the others perturb. Every other test is split in
    at most ``workers`` tasks, biggest first, so the pool ends evenly.
    """
    by_test: dict[str, list[int]] = {}
    for index, item in enumerate(items):
        by_test.setdefault(item.test, []).append(index)
    first: list[list[int]] = []
    rest: list[list[int]] = []
    for test, indices in by_test.items():
        size = len(indices) if test in whole else -(-len(indices) // workers)
        tasks = [indices[start: start + size] for start in range(0, len(indices), size)]
        (first if test in whole else rest).extend(tasks)
    return first + sorted(rest, key=len, reverse=True)


def perturb_local(job: SuiteJob, num_proc: int | None = None) -> Iterator[tuple[int, pa.Table]]:
    """Every cell of ``job`` as (index, Arrow table), in this process or, in any order, in
    ``num_proc`` worker processes (which build the tables too: the parent only collects)."""
    indices = range(len(job.plan.items))
    if num_proc and num_proc > 1 and len(indices) > 1:
        # forked workers inherit the tests and parses; spawned ones get them once, pickled
        whole = {n for n, p in job.state["perturbations"].items() if p.loads_once()}
        with ProcessPoolExecutor(num_proc, mp_context=worker_context(), initializer=_init_worker,
                                 initargs=(job.state,)) as pool:
            tasks = [pool.submit(_run_tables, task)
                     for task in worker_tasks(job.plan.items, num_proc, whole)]
            try:
                for done in as_completed(tasks):
                    yield from done.result()
            finally:  # a worker's error (or the caller stopping) drops the tasks not started
                for task in tasks:
                    task.cancel()
    else:
        for index in indices:
            yield index, cell_table(apply_item(job.state, index))


def prepare_suite(ds: Any, tests: str | Sequence[str] = "all", task: str = "summarization",
                  seeds: Sequence[int] = DEFAULT_SEEDS, column: str = "gold",
                  id_column: str | None = "id", source_column: str | None = None,
                  levels: Mapping[str, Sequence[Level]] | None = None,
                  resources: Mapping[str, Any] | None = None,
                  num_proc: int | None = None) -> SuiteJob:
    """Plan a suite, build its tests, check every level and parse the texts once (in
    ``num_proc`` processes)."""
    check_inputs(ds, column, source_column, num_proc)
    task = canonical_task(task)
    plan = plan_suite(tests, task, seeds, levels, resources, has_source=bool(source_column))
    texts = column_values(ds, column)
    ids = (column_values(ds, id_column) if id_column and id_column in ds.column_names
           else [text_row_id(t) for t in texts])
    perturbations = build_suite_tests(plan, texts, resources, task)
    sources = column_values(ds, source_column) if source_column else None
    return SuiteJob(plan, suite_state(plan, perturbations, texts, ids, sources, num_proc))


def build_suite_tests(plan: SuitePlan, texts: Sequence[Any] | None,
                      resources: Mapping[str, Any] | None, task: str) -> dict[str, Perturbation]:
    """Each test of ``plan`` built once (a ``pool`` from ``texts``), every level checked before
    any work."""
    names = list(dict.fromkeys(item.test for item in plan.items))
    perturbations = {n: build_perturbation(n, texts, resources, task) for n in names}
    for item in plan.items:  # every level checked before doing any work
        perturbations[item.test].check_level(item.level)
    return perturbations


def suite_state(plan: SuitePlan, perturbations: Mapping[str, Perturbation], texts: list[Any],
                ids: list[Any], sources: list[Any] | None, num_proc: int | None = None
                ) -> dict[str, Any]:
    """What :func:`apply_item` needs for rows ``texts`` (all of a dataset, or one chunk of it):
    the texts parsed once (in ``num_proc`` processes) when a test needs parses."""
    parses = None
    if any(p.needs_parse for p in perturbations.values()):
        parsed = preparse(texts, num_proc)
        parses = [parsed.get(t) if is_usable_text(t) else None for t in texts]
    return dict(items=plan.items, perturbations=perturbations, texts=texts, ids=ids,
                sources=sources, parses=parses)


def run_suite(ds: Any, tests: str | Sequence[str] = "all", task: str = "summarization",
              seeds: Sequence[int] = DEFAULT_SEEDS, column: str = "gold",
              id_column: str | None = "id", source_column: str | None = None,
              levels: Mapping[str, Sequence[Level]] | None = None,
              resources: Mapping[str, Any] | None = None, num_proc: int | None = None,
              progress: bool = True) -> tuple[Any, SuitePlan]:
    """Every (test, level, seed) of a suite on ``ds``, stacked into one Dataset.

    Returns the dataset (all input columns repeated per cell, in input order within a cell, cells
    in plan order) and the plan, whose ``skipped`` says which tests did not run and why.
    The cells run as the runner's local engine runs them (:func:`perturb_local`, in
    ``num_proc`` processes): one perturbation path for ``blindspot run``, ``perturb`` and
    ``build-dataset``.
    """

    job = prepare_suite(ds, tests, task, seeds, column, id_column, source_column, levels,
                        resources, num_proc)
    # Each cell is an Arrow table as soon as it is done, so Python lists never pile up.
    tables: list[Any] = [None] * len(job.plan.items)
    bar = progress_bar(total=len(tables), desc="perturbing", unit="cell", disable=not progress,
               file=sys.stderr)
    try:
        for index, table in perturb_local(job, num_proc):
            tables[index] = table
            bar.update()
    finally:
        bar.close()
    return assemble_suite(ds, tables), job.plan


def assemble_suite(ds: Any, tables: list[Any]) -> Any:
    """The input rows repeated once per cell, side by side with the cells' output tables."""

    if not tables:  # nothing ran: no rows, but every column with its type
        inputs = ds.data.table.slice(0, 0)
        empty = pa.Table.from_arrays(inputs.columns + OUTPUT_SCHEMA.empty_table().columns,
                                     names=inputs.column_names + OUTPUT_SCHEMA.names)
        return datasets.Dataset(InMemoryTable(empty))
    added = datasets.Dataset(InMemoryTable(pa.concat_tables(tables)))
    repeated = datasets.concatenate_datasets([ds] * len(tables))
    return datasets.concatenate_datasets([repeated, added], axis=1)
