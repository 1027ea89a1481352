"""Streaming perturbation and scoring: any number of rows in bounded memory on one machine.

The input file (JSON lines or Parquet) is read ``chunk_size`` rows at a time; each chunk is
parsed, perturbed for every (test, level, seed) cell of the suite, and scored with every metric,
then dropped. What stays in memory is one chunk plus a few running sums per (metric, cell): the
rank protocol's verdict needs only means (gold mean, each cell's mean score and noise ratio),
and every perturbed row with its scores goes to ``rows.jsonl`` on disk as it is made (chunk by
chunk, cell by cell within a chunk; each line names its row, test, level and seed).

Every test draws its randomness per row (seed, test, level, row id), so a chunked run perturbs
each row exactly as the whole-dataset run does, and the verdicts and curve means equal those of
``blindspot run`` on the same data (up to the last bits of a long float sum). Tests that draw
from the whole dataset (a ``pool`` of other rows) cannot be streamed and are refused. What a
streamed run does not give is what needs every row at once: the paired per-sample statistics
and the worst examples of ``results.json`` (the rows file has the data to compute them).

    >>> from blindspot.runner.stream import StreamSums
    >>> sums = StreamSums()
    >>> sums.add([0.5, 0.25]); sums.add([1.0])
    >>> sums.mean(), sums.n
    (0.5833333333333334, 3)
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

DEFAULT_CHUNK_SIZE = 2000


@dataclass
class StreamSums:
    """An exact running sum (as a fraction) and count, so chunking never changes a mean."""

    total: Fraction = field(default_factory=Fraction)
    n: int = 0
    n_nan: int = 0

    def add(self, values: Sequence[float]) -> None:
        for value in values:
            if value is None or math.isnan(value):
                self.n_nan += 1
            else:
                self.total += Fraction(value)
                self.n += 1

    def mean(self) -> float | None:
        return float(self.total / self.n) if self.n else None


def iter_chunks(path: str | Path, chunk_size: int) -> Iterator[dict[str, list[Any]]]:
    """The file's rows ``chunk_size`` at a time, as columns; never the whole file at once."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"data file {str(path)!r} not found")
    if chunk_size < 1:
        raise ValueError(f"chunk_size must be at least 1, got {chunk_size}")
    if path.suffix == ".parquet":
        import pyarrow.parquet as pq

        for batch in pq.ParquetFile(path).iter_batches(batch_size=chunk_size):
            yield batch.to_pydict()
        return
    if path.suffix not in (".jsonl", ".json"):
        raise ValueError(f"streaming reads .jsonl or .parquet files, not {path.name!r}")
    rows: list[dict[str, Any]] = []
    with open(path, encoding="utf-8") as fh:
        for number, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as error:
                raise ValueError(f"{path.name}, line {number}: not JSON ({error.msg}); every "
                                 "line must be one JSON object") from None
            if len(rows) == chunk_size:
                yield _columns(rows)
                rows = []
    if rows:
        yield _columns(rows)


def _columns(rows: list[dict[str, Any]]) -> dict[str, list[Any]]:
    names = list(dict.fromkeys(k for row in rows for k in row))
    return {name: [row.get(name) for row in rows] for name in names}


def _resolve(first: Mapping[str, list[Any]], columns: Mapping[str, str | None] | None
             ) -> dict[str, str | None]:
    from types import SimpleNamespace

    from blindspot.runner.data import resolve_columns

    return resolve_columns(SimpleNamespace(column_names=list(first)), columns)


class _MetricSums:
    """One metric's scorer and running sums: gold, and each cell's score and noise ratio."""

    def __init__(self, spec: Any, references: bool) -> None:
        import blindspot.scorers  # noqa: F401  (registers every scorer)
        from blindspot.runner.scorers import scorer_for
        from blindspot.scoring.base import SCORERS

        self.spec = spec
        registered = SCORERS.get(spec.metric) if spec.module is None else None
        if registered is not None and registered.corpus_level:  # before any model is loaded
            raise ValueError(f"metric {spec.name!r} is corpus-level: its score needs every row "
                             "at once and cannot be streamed; run it with `blindspot run`")
        self.scorer = scorer_for(spec, None)
        if self.scorer.uses_references == "required" and not references:
            raise ValueError(f"metric {spec.name!r} needs references; the data has no "
                             "references column (name it with --references-column)")
        self.output = spec.output or self.scorer.outputs[0]
        self.sign = 1.0 if spec.higher_is_better else -1.0
        self.gold = StreamSums()
        self.cells: dict[int, StreamSums] = {}

    def score(self, texts: list[str], references: Any, sources: Any) -> list[float]:
        from blindspot.scoring.engine import score_rows

        refs = references if self.scorer.uses_references != "none" else None
        srcs = sources if self.scorer.uses_source != "none" else None
        return [self.sign * s for s in score_rows(self.scorer, texts, refs, srcs)[self.output]]


