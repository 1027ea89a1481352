"""``blindspot perturb``: one test at one level, or a whole suite, on a file."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console

from blindspot.cli._options import SEEDS_TEXT, resources
from blindspot.cli._protocol import console, seeds_option
from blindspot.errors import BlindspotInputError, message
from blindspot.exit_codes import fail

err = Console(stderr=True)


def perturb(
    input: Path = typer.Argument(..., help="jsonl, csv or parquet file"),
    output: Path = typer.Option(..., "-o", "--output", help="output file (format from extension)"),
    test: str = typer.Option(..., "--test", help="a test name, or fluency|consistency|targeted|all"),
    level: str | None = typer.Option(None, help="level of a single test; omit for the paper levels"),
    seed: int | None = typer.Option(None, help="seed for a single level (default 1)"),
    seeds: str = typer.Option(SEEDS_TEXT, help="seeds of a suite run"),
    task: str = typer.Option("summarization",
                             help="summarization|translation|translation_paragraph|open_ended"),
    column: str = typer.Option("gold", help="the text column to perturb"),
    id_column: str = typer.Option("id", help="row-id column (a text hash when absent)"),
    source_column: str | None = typer.Option(None, help="source column (copy-source)"),
    mlm: str | None = typer.Option(None, help="masked LM for BERT-diverge (Hub id or folder)"),
    lm: str | None = typer.Option(None, help="causal-LM tokenizer for positioned error"),
    ngram_corpus: str | None = typer.Option(None, help="corpus file for frequent n-gram"),
    num_proc: int | None = typer.Option(None, help="worker processes"),
) -> None:
    """Perturb a file: one test at one level, or a whole suite at the task's paper levels."""
    from blindspot.io import read_table, write_table  # pyarrow: heavy
    from blindspot.perturbations.dataset import perturb_dataset, run_suite  # datasets: heavy
    from blindspot.perturbations.suites import suite_names  # every test module

    needs = resources(mlm, lm, ngram_corpus)
    try:
        ds = read_table(input)
        if level is not None and test not in suite_names() and "," not in test:
            out = perturb_dataset(ds, test, level, seed if seed is not None else 1, column=column,
                                  id_column=id_column, source_column=source_column,
                                  num_proc=num_proc, task=task, **needs)
        else:
            if level is not None:
                fail("--level applies to a single test; a suite runs at the paper levels")
            chosen = [seed] if seed is not None else seeds_option(seeds)
            out, plan = run_suite(ds, test, task, chosen, column=column, id_column=id_column,
                                  source_column=source_column, resources=needs,
                                  num_proc=num_proc)
            for name, why in plan.skipped.items():
                err.print(f"[yellow]skipped[/] {name}: {why}")
        write_table(out, output)
    except BlindspotInputError as error:  # the perturbations know the row, we know the file
        fail(str(error.in_file(input)))
    except (ValueError, KeyError, FileNotFoundError) as error:
        fail(message(error))
    console.print(f"wrote {out.num_rows} rows to {output}")
