"""The main job on the embedded demo corpus (``make demo``).

Until the meta-evaluator exists, the job builds the full stress-test suite for each demo task at
the paper's levels and seeds, writes it next to a summary, and prints a table of tests x levels
with their noise ratios and an example output each.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from blindspot.models import available_models


def _shorten(text: str, width: int = 90) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else "..." + text[-(width - 3):]


def demo_resources(task: str, ds: Any) -> dict[str, Any]:
    """Resources the offline machine has: SmolLM2's tokenizer, the demo references as corpus."""
    resources: dict[str, Any] = {"mlm": None, "lm": None, "ngram_corpus": None}
    if "smollm2" in available_models():
        resources["lm"] = "smollm2"
    if task == "open_ended" and "reference" in ds.column_names:
        resources["ngram_corpus"] = list(ds["reference"])
    return resources


def run_demo(out: Path, seeds: list[int], num_proc: int | None = None,
             console: Console | None = None) -> Path:
    """Run every demo task's suite; returns the output folder."""
    from blindspot.demo import DEMO_TASKS, demo_columns, load_demo
    from blindspot.io import write_table
    from blindspot.perturbations import run_suite
    from blindspot.perturbations.summary import summarise_suite

    console = console or Console()
    out.mkdir(parents=True, exist_ok=True)
    for task in DEMO_TASKS:
        ds = load_demo(task)
        roles = demo_columns(task)
        suite, plan = run_suite(ds, "all", task, seeds, column=roles["hypothesis"],
                                source_column=roles.get("source"),
                                resources=demo_resources(task, ds), num_proc=num_proc)
        write_table(suite, out / f"{task}.jsonl")
        cells = summarise_suite(suite, roles["hypothesis"])
        (out / f"{task}_summary.json").write_text(json.dumps(
            {"task": task, "rows": ds.num_rows, "seeds": seeds, "skipped": plan.skipped,
             "cells": [asdict(c) for c in cells]}, indent=2, ensure_ascii=False) + "\n")
        table = Table(title=f"{task}: {ds.num_rows} demo rows, seeds {seeds}")
        for col in ("test", "level", "noise ratio", "applied", "example (end of text)"):
            table.add_column(col, overflow="fold")
        for c in cells:
            std = f" ± {c.noise_ratio_std:.3f}" if c.seeds > 1 else ""
            table.add_row(c.test, c.level, f"{c.noise_ratio:.3f}{std}", f"{c.applied:.0%}",
                          _shorten(c.example_perturbed))
        console.print(table)
        for name, why in plan.skipped.items():
            console.print(f"[yellow]skipped[/] {name}: {why}")
    console.print(f"[bold]demo output:[/] {out.resolve()}")
    return out
