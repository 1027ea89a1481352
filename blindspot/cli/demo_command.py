"""``blindspot demo`` (what ``make demo`` runs): the main job on the embedded demo corpus."""

from __future__ import annotations

from pathlib import Path

import typer

from blindspot.cli._protocol import console, seeds_option


def demo(out: Path = typer.Option(Path("out/demo"), help="output folder (one report per task)"),
         seeds: str = typer.Option("1,2,3", help="seeds of the random tests"),
         num_proc: int | None = typer.Option(None, help="worker processes")) -> None:
    """The main job on the embedded demo corpus: offline metrics judged on every test, reported."""
    from blindspot.demo_job import run_demo  # the protocols and the plots: not for --help

    run_demo(out, seeds_option(seeds), num_proc=num_proc, console=console)
