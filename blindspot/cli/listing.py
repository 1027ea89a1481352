"""``blindspot list`` and ``blindspot protocols``: the tests and the protocols, as tables."""

from __future__ import annotations

import json

import typer
from rich.table import Table

from blindspot.cli._protocol import console
from blindspot.exit_codes import fail
from blindspot.protocols.interface import PROTOCOLS


def list_tests(task: str | None = typer.Option(None, help="only tests the paper runs on this task"),
               as_json: bool = typer.Option(False, "--json", help="print JSON instead of a table")
               ) -> None:
    """List every perturbation with its category, paper levels per task and needs."""
    from blindspot.perturbations import list_perturbations  # every test module

    try:
        entries = list_perturbations(task)
    except ValueError as error:
        fail(str(error))
    if as_json:
        console.print_json(json.dumps(entries))
        return
    table = Table(title="blindspot perturbations")
    for col in ("test", "category", "levels (sum / wmt / ted / wiki)", "needs", "description"):
        table.add_column(col, overflow="fold")
    for e in entries:
        lv = e["levels"]
        levels = " / ".join(",".join(lv[t]) or "-" for t in
                            ("summarization", "translation", "translation_paragraph", "open_ended"))
        table.add_row(e["name"], e["category"], levels, ",".join(e["needs"]) or "-",
                      e["description"])
    console.print(table)


def list_protocols() -> None:
    """List the meta-evaluation protocols, what each measures, and their --protocol-option
    settings."""
    protocols = Table(title="blindspot protocols (--protocol NAME)")
    for col in ("protocol", "what it measures"):
        protocols.add_column(col, overflow="fold")
    for protocol in PROTOCOLS.values():
        protocols.add_row(protocol.name, protocol.description)
    console.print(protocols)
    table = Table(title="their options (--protocol-option key=value)")
    for col in ("protocol", "option", "accepts", "default", "Space", "help"):
        table.add_column(col, overflow="fold")
    for protocol in PROTOCOLS.values():
        for spec in protocol.options:
            space = "upload" if spec.file else ("yes" if spec.visitor_safe else "no")
            table.add_row(protocol.name, spec.name, spec.accepted(),
                          "-" if spec.default is None else str(spec.default), space, spec.help)
    console.print(table)