def stream_run(data: str | Path, metrics: Any, *, out: str | Path, task: str = "summarization",
               tests: str | Sequence[str] = "fluency,consistency",
               seeds: Sequence[int] = (1, 2, 3, 4, 5),
               levels: Mapping[str, Sequence[Any]] | None = None,
               columns: Mapping[str, str | None] | None = None,
               resources: Mapping[str, Any] | None = None, chunk_size: int = DEFAULT_CHUNK_SIZE,
               tolerance: float = 1e-5, noise_cap: float = 0.6,
               progress: bool = True) -> dict[str, Any]:
    """Perturb and score ``data`` chunk by chunk; write ``summary.json`` and ``rows.jsonl``.

    Returns the summary: per metric and test, the curve points (means over rows, then seeds) and
    the rank protocol's verdict.
    """
    from tqdm.auto import tqdm

    from blindspot.parsing import get_parser
    from blindspot.perturbations.base import REGISTRY, canonical_task
    from blindspot.perturbations.dataset import build_perturbation, plan_suite
    from blindspot.runner.metric_spec import resolve_metrics

    task = canonical_task(task)
    chunks = iter_chunks(data, chunk_size)
    first = next(chunks, None)
    if first is None:
        raise ValueError(f"dataset {str(data)!r} has no rows; nothing to perturb or score")
    roles = _resolve(first, columns)
    plan = plan_suite(tests, task, seeds, levels, resources, has_source=bool(roles["source"]))
    names = list(dict.fromkeys(item.test for item in plan.items))
    pooled = [n for n in names if "pool" in REGISTRY[n].requires]
    if pooled:
        raise ValueError(f"test(s) {pooled} draw from the whole dataset (a pool of other rows) "
                         "and cannot be streamed; leave them out of --tests or use `blindspot run`")
    perturbations = {n: build_perturbation(n, None, resources, task) for n in names}
    for item in plan.items:
        perturbations[item.test].check_level(item.level)
    specs = resolve_metrics(metrics)
    sums = [_MetricSums(spec, bool(roles["references"])) for spec in specs]
    noise: dict[int, StreamSums] = {}  # each cell's noise ratio (the same for every metric)
    needs_parse = any(p.needs_parse for p in perturbations.values())
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    rows_done = 0
    bar = tqdm(desc="streaming", unit="row", disable=not progress, file=sys.stderr)
    with open(folder / "rows.jsonl", "w", encoding="utf-8") as rows_file:
        for chunk in _chain(first, chunks):
            _stream_chunk(chunk, roles, plan, perturbations, sums, noise, rows_file, rows_done,
                          needs_parse)
            if needs_parse:
                get_parser().forget()  # the disk cache keeps the parses; memory stays bounded
            count = len(chunk[roles["hypothesis"]])
            rows_done += count
            bar.update(count)
    bar.close()
    summary = _summary(plan, sums, noise, rows_done, task, tolerance, noise_cap)
    (folder / "summary.json").write_text(json.dumps(summary, indent=2, ensure_ascii=False) + "\n",
                                         encoding="utf-8")
    return summary


def _chain(first: dict[str, list[Any]], rest: Iterator[dict[str, list[Any]]]
           ) -> Iterator[dict[str, list[Any]]]:
    yield first
    yield from rest


