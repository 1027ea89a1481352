"""The main job (`make demo`): the meta-evaluator on the embedded corpus, with a report per task."""

from __future__ import annotations

import json
from pathlib import Path

from rich.console import Console

from blindspot.demo import demo_path
from blindspot.demo_job import DEMO_PLAN, MODEL_CELLS, ModelCells, _first_rows, report_is_current, run_demo
from blindspot.perturbations import REGISTRY, suite_tests
from blindspot.perturbations.catalogue import CATEGORIES
from blindspot.runner import resolve_metrics
from blindspot.runner.data import load_gold_data
from blindspot.runner.metric_run import MetricRun
from blindspot.runner.run import RunSettings
from blindspot.runner.state import RunState


def test_demo_plan_covers_every_core_test() -> None:
    """Every test of the core suite ('all': the blind-spots paper's categories) runs in the demo;
    other papers' suites (menli, examination...) are run by name."""
    covered = {test for run in DEMO_PLAN for test in suite_tests("all", run.task)}
    core = {name for name, cls in REGISTRY.items() if cls.category in CATEGORIES}
    assert covered == core and len(core) >= 20


def test_demo_task_writes_a_judged_report(tmp_path: Path) -> None:
    console = Console(file=open(tmp_path / "console.txt", "w"), width=200)
    folders = run_demo(tmp_path, [1], console=console, tasks=["open_ended"])
    folder = folders["open_ended"]
    results = json.loads((folder / "results.json").read_text())
    data = results["datasets"]["demo-open_ended"]
    assert data["rows"] == 30
    assert data["skipped_tests"] == {}  # every open-ended test runs offline
    ran = set(suite_tests("all", "open_ended"))
    for metric in ("rep_ngram.rep_ngram", "ngram_entropy.ngram_entropy"):
        tests = data["metrics"][metric]["tests"]
        assert set(tests) == ran
        assert all(t["status"] in ("pass", "fail", "undecided") for t in tests.values())
    # repeating content is exactly what negated rep-4 penalises
    assert data["metrics"]["rep_ngram.rep_ngram"]["tests"]["repetition"]["status"] == "pass"
    printed = (tmp_path / "console.txt").read_text()
    assert f"open_ended report: {(folder / 'report.md').resolve()}" in printed.replace("\n", "")
    assert (folder / "report.html").is_file() and any((folder / "plots").iterdir())
    # a second demo finds the same results and leaves the report alone; a lost plot is redrawn
    report = folder / "report.md"
    written = report.stat().st_mtime_ns
    plot = next((folder / "plots").iterdir())
    plot.unlink()
    assert not report_is_current(results, folder)
    run_demo(tmp_path, [1], console=console, tasks=["open_ended"])
    assert plot.is_file() and report.stat().st_mtime_ns > written
    written = report.stat().st_mtime_ns
    run_demo(tmp_path, [1], console=console, tasks=["open_ended"])
    assert report.stat().st_mtime_ns == written and report_is_current(results, folder)


def test_demo_plan_puts_a_lexical_table_first_and_models_on_fewer_cells() -> None:
    """The first table needs no model; every model metric names an installed-model need."""
    assert not DEMO_PLAN[0].model_metrics and not DEMO_PLAN[0].needs
    for run in DEMO_PLAN:
        assert all(any(f"@{need}" in m for need in run.needs) for m in run.model_metrics)
        assert not any("@" in m for m in run.metrics)
    assert MODEL_CELLS.describe() == "first 8 rows, seed 1"
    assert ModelCells(rows=3, seeds=(1, 2)).describe() == "first 3 rows, seeds 1,2"


def test_first_rows_file_is_the_demo_head(tmp_path: Path) -> None:
    path = _first_rows("translation", 3, tmp_path / "models")
    assert path.name == "demo-translation-first3.jsonl"
    head = demo_path("translation").read_text(encoding="utf-8").splitlines()[:3]
    assert path.read_text(encoding="utf-8").splitlines() == head


def test_scoring_estimate_is_measured_and_keeps_the_scores(tmp_path: Path,
                                                           monkeypatch) -> None:
    """The forecast scores two batches (into the score cache), times the second and counts the
    distinct pending texts; the cells then score exactly as without a forecast."""
    monkeypatch.setenv("BLINDSPOT_CACHE", str(tmp_path / "cache"))
    gold = load_gold_data("demo", "translation")
    settings = RunSettings(task="translation", batch_size=4)
    (spec,) = resolve_metrics("chrf")
    texts = gold.column("hypothesis")
    cells = [list(texts), [t.upper() for t in texts], [t.lower() for t in texts]]
    run = MetricRun(spec, RunState(tmp_path / "a"), settings.batch_size)
    inputs = run.inputs(gold.column("references"), gold.column("source"))
    estimate = run.estimate(cells, inputs)
    assert estimate is not None and estimate.metric == "chrf.chrf"
    assert estimate.texts == len({t for cell in cells for t in cell})
    assert estimate.seconds >= 0 and estimate.rate > 0
    assert str(estimate).startswith(f"scoring {estimate.texts:,} texts with chrf.chrf: about ")
    with_forecast = [run.score(cell, inputs)[0] for cell in cells]
    monkeypatch.setenv("BLINDSPOT_CACHE", str(tmp_path / "cache2"))
    plain = MetricRun(spec, RunState(tmp_path / "b"), settings.batch_size)
    assert [plain.score(cell, inputs)[0] for cell in cells] == with_forecast
    # nothing left to forecast once every text is scored
    assert run.estimate(cells, inputs) is None
