"""``blindspot report``: Table 1 of a finished run, for a paper."""

from __future__ import annotations

from pathlib import Path

import typer

from blindspot.cli._protocol import console
from blindspot.exit_codes import fail
from blindspot.report.files import atomic_write_text
from blindspot.suggest import did_you_mean


def report_table(
    results: Path = typer.Argument(..., help="a run's results.json (or its report folder)"),
    format: str = typer.Option("markdown", "--format", help="csv, latex or markdown"),
    out: Path | None = typer.Option(None, "--out", help="write the table to this file "
                                       "(default: print it)"),
) -> None:
    """Table 1 of a finished run for a paper: tests as rows, metrics as columns, each verdict
    with its relative change in % of the gold score (within-noise fails marked)."""
    from blindspot.report.table1 import FORMATS, ResultsFileError, load_results  # scipy: heavy

    if format not in FORMATS:
        fail(f"--format {format!r} is not one of {', '.join(FORMATS)}"
             f"{did_you_mean(format, FORMATS)}")
    try:
        text = FORMATS[format](load_results(results))
    except ResultsFileError as error:
        fail(str(error))
    if out is None:
        typer.echo(text, nl=False)
        return
    try:
        atomic_write_text(out, text)
    except OSError as error:
        fail(f"{out}: cannot write the table ({error.strerror}); pass --out a writable file")
    console.print(f"wrote the {format} table of {results} to {out}")
