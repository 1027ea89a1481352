"""The terminal view of a run: the Table-1 style summary per dataset, with colours."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table

from blindspot.report.views import (
    CELL_NOTE,
    EXPECTATIONS_TITLE,
    FIRMER,
    NOISE_MARK,
    SIGNATURES_NOTE,
    WITHIN_NOISE,
    SummaryRow,
    expectation_rows,
    metric_errors,
    metric_flags,
    signatures,
    skipped_tests,
    summary_rows,
    usage_lines,
)

_STYLES = {"pass": "green", "fail": "bold red", WITHIN_NOISE: "yellow", "error": "bold magenta",
           "undecided": "dim"}


def summary_table(name: str, data: dict[str, Any]) -> Table:
    """test x metric: verdict and relative change of the noisiest judged point."""
    table = _verdict_table(f"{name} ({data['task']}, {data['rows']} rows)",
                           ("test", "category"), data, summary_rows(data))
    table.caption = CELL_NOTE
    return table


def expectations_table(name: str, data: dict[str, Any]) -> Table | None:
    """expectation x metric: the examination paper's checks (None when the run has none)."""
    rows = expectation_rows(data)
    if not rows:
        return None
    return _verdict_table(f"{EXPECTATIONS_TITLE} ({name})", ("expectation", "tests"), data, rows)


def _verdict_table(title: str, first: tuple[str, str], data: dict[str, Any],
                   rows: list[SummaryRow]) -> Table:
    table = Table(title=title)
    for column in first:
        table.add_column(column)
    for metric in data["metrics"]:
        table.add_column(metric, justify="right")
    for row in rows:
        cells = [f"[{_STYLES.get(c.status, '')}]{c.text}[/]" if c.status in _STYLES else c.text
                 for c in row.cells]
        table.add_row(row.test, row.category, *cells)
    return table


def print_signatures(data: dict[str, Any], console: Console) -> None:
    """Under a table: each metric of ``data`` (an entry with ``metrics``) and its signature."""
    marks = signatures(data)
    if marks:
        console.print(f"[dim]{SIGNATURES_NOTE}[/]")
    for metric, text in marks:  # as written: no markup, no colour, no wrapping
        console.print(f"  {metric}: {text}", markup=False, highlight=False, soft_wrap=True)


def print_summary(results: dict[str, Any], console: Console | None = None) -> None:
    """Print every dataset's summary, skipped tests, metric errors, flags and usage."""
    console = console or Console()
    for name, data in results["datasets"].items():
        console.print(summary_table(name, data))
        print_signatures(data, console)
        expectations = expectations_table(name, data)
        if expectations is not None:
            console.print(expectations)
        for test, why in skipped_tests(data):
            console.print(f"[yellow]skipped[/] {test}: {why}")
        for metric, message in metric_errors(data):
            console.print(f"[bold magenta]metric error[/] {metric}: {message}")
        for metric, flag in metric_flags(data):
            console.print(f"[bold yellow]flag[/] {metric}: {flag}", highlight=False)
        for metric, cost in usage_lines(data):
            console.print(f"[dim]usage[/] {metric}: {cost}", highlight=False)
        if any(c.status == WITHIN_NOISE for row in summary_rows(data) for c in row.cells):
            console.print(f"[yellow]✗{NOISE_MARK}[/] fail within noise (the deciding step lies "
                          f"inside the seeds' spread or its bootstrap interval contains 0): "
                          f"{FIRMER}; the report names each deciding step")
