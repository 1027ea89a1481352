"""``blindspot metrics``: every registered metric with its declared facts; ``blindspot modules``:
the metric modules (``metrics/<name>/``) and the docs' metric tables, generated from the scorers."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.table import Table

from blindspot.cli._protocol import console
from blindspot.evaluate_modules import (
    METRIC_COLUMNS,
    docs_folder,
    entry_cells,
    metric_entries,
    metrics_root,
    stale_modules,
    write_modules,
)
from blindspot.exit_codes import fail


def list_metrics(as_json: bool = typer.Option(False, "--json", help="print JSON instead of a table")
                 ) -> None:
    """List every registered metric (a plugin's too): lexical or model, its outputs (the judged one
    first), their scale, the columns it reads and its evaluate module."""
    try:
        entries = metric_entries()
    except ValueError as error:  # a plugin that does not load
        fail(str(error))
    if as_json:
        console.print_json(json.dumps(entries))
        return
    table = Table(title="blindspot metrics (--metrics NAME, evaluate.load(MODULE))")
    for column in METRIC_COLUMNS:
        table.add_column(column, overflow="fold")
    for entry in entries:
        table.add_row(*entry_cells(entry))
    console.print(table)


def modules(out: Path | None = typer.Option(None, help="the metrics folder to write into "
                                                       "(default: the checkout's metrics/)"),
            docs: Path | None = typer.Option(None, help="the docs folder whose metric tables to "
                                                        "write (default: the checkout's docs/)"),
            check: bool = typer.Option(False, "--check", help="write nothing: list what differs "
                                                              "and exit 1 if anything does")
            ) -> None:
    """Write each registered metric's evaluate module folder (script, card, requirements, Space
    app) from its scorer's declared card, and the metric tables of docs/metrics.md and
    docs/metric-reference.md from the registry."""
    root = out or metrics_root()
    pages = docs or docs_folder()
    try:
        if check:
            stale = stale_modules(root, pages)
            for line in stale:
                console.print(line, soft_wrap=True)
            if stale:
                fail(f"{len(stale)} generated files differ from the scorers' declarations; "
                     "run `blindspot modules` to write them")
            console.print(f"the modules in {root} and the tables in {pages} are current")
            return
        changed = write_modules(root, pages)
    except ValueError as error:
        fail(str(error))
    for path in changed:
        console.print(f"wrote {path}", soft_wrap=True)
    console.print(f"{len(changed)} files written; the rest were current")
