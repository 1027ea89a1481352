"""The main job on the embedded demo corpus (``make demo``): the meta-evaluator, end to end.

For each demo task, a representative set of metrics that run offline (lexical metrics, BERTScore
on MiniLM, GPT-PPL on SmolLM2) is judged on every test the paper runs for that task, and a report
folder is written per task. The lexical metrics are judged first, on every row and seed; the model
metrics then on fewer cells (:class:`ModelCells`), each announced with a measured time forecast.
Each finished cell is kept, so a second ``make demo`` only re-judges.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console

from blindspot.demo import demo_path
from blindspot.models import available_models


@dataclass(frozen=True)
class ModelCells:
    """How much of a task the model metrics (BERTScore, GPT-PPL) score in the demo: on 2 CPU
    cores they take a minute per few thousand texts, so the demo judges them on the first
    ``rows`` rows and ``seeds`` only (every test and level still runs). ``blindspot run`` on
    the whole set judges them on every row and seed."""

    rows: int = 8
    seeds: tuple[int, ...] = (1,)

    def describe(self) -> str:
        seeds = ",".join(map(str, self.seeds))
        return f"first {self.rows} rows, seed{'s' if len(self.seeds) > 1 else ''} {seeds}"


@dataclass(frozen=True)
class DemoRun:
    """One task of the demo: its lexical metrics (every row and seed) and its model metrics
    (judged on :class:`ModelCells`), with the offline models these need."""

    task: str
    metrics: tuple[str, ...]
    model_metrics: tuple[str, ...] = ()
    needs: tuple[str, ...] = ()  # offline short model names the model metrics use


# The open-ended lexical table comes first (the quickest). The model metrics run on translation,
# whose short sentences cost a fraction of a summary or a WikiText paragraph to encode.
DEMO_PLAN: tuple[DemoRun, ...] = (
    DemoRun("open_ended", ("rep_ngram", "ngram_entropy")),
    DemoRun("summarization", ("rouge", "chrf")),
    DemoRun("translation", ("chrf", "bleu"), ("bertscore.f1@minilm", "gpt_ppl@smollm2"),
            needs=("minilm", "smollm2")),
)
DEMO_SEEDS = (1, 2, 3)
MODEL_CELLS = ModelCells()
#: the report folder of a task's model metrics, next to the lexical one
MODELS_SUFFIX = "-models"


def _model_metrics(run: DemoRun, installed: Sequence[str], console: Console) -> list[str]:
    """The run's model metrics, leaving out (and saying so) those whose model is not
    installed."""
    missing = [m for m in run.needs if m not in installed]
    if missing:
        console.print(f"[yellow]{run.task}: model(s) {', '.join(missing)} not installed "
                      "(make env); judging the lexical metrics only[/]")
    return [m for m in run.model_metrics if not any(f"@{name}" in m for name in missing)]


def _first_rows(task: str, rows: int, folder: Path) -> Path:
    """The demo set's first ``rows`` rows as a file in ``folder`` (its name says so in the
    report), written once."""
    path = folder / f"demo-{task}-first{rows}.jsonl"
    if not path.is_file():
        folder.mkdir(parents=True, exist_ok=True)
        lines = demo_path(task).read_text(encoding="utf-8").splitlines()[:rows]
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _judge(console: Console, title: str, folder: Path, data: Any, metrics: Sequence[str],
           task: str, seeds: Sequence[int], num_proc: int | None) -> None:
    """Judge, print the table, then write the report folder (its plots take seconds)."""
    from blindspot.report.writer import write_report
    from blindspot.runner import run_blindspot
    from blindspot.runner.summary import print_summary

    console.rule(title)
    results = run_blindspot(data, list(metrics), task=task, tests="all", seeds=list(seeds),
                            state_dir=folder / ".state", num_proc=num_proc)
    print_summary(results, console)
    if not report_is_current(results, folder):
        write_report(results, folder)


def report_is_current(results: dict[str, Any], folder: Path) -> bool:
    """Whether ``folder`` already holds the whole report of exactly these results (a second
    ``make demo``: its plots would take most of the run to redraw). A missing or changed file
    makes it not current, so a damaged report is rewritten."""
    from blindspot.report.plots import plot_names
    from blindspot.report.writer import HTML_FILE, MARKDOWN_FILE, RESULTS_FILE, results_json

    files = [RESULTS_FILE, MARKDOWN_FILE, HTML_FILE, *plot_names(results).values()]
    if not all((folder / name).is_file() for name in files):
        return False
    return (folder / RESULTS_FILE).read_text(encoding="utf-8") == results_json(results)


def run_demo(out: Path, seeds: Sequence[int] = DEMO_SEEDS, num_proc: int | None = None,
             console: Console | None = None, tasks: Sequence[str] | None = None,
             model_cells: ModelCells = MODEL_CELLS) -> dict[str, Path]:
    """Judge the demo metrics on every demo task; returns each report folder (``<task>`` for
    the lexical metrics, ``<task>-models`` for the model metrics).

    Every task's lexical table comes first (seconds each); the model metrics follow, each
    forecast from its measured speed before it starts."""
    console = console or Console()
    runs = [run for run in DEMO_PLAN if tasks is None or run.task in tasks]
    folders: dict[str, Path] = {}
    for run in runs:
        folders[run.task] = out / run.task
        _judge(console, f"{run.task}: {', '.join(run.metrics)}", folders[run.task], "demo",
               run.metrics, run.task, seeds, num_proc)
    installed = available_models()
    for run in runs:
        metrics = _model_metrics(run, installed, console)
        if not metrics:
            continue
        name = run.task + MODELS_SUFFIX
        folders[name] = out / name
        _judge(console, f"{run.task}: {', '.join(metrics)} ({model_cells.describe()}; the "
                        "model metrics are slow on CPU)", folders[name],
               str(_first_rows(run.task, model_cells.rows, folders[name])), metrics, run.task,
               model_cells.seeds, num_proc)
    for task, folder in folders.items():
        console.print(f"[bold]{task} report:[/] {(folder / 'report.md').resolve()} "
                      f"(and report.html, results.json, plots/)")
    return folders
