"""The ``blindspot search`` command: find perturbations a metric does not penalise, automatically
(blind-spots paper, Appendix J; :mod:`blindspot.search`).

The command is a plain function with ``typer`` defaults, registered in
:data:`blindspot.cli.COMMANDS`; it runs the ``search`` protocol as ``blindspot run
--protocol search`` does, through the same :func:`blindspot.cli._protocol.run_job` (same request,
errors, summary and report line).
"""

from __future__ import annotations

from pathlib import Path

import typer

from blindspot.cli._options import HYPOTHESIS_COLUMN, ID_COLUMN, REFERENCES_COLUMN, SOURCE_COLUMN
from blindspot.cli._protocol import run_job, seeds_option


def search(
    data: str = typer.Option(..., "--data", help="jsonl/csv/parquet file, Hub id, or 'demo'"),
    metric: str = typer.Option(..., "--metric", help="the targeted metric, metric.output@model "
                               "(.output and @model optional), e.g. chrf or bertscore.f1@minilm"),
    noise_ratio: float = typer.Option(0.1, "--noise-ratio", help="target noise ratio per text"),
    out: Path = typer.Option(Path("search"), "--out", help="folder for results.json, report.md "
                             "and search.png"),
    panel: str = typer.Option(",".join(("chrf", "bleu", "rouge", "bertscore.f1@minilm")),
                              "--panel", help="other metrics judging the perturbed texts "
                              "(the target's family is left out); '' for none"),
    mlm: str | None = typer.Option(None, "--mlm", help="masked LM for top-k candidates (Hub id "
                                      "or folder); without it, embedding neighbours only"),
    embedding_model: str = typer.Option("minilm", "--embedding-model", help="model whose input "
                                        "embeddings give nearest-word candidates ('' for none)"),
    k: int = typer.Option(8, "--k", help="candidates per source and word"),
    max_calls: int | None = typer.Option(None, "--max-calls", help="budget: scored candidate "
                                            "texts (deterministic)"),
    max_seconds: float | None = typer.Option(None, "--max-seconds", help="budget: wall time "
                                                "(output then depends on machine speed)"),
    seed: int = typer.Option(0, "--seed", help="breaks exact ties between edits"),
    limit: int | None = typer.Option(None, "--limit", help="search only the first N rows"),
    task: str = typer.Option("translation", help="summarization|translation|"
                             "translation_paragraph|open_ended"),
    generalise: bool = typer.Option(False, "--generalise/--no-generalise", help="turn the top "
                                    "patterns into a perturbation and run the rank protocol with "
                                    "it on the whole dataset"),
    top_patterns: int = typer.Option(3, "--top-patterns", help="patterns the rules are made of"),
    seeds: str = typer.Option("1,2,3", "--seeds", help="seeds of the generalisation run"),
    hypothesis_column: str | None = HYPOTHESIS_COLUMN,
    references_column: str | None = REFERENCES_COLUMN,
    source_column: str | None = SOURCE_COLUMN,
    id_column: str | None = ID_COLUMN,
) -> None:
    """Greedy adversarial search: perturb each gold text word by word, keeping the edits the
    metric penalises least, until the noise ratio; a panel of other metrics judges the result."""
    columns = {"hypothesis": hypothesis_column, "references": references_column,
               "source": source_column, "id": id_column}
    options = {"noise_ratio": noise_ratio, "panel": panel, "mlm": mlm,
               "embedding_model": embedding_model or None, "k": k, "max_calls": max_calls,
               "max_seconds": max_seconds, "seed": seed, "limit": limit,
               "generalise": generalise, "top_patterns": top_patterns}
    run_job("search", out, data=[data], metrics=metric, task=task, seeds=seeds_option(seeds),
             columns=columns, options=options)
