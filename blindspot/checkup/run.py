"""``blindspot checkup``: run every check on one metric and write the report folder.

``results.json`` (schema 1): ``{"schema_version", "kind": "checkup", "tool", "metric": the
spec, "data": {"name", "task", "rows", "columns"}, "settings": {"seed", "max_words",
"tolerance"}, "checks": {name: {"name", "title", "verdict", "summary", "figures"}}}``; the
verdicts are pass | warn | fail | info | skipped | error (:mod:`blindspot.checkup.checks`).
``report.md`` has one section per check, its verdict first.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from rich.table import Table

from blindspot.checkup.checks import CHECKS, TOLERANCE, CheckContext, run_check
from blindspot.perturbations.base import canonical_task
from blindspot.progress import progress_bar
from blindspot.report import markdown as md
from blindspot.report.files import atomic_write_text
from blindspot.report.views import signatures
from blindspot.report.writer import MARKDOWN_FILE, RESULTS_FILE, results_json
from blindspot.runner.data import load_gold_data
from blindspot.runner.entries import signature
from blindspot.runner.entries import tool as _tool
from blindspot.runner.metric_spec import resolve_metrics
from blindspot.runner.summary import print_signatures
from blindspot.scoring.probe import CheckRows, as_reference_lists

SCHEMA_VERSION = 1
DEFAULT_ROWS = 64
#: The checks that render their figures as a table.
TABLES = {check.name: check.table for check in CHECKS if check.table is not None}


def _metric_text(metric: Any) -> str | None:
    return metric.strip() if isinstance(metric, str) else None


def load_rows(data: Any, task: str, columns: Mapping[str, str | None] | None, split: str,
              rows: int) -> tuple[Any, CheckRows]:
    """The gold data and its first ``rows`` rows as :class:`CheckRows`."""
    if rows < 2:
        raise ValueError(f"--rows must be at least 2 (an unrelated gold comes from another "
                         f"row), got {rows}")
    gold = load_gold_data(data, task, columns, split)
    keep = min(rows, gold.dataset.num_rows)

    def first(values: list[Any] | None) -> list[Any] | None:
        return None if values is None else values[:keep]

    return gold, CheckRows(gold.texts()[:keep],
                           as_reference_lists(first(gold.column("references"))),
                           first(gold.column("source")))


def run_checkup(metric: Any, data: Any, *, task: str = "summarization",
                columns: Mapping[str, str | None] | None = None, split: str = "test",
                metric_options: Mapping[str, Mapping[str, Any]] | None = None,
                rows: int = DEFAULT_ROWS, seed: int = 0, max_words: int = 2048,
                out: str | Path | None = None) -> dict[str, Any]:
    """Every check of :data:`~blindspot.checkup.checks.CHECKS` on ``metric`` (one spec, a
    module or a function); writes ``out`` when given. Returns the results dict."""
    task = canonical_task(task)  # a misspelt task is refused with "did you mean", as by `run`
    specs = resolve_metrics(metric, metric_options)
    if len(specs) != 1:
        raise ValueError(f"checkup examines one metric at a time; got {len(specs)} "
                         f"({', '.join(s.name for s in specs)})")
    spec = specs[0]
    if max_words < 32:
        raise ValueError(f"--max-words must be at least 32, got {max_words}")
    gold, checked = load_rows(data, task, columns, split, rows)
    idf = [r for refs in checked.references for r in refs] if checked.references else None
    ctx = CheckContext(spec, _metric_text(metric), json.loads(json.dumps(
        {k: dict(v) for k, v in (metric_options or {}).items()})), checked, idf, seed, max_words)
    if ctx.scorer().corpus_level:
        raise ValueError(f"metric {spec.name!r} is corpus-level: a check-up compares per-row "
                         f"scores")
    results = {"schema_version": SCHEMA_VERSION, "kind": "checkup", "tool": _tool(),
               "metric": spec.as_json(), "signature": signature(spec, ctx.scorer(), (seed,)),
               "data": {"name": gold.name, "task": task, "rows": len(checked),
                        "columns": gold.columns},
               "settings": {"seed": seed, "max_words": max_words, "tolerance": TOLERANCE},
               "checks": _run_checks(ctx, spec.name)}
    if out is not None:
        write_checkup_report(results, Path(out))
    return results


def _run_checks(ctx: CheckContext, name: str) -> dict[str, Any]:
    """Every check, in order, under a progress bar that names the check in progress and
    forecasts the rest from the pace so far (a check-up runs minutes on a model metric)."""
    results = {}
    bar = progress_bar(CHECKS, desc=f"check-up of {name}", unit="check")
    for check in bar:
        bar.set_postfix_str(check.name, refresh=True)
        results[check.name] = run_check(check, ctx).as_json()
    return results


# -- the report ---------------------------------------------------------------------------------


def _number(value: Any) -> str:
    return "-" if value is None else (f"{value:.4g}" if isinstance(value, float) else str(value))


def _section(check: dict[str, Any]) -> list[str]:
    lines = [f"## {check['title']}: **{check['verdict']}**", "", check["summary"], ""]
    figures = check["figures"]
    table = TABLES.get(check["name"])
    if table is not None and check["verdict"] != "error":
        header, rows = table(figures)
        lines += ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        lines += ["| " + " | ".join(_number(v) for v in row) + " |" for row in rows]
    else:
        lines += [f"- {key}: `{json.dumps(value, default=str)[:600]}`"
                  for key, value in figures.items()]
    return lines + [""]


def render_markdown(results: dict[str, Any]) -> str:
    data, settings = results["data"], results["settings"]
    lines = [f"# Check-up of {results['metric']['name']}", "",
             f"{data['rows']} rows of {data['name']} (task {data['task']}); seed "
             f"{settings['seed']}; differences above {settings['tolerance']:g} are flagged; "
             f"scores in the metric's own units "
             f"({'higher' if results['metric']['higher_is_better'] else 'lower'} is better).",
             "", "| check | verdict | summary |", "|---|---|---|"]
    lines += [f"| {c['title']} | {c['verdict']} | {c['summary']} |"
              for c in results["checks"].values()]
    lines += ["", *md.signature_lines(signatures(_signed(results)))]
    for check in results["checks"].values():
        lines += _section(check)
    return "\n".join(lines)


def write_checkup_report(results: dict[str, Any], out: Path) -> dict[str, Path]:
    text = results_json(results)
    out.mkdir(parents=True, exist_ok=True)
    return {"results": atomic_write_text(out / RESULTS_FILE, text),
            "markdown": atomic_write_text(out / MARKDOWN_FILE, render_markdown(results))}


def print_summary(results: dict[str, Any], console: Any) -> None:
    table = Table(title=f"check-up of {results['metric']['name']} on {results['data']['name']}")
    for column in ("check", "verdict", "summary"):
        table.add_column(column, overflow="fold")
    for check in results["checks"].values():
        table.add_row(check["title"], check["verdict"], check["summary"])
    console.print(table)
    print_signatures(_signed(results), console)


def _signed(results: dict[str, Any]) -> dict[str, Any]:
    """The examined metric with its signature, as the signature views read a table's metrics
    (a check-up written before signatures has none, and shows none)."""
    return {"metrics": {results["metric"]["name"]: {"signature": results.get("signature")}}}


def checkup_exit_code(results: dict[str, Any]) -> int:
    """2 when a check ended in error (the run's contract), else 0."""
    return 2 if any(c["verdict"] == "error" for c in results["checks"].values()) else 0


__all__ = ["DEFAULT_ROWS", "checkup_exit_code", "load_rows", "print_summary", "render_markdown",
           "run_checkup", "write_checkup_report"]
