"""``blindspot checkup``: what trips users of one metric besides noise.

The ``checkup`` protocol (``blindspot run --protocol checkup`` runs the same), through
:func:`blindspot.cli._protocol.run_job`; its settings (``--rows``, ``--seed``, ``--max-words``)
are the protocol's declared options (:data:`blindspot.protocols.declarations.CHECKUP`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from blindspot.cli._declared import declared_options
from blindspot.cli._options import (
    HYPOTHESIS_COLUMN,
    ID_COLUMN,
    METRIC_OPTION,
    REFERENCES_COLUMN,
    SOURCE_COLUMN,
    SPLIT,
    parse_options,
)
from blindspot.cli._protocol import run_job
from blindspot.protocols.declarations import CHECKUP


@declared_options(CHECKUP)
def checkup(
    metric: str = typer.Argument(..., help="one metric spec (rouge, bertscore.f1@minilm), "
                                 "my_metric.py:function, ./module_folder/ or org/hub_module"),
    data: str = typer.Option(..., "--data", help="jsonl/csv/parquet file, Hub id, or 'demo'"),
    task: str = typer.Option("summarization", help="summarization|translation|"
                             "translation_paragraph|open_ended"),
    out: Path = typer.Option(Path("checkup"), "--out", help="report folder"),
    option: list[str] = METRIC_OPTION,
    split: str = SPLIT,
    hypothesis_column: str | None = HYPOTHESIS_COLUMN,
    references_column: str | None = REFERENCES_COLUMN,
    source_column: str | None = SOURCE_COLUMN,
    id_column: str | None = ID_COLUMN,
    options: dict[str, Any] | None = None,
) -> None:
    """A metric's check-up: batch/order invariance, determinism, the input length it is blind
    past, normalisation, reference handling and sanity anchors in score units."""
    columns = {"hypothesis": hypothesis_column, "references": references_column,
               "source": source_column, "id": id_column}
    run_job(CHECKUP.name, out, data=data, metrics=metric, task=task, columns=columns,
            split=split, metric_options=parse_options(option), options=options or {})
