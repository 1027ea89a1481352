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
    rows: int = typer.Option(64, help="check the first N rows"),
    seed: int = typer.Option(0, help="seed of the shuffled-word and random-character anchors "
                             "and of the appended text"),
    max_words: int = typer.Option(2048, help="truncation check: append at most this many "
                                  "words before reporting no limit"),
) -> None:
    """A metric's check-up: batch/order invariance, determinism, the input length it is blind
    past, normalisation, reference handling and sanity anchors in score units."""
    from blindspot.checkup.run import checkup_exit_code, print_summary, run_checkup

    columns = {"hypothesis": hypothesis_column, "references": references_column,
               "source": source_column, "id": id_column}
    try:
        results = run_checkup(metric, data, task=task, columns=columns, split=split,
                              metric_options=parse_options(option), rows=rows, seed=seed,
                              max_words=max_words, out=out)
    except (ValueError, KeyError, FileNotFoundError) as error:
        fail(str(error).strip("'\""))
    print_summary(results, console)
    console.print(f"[bold]report:[/] {(out / 'report.md').resolve()}")
    raise typer.Exit(code=checkup_exit_code(results))
