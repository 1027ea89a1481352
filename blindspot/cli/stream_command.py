"""``blindspot stream``: an alias of ``blindspot run --chunk-size N`` kept for its users, with
the options a streamed rank run takes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from blindspot import defaults
from blindspot.cli._declared import declared_options
from blindspot.cli._options import (
    FAIL_ON,
    HYPOTHESIS_COLUMN,
    ID_COLUMN,
    REFERENCES_COLUMN,
    SEEDS_TEXT,
    SOURCE_COLUMN,
    resources,
)
from blindspot.cli._protocol import run_job, seeds_option
from blindspot.exit_codes import FailOn
from blindspot.protocols.declarations import RANK

#: the rows a streamed run holds in memory at a time, unless ``--chunk-size`` says otherwise
STREAM_CHUNK = 2000


@declared_options(RANK, "chunk_size", defaults={"chunk_size": STREAM_CHUNK})
def stream(
    data: Path = typer.Option(..., "--data", help="a .jsonl or .parquet file, read chunk by "
                              "chunk"),
    metrics: str = typer.Option("rouge", help="comma-separated metric specs (row-level ones)"),
    task: str = typer.Option("summarization", help="summarization|translation|"
                             "translation_paragraph|open_ended"),
    tests: str = typer.Option(defaults.TESTS, help="suites and/or test names"),
    out: Path = typer.Option(Path("stream"), "--out", help="report folder"),
    seeds: str = typer.Option(SEEDS_TEXT, help="seeds of the random tests"),
    hypothesis_column: str | None = HYPOTHESIS_COLUMN,
    references_column: str | None = REFERENCES_COLUMN,
    source_column: str | None = SOURCE_COLUMN,
    id_column: str | None = ID_COLUMN,
    lm: str | None = typer.Option(None, help="causal-LM tokenizer for positioned error"),
    ngram_corpus: str | None = typer.Option(None, help="corpus file for frequent n-gram"),
    noise_cap: float = typer.Option(defaults.NOISE_CAP, help="judge only points below this noise ratio"),
    fail_on: FailOn = FAIL_ON,
    options: dict[str, Any] | None = None,
) -> None:
    """`blindspot run --chunk-size 2000`: the main job on a file of any size, in bounded memory."""
    columns = {"hypothesis": hypothesis_column, "references": references_column,
               "source": source_column, "id": id_column}
    run_job("rank", out, data=[str(data)], metrics=metrics, task=task, tests=tests,
             seeds=seeds_option(seeds), columns=columns,
             resources=resources(None, lm, ngram_corpus), noise_cap=noise_cap,
             options=options or {}, fail_on=fail_on)
