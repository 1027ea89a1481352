"""The main job on the embedded demo corpus (``make demo``): the meta-evaluator, end to end.

For each demo task, a representative set of metrics that run offline (lexical metrics, BERTScore
on MiniLM, GPT-PPL on SmolLM2) is judged on every test the paper runs for that task, and a report
folder is written per task. Each finished cell is kept, so a second ``make demo`` only re-judges.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console

from blindspot.models import available_models


@dataclass(frozen=True)
class DemoRun:
    """One task of the demo: which metrics are judged, and which need an offline model."""

    task: str
    metrics: tuple[str, ...]
    needs: tuple[str, ...] = ()  # offline short model names the metrics use


DEMO_PLAN: tuple[DemoRun, ...] = (
    DemoRun("summarization", ("rouge", "chrf", "bertscore.f1@minilm"), needs=("minilm",)),
    DemoRun("translation", ("chrf", "bleu", "gpt_ppl@smollm2"), needs=("smollm2",)),
    DemoRun("open_ended", ("rep_ngram", "ngram_entropy")),
)
DEMO_SEEDS = (1, 2, 3)


def _metrics(run: DemoRun, installed: Sequence[str], console: Console) -> list[str]:
    """The run's metrics, leaving out (and saying so) those whose model is not installed."""
    missing = [m for m in run.needs if m not in installed]
    if not missing:
        return list(run.metrics)
    console.print(f"[yellow]{run.task}: model(s) {', '.join(missing)} not installed (make env); "
                  "judging the lexical metrics only[/]")
    return [m for m in run.metrics if not any(f"@{name}" in m for name in missing)]


def run_demo(out: Path, seeds: Sequence[int] = DEMO_SEEDS, num_proc: int | None = None,
             console: Console | None = None, tasks: Sequence[str] | None = None) -> dict[str, Path]:
    """Judge the demo metrics on every demo task; returns each task's report folder."""
    from blindspot.runner import run_blindspot
    from blindspot.runner.summary import print_summary

    console = console or Console()
    installed = available_models()
    folders: dict[str, Path] = {}
    for run in DEMO_PLAN:
        if tasks is not None and run.task not in tasks:
            continue
        folder = out / run.task
        metrics = _metrics(run, installed, console)
        console.rule(f"{run.task}: {', '.join(metrics)}")
        results = run_blindspot("demo", metrics, task=run.task,
                                tests="all", seeds=list(seeds), out=folder, num_proc=num_proc)
        print_summary(results, console)
        folders[run.task] = folder
    for task, folder in folders.items():
        console.print(f"[bold]{task} report:[/] {(folder / 'report.md').resolve()} "
                      f"(and report.html, results.json, plots/)")
    return folders
