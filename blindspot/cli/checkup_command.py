"""``blindspot checkup``: what trips users of one metric besides noise."""

from __future__ import annotations

from pathlib import Path

import typer

from blindspot.cli._options import (
    HYPOTHESIS_COLUMN,
    ID_COLUMN,
    METRIC_OPTION,
    REFERENCES_COLUMN,
    SOURCE_COLUMN,
    SPLIT,
    parse_options,
)
from blindspot.cli._protocol import console
from blindspot.exit_codes import fail
from blindspot.protocols.declarations import CHECKUP
from blindspot.protocols.registry import ProtocolRequest, get_protocol
from blindspot.report.files import MARKDOWN_FILE


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
    rows: int = typer.Option(CHECKUP.option("rows").default,
                             help=CHECKUP.option("rows").help),
    seed: int = typer.Option(CHECKUP.option("seed").default, help=CHECKUP.option("seed").help),
    max_words: int = typer.Option(CHECKUP.option("max_words").default,
                                  help=CHECKUP.option("max_words").help),
) -> None:
    """A metric's check-up: batch/order invariance, determinism, the input length it is blind
    past, normalisation, reference handling and sanity anchors in score units."""
    from blindspot.checkup.run import checkup_exit_code  # the checks' libraries: heavy

    columns = {"hypothesis": hypothesis_column, "references": references_column,
               "source": source_column, "id": id_column}
    protocol = get_protocol(CHECKUP.name)
    try:
        result = protocol.run(ProtocolRequest(
            data, metric, task=task, columns=columns, split=split,
            metric_options=parse_options(option), out=out,
            options={"rows": rows, "seed": seed, "max_words": max_words}))
    except (ValueError, KeyError, FileNotFoundError) as error:
        fail(str(error).strip("'\""))
    protocol.summarise(result, console)
    console.print(f"[bold]report:[/] {(out / MARKDOWN_FILE).resolve()}")
    raise typer.Exit(code=checkup_exit_code(result.to_dict()))
