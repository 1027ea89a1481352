"""The ``checkup`` protocol: run every check on one metric; its result and report folder.

``blindspot checkup METRIC``, the Space's check-up tab and ``blindspot run --protocol checkup``
run it through the protocol registry (its declaration and options:
:data:`blindspot.protocols.declarations.CHECKUP`). ``results.json`` (schema 1):
``{"schema_version", "kind": "checkup", "tool", "metric": the spec, "signature", "data":
{"name", "task", "rows", "columns"}, "settings": {"seed", "max_words", "tolerance"}, "checks":
{name: {"name", "title", "verdict", "summary", "figures"}}}`` (:class:`CheckupResult`; no
``protocol`` key: ``kind`` has said what wrote it since the first check-up); the verdicts are
pass | warn | fail | info | skipped | error (:mod:`blindspot.checkup.checks`). ``report.md`` has
one section per check, its verdict first.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from rich.console import Console
from rich.table import Table

from blindspot.checkup.checks import CHECKS, TOLERANCE, CheckContext, run_check
from blindspot.errors import DataRoles, MetricNeeds
from blindspot.perturbations.perturbation import canonical_task
from blindspot.progress import progress_bar
from blindspot.protocols.declarations import CHECKUP
from blindspot.protocols.interface import (
    Protocol,
    ProtocolRequest,
    ProtocolResult,
    get_protocol,
    single_data,
)
from blindspot.report import markdown as md
from blindspot.report.files import MARKDOWN_FILE, ReportFiles
from blindspot.report.terminal import print_signatures
from blindspot.report.views import signatures
from blindspot.runner.data import gold_inputs, load_gold_data
from blindspot.runner.entries import signature
from blindspot.runner.entries import tool as _tool
from blindspot.runner.metric_spec import resolve_metrics
from blindspot.scoring.probe import CheckRows, as_reference_lists

SCHEMA_VERSION = 1
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


@dataclass(kw_only=True)
class CheckupResult(ProtocolResult):
    """results.json of a check-up (layout: this module's docstring): the metric examined, its
    signature, the rows checked, the settings and every check's verdict and figures."""

    schema_version: int = SCHEMA_VERSION
    protocol: str = CHECKUP.name
    kind: str = "checkup"
    metric: dict[str, Any]
    signature: str | None
    data: dict[str, Any]
    settings: dict[str, Any]
    checks: dict[str, Any]

    #: a check-up's results.json never had the ``protocol`` key (``kind`` says it)
    UNSAVED: ClassVar[tuple[str, ...]] = ("protocol",)

    def to_dict(self) -> dict[str, Any]:
        """The results dict; ``kind`` follows ``schema_version`` (results.json's key order)."""
        saved = super().to_dict()
        return {k: saved[k] for k in ("schema_version", "kind")} | saved


def _one_metric(metrics: Any) -> Any:
    """The one metric of a request (a spec, a module or a function; a list of one)."""
    if isinstance(metrics, (list, tuple)) and len(metrics) == 1:
        return metrics[0]
    return metrics


def checkup_result(metric: Any, data: Any, *, task: str, columns: Mapping[str, str | None] | None,
                   split: str, metric_options: Mapping[str, Mapping[str, Any]] | None,
                   rows: int, seed: int, max_words: int) -> CheckupResult:
    """Every check of :data:`~blindspot.checkup.checks.CHECKS` on ``metric`` (one spec, a
    module or a function); nothing written."""
    task = canonical_task(task)  # a misspelt task is refused with "did you mean", as by `run`
    specs = resolve_metrics(metric, metric_options)
    if len(specs) != 1:
        raise ValueError(f"checkup examines one metric at a time; got {len(specs)} "
                         f"({', '.join(s.name for s in specs)})")
    spec = specs[0]
    gold, checked = load_rows(data, task, columns, split, rows)
    idf = [r for refs in checked.references for r in refs] if checked.references else None
    ctx = CheckContext(spec, _metric_text(metric), json.loads(json.dumps(
        {k: dict(v) for k, v in (metric_options or {}).items()})), checked, idf, seed, max_words)
    if ctx.scorer().corpus_level:
        raise ValueError(f"metric {spec.name!r} is corpus-level: a check-up compares per-row "
                         f"scores")
    return CheckupResult(tool=_tool(), metric=spec.as_json(),
                         signature=signature(spec, ctx.scorer(), (seed,)),
                         data={"name": gold.name, "task": task, "rows": len(checked),
                               "columns": gold.columns},
                         settings={"seed": seed, "max_words": max_words, "tolerance": TOLERANCE},
                         checks=_run_checks(ctx, spec.name))


def run_checkup(metric: Any, data: Any, *, task: str = "summarization",
                columns: Mapping[str, str | None] | None = None, split: str = "test",
                metric_options: Mapping[str, Mapping[str, Any]] | None = None,
                out: str | Path | None = None, **options: Any) -> dict[str, Any]:
    """The ``checkup`` protocol's run (:meth:`Protocol.run`: ``options`` -- ``rows``, ``seed``,
    ``max_words`` -- checked, the result, the report folder with ``out``) as the results
    dict."""
    request = ProtocolRequest(data, metric, task=task, columns=columns, split=split,
                              metric_options=metric_options, out=out, options=options)
    return get_protocol(CHECKUP.name).run(request).to_dict()


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


class CheckupProtocol(Protocol[CheckupResult]):
    """``blindspot checkup METRIC --data ...`` (or ``run --protocol checkup``): one metric
    (``request.metrics``), the first ``rows`` rows of one dataset."""

    declaration = CHECKUP

    def inputs(self, request: ProtocolRequest) -> tuple[list[DataRoles], list[MetricNeeds]]:
        """The gold data's columns and the metrics' needs, checked before any work."""
        return gold_inputs(request)

    def ended_in_error(self, result: CheckupResult) -> list[str]:
        """The checks that ended in error (a check-up has no tests: 2 means one of these)."""
        return [name for name, check in result.to_dict()["checks"].items()
                if check["verdict"] == "error"]

    def execute(self, request: ProtocolRequest) -> CheckupResult:
        settings = CHECKUP.settings(request.options)
        return checkup_result(_one_metric(request.metrics), single_data(self.name, request.data),
                              task=request.task, columns=request.columns, split=request.split,
                              metric_options=request.metric_options, **settings)

    def render(self, result: CheckupResult) -> ReportFiles:
        """results.json and report.md (:func:`render_markdown`)."""
        results = result.to_dict()
        return ReportFiles(results, {MARKDOWN_FILE: render_markdown(results)})

    def summarise(self, result: CheckupResult, console: Console) -> None:
        print_summary(result.to_dict(), console)

    def view(self, result: CheckupResult) -> dict[str, Any]:
        """What ``compute(protocol="checkup")`` returns: each check's verdict and the whole
        results."""
        results = result.to_dict()
        return {"metric": results["metric"]["name"],
                "verdicts": {n: c["verdict"] for n, c in results["checks"].items()},
                "results": results}


__all__ = ["CheckupProtocol", "CheckupResult", "checkup_result",
           "load_rows", "print_summary", "render_markdown", "run_checkup"]
