"""The command-line options that name the data's columns, shared by ``blindspot run`` and
``blindspot search`` (typer option objects are plain metadata, safe to reuse as defaults)."""

from __future__ import annotations

import typer

HYPOTHESIS_COLUMN = typer.Option(None, help="the gold text to perturb and score "
                                            "(default: gold or hypothesis)")
REFERENCES_COLUMN = typer.Option(None, help="references: a string or a list "
                                            "(default: references or reference)")
SOURCE_COLUMN = typer.Option(None, help="source text (default: source)")
ID_COLUMN = typer.Option(None, help="row id (default: id, else a text hash)")
