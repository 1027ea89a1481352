"""The ``blindspot search`` command: find perturbations a metric does not penalise, automatically
(blind-spots paper, Appendix J; :mod:`blindspot.search`).

The command is a plain function with ``typer`` defaults, registered in
:data:`blindspot.cli.COMMANDS`; its search settings are the ``search`` protocol's declared options
(:data:`blindspot.protocols.declarations.SEARCH`, through :func:`~blindspot.cli._declared.declared_options`),
and it runs the protocol as ``blindspot run --protocol search`` does, through the same
:func:`blindspot.cli._protocol.run_job` (same request, errors, summary and report line).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from blindspot.cli._declared import declared_options
from blindspot.cli._options import HYPOTHESIS_COLUMN, ID_COLUMN, REFERENCES_COLUMN, SOURCE_COLUMN
from blindspot.cli._protocol import run_job, seeds_option
from blindspot.protocols.declarations import SEARCH


@declared_options(SEARCH)
def search(
    data: str = typer.Option(..., "--data", help="jsonl/csv/parquet file, Hub id, or 'demo'"),
    metric: str = typer.Option(..., "--metric", help="the targeted metric, metric.output@model "
                               "(.output and @model optional), e.g. chrf or bertscore.f1@minilm"),
    out: Path = typer.Option(Path("search"), "--out", help="folder for results.json, report.md "
                             "and search.png"),
    task: str = typer.Option("translation", help="summarization|translation|"
                             "translation_paragraph|open_ended"),
    seeds: str = typer.Option("1,2,3", "--seeds", help="seeds of the generalisation run"),
    hypothesis_column: str | None = HYPOTHESIS_COLUMN,
    references_column: str | None = REFERENCES_COLUMN,
    source_column: str | None = SOURCE_COLUMN,
    id_column: str | None = ID_COLUMN,
    options: dict[str, Any] | None = None,
) -> None:
    """Greedy adversarial search: perturb each gold text word by word, keeping the edits the
    metric penalises least, until the noise ratio; a panel of other metrics judges the result."""
    columns = {"hypothesis": hypothesis_column, "references": references_column,
               "source": source_column, "id": id_column}
    run_job("search", out, data=[data], metrics=metric, task=task, seeds=seeds_option(seeds),
             columns=columns, options=options or {})
