"""The ``search`` protocol (:mod:`blindspot.protocols.interface`): its declared options, a
:class:`ProtocolRequest` to :func:`blindspot.search.search_result`, its report, its terminal
summary, and what ``evaluate.load("blindspot/blindspot").compute(..., protocol="search")``
returns."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from blindspot.errors import DataRoles, MetricNeeds
from blindspot.protocols.declarations import SEARCH
from blindspot.protocols.interface import Protocol, ProtocolRequest, single_data
from blindspot.report.files import ReportFiles
from blindspot.report.terminal import print_signatures
from blindspot.runner.data import gold_inputs
from blindspot.search.job import SearchResult, generalisation_state, search_result


class SearchProtocol(Protocol[SearchResult]):
    declaration = SEARCH

    def inputs(self, request: ProtocolRequest) -> tuple[list[DataRoles], list[MetricNeeds]]:
        """The gold data's columns and the metrics' needs, checked before any work; the gold
        plays the reference where the data has none (the search's objective, search/panel.py)."""
        data, metrics = gold_inputs(request)
        return [replace(source, roles={**source.roles,
                                       "references": source.roles.get("references")
                                       or source.roles.get("hypothesis")})
                for source in data], metrics

    def execute(self, request: ProtocolRequest) -> SearchResult:
        """Run the search (its options checked against ``SEARCH.options``); the masked LM
        defaults to the request's ``mlm``."""
        options = dict(request.options)
        options.setdefault("mlm", (request.resources or {}).get("mlm"))
        return search_result(single_data("search", request.data), request.metrics,
                             columns=request.columns, task=request.task, split=request.split,
                             metric_options=request.metric_options,
                             state_dir=generalisation_state(request.out),
                             progress=request.progress, generalise_seeds=request.seeds,
                             **options)

    def render(self, result: SearchResult) -> ReportFiles:
        return result.render()

    def summarise(self, result: SearchResult, console: Console) -> None:
        """Each metric's mean relative change on the perturbed texts, and the top patterns."""
        results = result.to_dict()
        summary, budget = results["summary"], results["budget"]
        table = Table(title=f"search against {results['config']['metric']['name']} "
                            f"({summary['reached']}/{summary['examples']} reached noise ratio "
                            f"{results['config']['noise_ratio']:g})")
        for column in ("metric", "role", "vs. gold", "vs. references"):
            table.add_column(column, justify="left" if column in ("metric", "role") else "right")
        for name, entry in summary["metrics"].items():
            cells = [f"{entry[v]:+.2f}%" if entry.get(v) is not None else "n/a"
                     for v in ("gold", "references")]
            style = "bold red" if entry["role"] == "target" else ""
            table.add_row(f"[{style}]{name}[/]" if style else name, entry["role"], *cells)
        console.print(table)
        print_signatures(summary, console)
        patterns = ", ".join(f"{p['pattern']} ({p['count']})" for p in results["patterns"][:5])
        console.print(f"top patterns: {patterns or 'none'}")
        console.print(f"metric calls: {budget['calls_used']}"
                      + (f" (stopped by {budget['stopped_by']})" if budget["stopped_by"] else ""))
        note = results["config"]["candidates"]["note"]
        if note:
            console.print(f"[yellow]note:[/] {note}")
        found = results.get("generalisation")
        if found:
            console.print(f"patterns generalise (rank protocol, {found['rows']} rows): "
                          f"{found['generalises']}")

    def view(self, result: SearchResult) -> dict[str, Any]:
        """What the ``blindspot`` evaluate module returns for a search."""
        results = result.to_dict()
        summary = results["summary"]
        return {"metric": results["config"]["metric"]["name"],
                "relative_change": {n: e.get("gold") for n, e in summary["metrics"].items()},
                "reached": summary["reached"], "patterns": results["patterns"],
                "perturbed": [e["perturbed"] for e in results["examples"]],
                "generalises": (results.get("generalisation") or {}).get("generalises"),
                "results": results}


def run_search(data: Any, metric: Any, *, out: str | Path | None = None,
               generalise_seeds: Sequence[int] | None = None, **settings: Any) -> dict[str, Any]:
    """The search protocol from Python (``SearchProtocol().run``) as the results dict; with
    ``out``, its report folder written there (results.json, report.md, the plot and, with
    ``generalise``, the rank run's folder). ``settings`` are the request's fields (``task``,
    ``columns``, ``split``, ``metric_options``, ``progress``) and the search's declared options
    (``noise_ratio``, ``panel``, ``max_calls``...), checked as ``--protocol-option`` is;
    ``generalise_seeds`` are the seeds of the generalisation run."""
    if generalise_seeds is not None:
        settings["seeds"] = generalise_seeds
    return SearchProtocol().run(ProtocolRequest.of(data, metric, out=out, **settings)).to_dict()


__all__ = ["SearchProtocol", "run_search"]