def _stream_chunk(chunk: dict[str, list[Any]], roles: Mapping[str, str | None], plan: Any,
                  perturbations: dict[str, Any], sums: list[_MetricSums],
                  noise: dict[int, StreamSums], rows_file: Any, offset: int,
                  needs_parse: bool) -> None:
    """Perturb one chunk for every cell, score it with every metric, write its rows."""
    from blindspot.perturbations.base import is_usable_text, text_row_id
    from blindspot.perturbations.dataset import apply_item, preparse

    texts = chunk[roles["hypothesis"]]
    ids = chunk[roles["id"]] if roles["id"] else [text_row_id(t) for t in texts]
    references = chunk[roles["references"]] if roles["references"] else None
    sources = chunk[roles["source"]] if roles["source"] else None
    parses = None
    if needs_parse:
        parsed = preparse(texts)
        parses = [parsed.get(t) if is_usable_text(t) else None for t in texts]
    state = dict(items=plan.items, perturbations=perturbations, texts=texts, ids=ids,
                 sources=sources, parses=parses)
    gold_scores = []
    for metric in sums:
        scores = metric.score(list(texts), references, sources)
        metric.gold.add(scores)
        gold_scores.append(scores)
    for index, item in enumerate(plan.items):
        columns = apply_item(state, index)
        scored = []
        for metric in sums:
            scores = metric.score(columns["perturbed"], references, sources)
            cell = metric.cells.setdefault(index, StreamSums())
            cell.add(scores)
            scored.append(scores)
        noise.setdefault(index, StreamSums()).add(columns["noise_ratio"])
        for row, text in enumerate(columns["perturbed"]):
            rows_file.write(json.dumps({
                "row": offset + row, "id": ids[row], "test": item.test, "level": str(item.level),
                "seed": item.seed, "perturbed": text, "applied": bool(columns["applied"][row]),
                "noise_ratio": columns["noise_ratio"][row],
                "scores": {m.spec.name: s[row] for m, s in zip(sums, scored)},
                "gold_scores": {m.spec.name: g[row] for m, g in zip(sums, gold_scores)}},
                ensure_ascii=False) + "\n")


def _summary(plan: Any, sums: list[_MetricSums], noise: dict[int, StreamSums], rows: int,
             task: str, tolerance: float, noise_cap: float) -> dict[str, Any]:
    """Per metric and test: the curve points (level means over seeds) and the verdict."""
    from blindspot.protocols.rank import judge_curve, summarise_point

    out: dict[str, Any] = {"task": task, "rows": rows, "skipped_tests": dict(plan.skipped),
                           "metrics": {}}
    for metric in sums:
        gold_mean = metric.gold.mean()
        entry: dict[str, Any] = {"gold": {"score_mean": gold_mean, "n": metric.gold.n,
                                          "n_nan": metric.gold.n_nan}, "tests": {}}
        by_test: dict[str, dict[str, list[int]]] = {}
        for index, item in enumerate(plan.items):
            by_test.setdefault(item.test, {}).setdefault(str(item.level), []).append(index)
        for test, by_level in by_test.items():
            curve, points = [], []
            for level, indices in by_level.items():
                values = [metric.cells[i].mean() for i in indices]
                ratios = [noise[i].mean() or 0.0 for i in indices]
                ratio = sum(ratios) / len(ratios)
                nan_cells = sum(metric.cells[i].n_nan > 0 for i in indices)
                points.append(summarise_point(level, ratio, [float("nan") if v is None else v
                                                             for v in values], gold_mean))
                points[-1]["n_nan_rows"] = sum(metric.cells[i].n_nan for i in indices)
                if not nan_cells:
                    curve.append((level, ratio, values))
            if len(curve) < len(by_level) or gold_mean is None or metric.gold.n_nan:
                verdict = {"passed": None, "reason": "the metric returned NaN on some rows"}
            else:
                verdict = judge_curve(curve, gold_mean, tolerance=tolerance, noise_cap=noise_cap)
            passed = verdict["passed"]
            entry["tests"][test] = {
                "status": "undecided" if passed is None else ("pass" if passed else "fail"),
                "passed": passed, "reason": verdict["reason"],
                "points": sorted(points, key=lambda p: p["noise_ratio"])}
        out["metrics"][metric.spec.name] = entry
    return out


__all__ = ["DEFAULT_CHUNK_SIZE", "StreamSums", "iter_chunks", "stream_run"]
