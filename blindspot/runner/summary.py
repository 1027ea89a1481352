"""The terminal view of a run: the Table-1 style summary per dataset, with colours."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table

from blindspot.report.views import metric_errors, skipped_tests, summary_rows

_STYLES = {"pass": "green", "fail": "bold red", "error": "bold magenta", "undecided": "dim"}


def summary_table(name: str, data: dict[str, Any]) -> Table:
    """test x metric: verdict and relative change of the noisiest judged point."""
    table = Table(title=f"{name} ({data['task']}, {data['rows']} rows)")
    table.add_column("test")
    table.add_column("category")
    for metric in data["metrics"]:
        table.add_column(metric, justify="right")
    for row in summary_rows(data):
        cells = [f"[{_STYLES.get(c.status, '')}]{c.text}[/]" if c.status in _STYLES else c.text
                 for c in row.cells]
        table.add_row(row.test, row.category, *cells)
    return table


def print_summary(results: dict[str, Any], console: Console | None = None) -> None:
    """Print every dataset's summary, skipped tests and metric errors."""
    console = console or Console()
    for name, data in results["datasets"].items():
        console.print(summary_table(name, data))
        for test, why in skipped_tests(data):
            console.print(f"[yellow]skipped[/] {test}: {why}")
        for metric, message in metric_errors(data):
            console.print(f"[bold magenta]metric error[/] {metric}: {message}")
