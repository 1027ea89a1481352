"""Tests of the report renderers: markdown summary and details, plots, HTML page, report folder.

The results are written by hand following ``blindspot/report/schema.py``: one dataset, three
metrics (one could not run at all) and three tests, so every verdict (pass, fail, a fail within
noise, error, undecided) appears and every expected cell can be worked out by hand.
"""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path
from typing import Any

import pytest
from matplotlib.colors import to_hex
from matplotlib.image import imread
from rich.console import Console

from blindspot.report import files
from blindspot.report.files import write_folder
from blindspot.report.html import render_html
from blindspot.report.markdown import render_markdown
from blindspot.report.plots import COLORS, build_figure, plot_names, render_plots
from blindspot.report.terminal import summary_table
from blindspot.report.writer import render_report

pytestmark = pytest.mark.quick  # make check: no model load

DATASET = "cnn/dm demo"
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
SCRIPT = '<script>alert("x")</script> | a pipe'
LONG_GOLD = "word " * 100


def point(level: str, ratio: float, mean: float | None, relative: float | None,
          judged: bool = True, std: float = 0.02) -> dict[str, Any]:
    """One curve point as the schema lays it out."""
    return {"level": level, "noise_ratio": ratio, "noise_ratio_std": 0.01 if ratio else 0.0,
            "score_mean": mean, "score_std": std, "n": 100, "n_seeds": 3, "n_nan": 0,
            "relative_change": relative, "judged": judged}


def verdict(test: str, category: str, status: str, relative: float | None,
            points: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    """One test result; ``passed`` follows the status as the schema says."""
    passed = {"pass": True, "fail": False}.get(status)
    result = {"test": test, "category": category, "rule": "monotone_decrease",
              "status": status, "passed": passed, "reason": None, "error": None,
              "explanation": None, "within_noise": None, "deciding": None,
              "relative_change": relative, "absolute_change": None, "points": points,
              "per_sample": [], "worst_examples": []}
    result.update(extra)
    return result


def rouge_tests() -> dict[str, Any]:
    """rougeL passes truncation, fails negation and cannot judge repetition."""
    gold = point("gold", 0.0, 0.5, 0.0, std=0.01)
    example = {"id": 7, "level": "1", "seed": 2, "gold": LONG_GOLD, "perturbed": SCRIPT,
               "gold_score": 0.5, "perturbed_score": 0.52, "difference": -0.02}
    per_sample = {"level": "0.3", "n": 100, "fraction_noised_ge_gold": 0.125,
                  "mean_difference": 0.0615, "wilcoxon_p": 0.00002, "ci_low": 0.05,
                  "ci_high": 0.07}
    return {
        "truncation": verdict(
            "truncation", "fluency", "pass", -12.3,
            [gold, point("0.1", 0.1, 0.45, -10.0), point("0.3", 0.3, 0.4385, -12.3),
             point("0.9", 0.7, 0.4, -20.0, judged=False)], per_sample=[per_sample],
            explanation="drops at every step; smallest drop 2.3% of gold from level 0.1 to "
                        "level 0.3"),
        "negation": verdict("negation", "consistency", "fail", 0.8,
                            [gold, point("1", 0.05, 0.504, 0.8)], worst_examples=[example],
                            explanation="rises 0.8% of gold from gold to level 1",
                            within_noise=False),
        "repetition": verdict(
            "repetition", "fluency", "undecided", None,
            [gold, point("0.8", 0.65, 0.49, -2.0, judged=False)],
            reason="no noised point has a noise ratio below the cap 0.6"),
    }


def bertscore_tests() -> dict[str, Any]:
    """BERTScore errs on truncation, passes negation and fails repetition."""
    gold = point("gold", 0.0, 0.9, 0.0, std=0.0)
    return {
        "truncation": verdict("truncation", "fluency", "error", None, [],
                              error="the metric returned NaN on 3 rows"),
        "negation": verdict("negation", "consistency", "pass", -4.26,
                            [gold, point("1", 0.05, 0.8617, -4.26)]),
        "repetition": verdict("repetition", "fluency", "fail", 1.04,
                              [gold, point("0.2", 0.2, 0.9094, 1.04)],
                              explanation="rises 1.0% of gold from gold to level 0.2",
                              within_noise=True),
    }


def metric(name: str, output: str, tests: dict[str, Any], error: str | None = None,
           higher_is_better: bool = True) -> dict[str, Any]:
    """One metric entry of a dataset."""
    return {"metric": name, "output": output, "options": {}, "higher_is_better": higher_is_better,
            "corpus_level": False, "error": error,
            "gold": {"score_mean": 0.5, "score_std": 0.01, "n": 100, "n_nan": 0}, "tests": tests}


def make_results() -> dict[str, Any]:
    """A small, complete results dict (schema version 1)."""
    return {
        "schema_version": 1,
        "tool": {"name": "blindspot", "version": "0.1.0"},
        "config": {"tests": ["truncation", "negation", "repetition", "bert_diverge"],
                   "seeds": [1, 2, 3], "noise_cap": 0.6, "tolerance": 1e-05,
                   "worst_examples": 1,
                   "metrics": [{"name": "rouge.rougeL", "metric": "rouge", "output": "rougeL",
                                "options": {"rouge_types": "rougeL"}, "higher_is_better": True,
                                "module": None},
                               {"name": "bertscore.f1@minilm", "metric": "bertscore",
                                "output": "f1", "options": {"model": "minilm"},
                                "higher_is_better": False, "module": None},
                               {"metric": "broken"}]},
        "datasets": {DATASET: {
            "task": "summarization", "rows": 100, "fingerprint": "ab" * 32,
            "columns": {"id": "id", "hypothesis": "gold", "references": "references"},
            "skipped_tests": {"bert_diverge": "needs mlm (--mlm)"},
            "metrics": {
                "rouge.rougeL": metric("rouge", "rougeL", rouge_tests()),
                "bertscore.f1": metric("bertscore", "f1", bertscore_tests(),
                                       higher_is_better=False),
                "broken.score": metric("broken", "score", {}, error="CUDA out of memory"),
            }}},
    }


@pytest.fixture(name="results")
def fixture_results() -> dict[str, Any]:
    return make_results()


# --- markdown ------------------------------------------------------------------------------

def test_summary_table_has_one_row_per_test_and_one_column_per_metric(results) -> None:
    lines = render_markdown(results).splitlines()
    start = lines.index("| test | category | rouge.rougeL | bertscore.f1 | broken.score |")
    assert lines[start + 1] == "|---|---|---|---|---|"
    assert lines[start + 2:start + 5] == [
        "| truncation | fluency | ✓ -12.3% | error | error |",
        "| negation | consistency | ✗ +0.8% | ✓ -4.3% | error |",
        "| repetition | fluency | n/a (capped) | ✗\\~ +1.0% | error |",  # ~ escaped: not strikethrough
    ]
    assert lines[start + 5] == ""
    assert lines[start + 6:start + 8] == [
        "- ✓ pass: the test's verdict rule holds (tolerance 1e-05, noise cap 0.6); the rules "
        "of this run:",  # the run's rules nested under "pass"
        "  - monotone_decrease: the score strictly decreases as the noise ratio grows, gold "
        "first, each step by more than the tolerance (only points below the noise cap)."]
    legend = lines[start + 8:start + 10]
    assert legend[1].startswith("- ✗\\~ fail within noise:") and "more seeds" in legend[1]


def test_verdicts_explain_themselves_and_mark_within_noise_fails(results) -> None:
    lines = render_markdown(results).splitlines()
    assert ("Verdict: pass (✓, rule monotone_decrease): drops at every step; smallest drop "
            "2.3% of gold from level 0.1 to level 0.3.") in lines
    assert ("Verdict: fail (✗, rule monotone_decrease): rises 0.8% of gold from gold to "
            "level 1; beyond the noise (significant).") in lines
    within = [line for line in lines if line.startswith("Verdict: fail") and "level 0.2" in line]
    assert within == ["Verdict: fail (✗, rule monotone_decrease): rises 1.0% of gold from "
                      "gold to level 0.2; within the noise: more rows (a larger --data) or more "
                      "seeds (--seeds, for the random tests) could change it."]


def test_a_zero_gold_shows_the_absolute_change(results) -> None:
    """rep-n on clean text scores 0: a percentage of 0 means nothing, the change is absolute."""
    rouge = results["datasets"][DATASET]["metrics"]["rouge.rougeL"]["tests"]
    rouge["negation"].update(relative_change=None, absolute_change=0.0123, points=[
        point("gold", 0.0, 0.0, 0.0), point("1", 0.05, 0.0123, None)])
    lines = render_markdown(results).splitlines()
    assert "| negation | consistency | ✗ Δ+0.0123 | ✓ -4.3% | error |" in lines
    assert "| 1 | 0.050 ± 0.010 | 0.0123 ± 0.0200 | Δ+0.0123 | 100 | yes |" in lines


def test_markdown_run_config_skips_and_metric_errors(results) -> None:
    text = render_markdown(results)
    assert text.startswith("# Blind-spot report\n")
    lines = text.splitlines()
    run = lines.index("## Run")
    assert lines[run + 2:run + 12] == [
        "| setting | value |", "|---|---|",
        "| tests | truncation, negation, repetition, bert_diverge |", "| seeds | 1, 2, 3 |",
        "| noise cap | 0.6 |", "| tolerance | 1e-05 |", "| worst examples | 1 |",
        "| metric 1 | rouge.rougeL (rouge_types=rougeL) |",
        "| metric 2 | bertscore.f1@minilm (model=minilm, lower is better) |",
        "| metric 3 | broken |"]
    for line in ("- **bert_diverge**: needs mlm (--mlm)",
                 "- **broken.score**: CUDA out of memory",
                 "Verdict: error: the metric returned NaN on 3 rows.",
                 "Verdict: undecided: no noised point has a noise ratio below the cap 0.6."):
        assert line in text.splitlines()
    assert "lower is better for this metric" in text  # bertscore.f1 was negated


def test_markdown_points_and_per_sample(results) -> None:
    lines = render_markdown(results).splitlines()
    assert "| level | noise ratio | score | relative change (% of gold) | n | judged |" in lines
    assert "| gold | 0.000 ± 0.000 | 0.5000 ± 0.0100 | +0.0% | 100 | yes |" in lines
    assert "| 0.3 | 0.300 ± 0.010 | 0.4385 ± 0.0200 | -12.3% | 100 | yes |" in lines
    assert ("| 0.9 | 0.700 ± 0.010 | 0.4000 ± 0.0200 | -20.0% | 100 | no (over the noise cap) |"
            in lines)
    assert ("- level 0.3: 12.5% of rows not lowered (n=100), mean drop 0.0615, Wilcoxon p = "
            "2.0e-05, 95% CI of the mean drop \\[0.0500, 0.0700\\]") in lines


def test_markdown_worst_examples_are_escaped_and_shortened(results) -> None:
    text = render_markdown(results)
    row = next(line for line in text.splitlines() if line.startswith("| 7 |"))
    assert row.startswith("| 7 | 1 | 2 | 0.5000 | 0.5200 | -0.0200 | word word")
    assert row.endswith(' | \\<script\\>alert("x")\\</script\\> \\| a pipe |')
    assert "<script>" not in text
    gold_cell = row.split(" | ")[6]
    assert gold_cell.endswith("…") and len(gold_cell) == 200


def test_markdown_links_plots_and_is_deterministic(results) -> None:
    plots = plot_names(results)
    text = render_markdown(results, plots)
    assert "![truncation on cnn/dm demo](plots/cnn-dm-demo--truncation.png)" in text
    assert render_markdown(copy.deepcopy(results), dict(plots)) == text
    assert "![" not in render_markdown(results)


# --- plots ---------------------------------------------------------------------------------

def test_figure_has_one_panel_per_metric_coloured_by_verdict(results) -> None:
    negation = build_figure(results, DATASET, "negation")
    assert len(negation.axes) == 3
    rouge, bertscore, broken = negation.axes
    assert to_hex(rouge.lines[0].get_color()) == COLORS["fail"]
    assert "FAIL" in rouge.get_title()
    assert to_hex(bertscore.lines[0].get_color()) == COLORS["pass"]
    assert rouge.get_xlabel() == "noise ratio" and rouge.get_ylabel() == "rouge.rougeL"
    assert not broken.lines and "CUDA out of memory" in broken.texts[0].get_text()
    assert len(rouge.collections) == 1  # the seed std band


def test_figure_error_and_undecided_panels(results) -> None:
    truncation = build_figure(results, DATASET, "truncation")
    assert "ERROR" in truncation.axes[1].get_title() and not truncation.axes[1].lines
    assert "returned NaN" in truncation.axes[1].texts[0].get_text()
    repetition = build_figure(results, DATASET, "repetition")
    assert to_hex(repetition.axes[0].lines[0].get_color()) == COLORS["undecided"]
    within = repetition.axes[1]  # bertscore's fail within noise: amber, said in the title
    assert to_hex(within.lines[0].get_color()) == COLORS["fail_within_noise"]
    assert within.get_title() == "bertscore.f1: FAIL~ (within noise)"


def test_points_over_the_noise_cap_are_hollow(results) -> None:
    rouge = build_figure(results, DATASET, "truncation").axes[0]
    faces = [to_hex(line.get_markerfacecolor()) for line in rouge.lines[1:5]]
    assert faces == [COLORS["pass"]] * 3 + ["#ffffff"]


def test_the_report_writes_valid_identical_pngs(results, tmp_path: Path) -> None:
    names = plot_names(results)
    assert names == {f"{DATASET}/{t}": f"plots/cnn-dm-demo--{t}.png"
                     for t in ("truncation", "negation", "repetition")}
    write_folder(render_report(results), tmp_path / "a")
    write_folder(render_report(results), tmp_path / "b")
    images = render_plots(results)
    assert list(images) == list(names)
    for key, name in names.items():
        data = (tmp_path / "a" / name).read_bytes()
        assert data.startswith(PNG_SIGNATURE) and data == images[key]
        assert imread(tmp_path / "a" / name).ndim == 3
        assert (tmp_path / "b" / name).read_bytes() == data


def test_plot_file_names_are_safe_and_distinct() -> None:
    assert files.slugify("cnn/dm demo") == "cnn-dm-demo"
    assert files.slugify("../../etc") == "etc"
    assert files.slugify("///") == "_"
    assert "--" not in files.slugify("a -- b")
    results = {"datasets": {name: {"metrics": {"m": {"tests": {"t": {}}}}}
                            for name in ("a b", "a/b")}}
    first, second = plot_names(results).values()
    assert first == "plots/a-b--t.png" and second.startswith("plots/a-b--t--")


# --- HTML ----------------------------------------------------------------------------------

def test_html_is_self_contained_and_escaped(results) -> None:
    images = render_plots(results)
    page = render_html(results, images)
    assert page.count("data:image/png;base64,") == 3
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; | a pipe" in page
    assert "<script" not in page and "<link" not in page and "http" not in page
    assert ('<td class="fail" title="fail (✗, rule monotone_decrease): rises 0.8% of gold from '
            'gold to level 1; beyond the noise (significant)">✗ +0.8%</td>') in page
    assert '<td class="fail_within_noise" title="fail (✗, rule monotone_decrease): rises' in page
    assert '✗~ +1.0%</td>' in page
    assert '<td class="pass" title="pass (✓, rule monotone_decrease): drops' in page
    assert '">n/a (capped)</td>' in page and '<td class="undecided" title="' in page
    assert '<td class="error">error</td>' in page
    assert "Dataset cnn/dm demo" in page
    # the run's rules are a list inside the legend's "pass" entry
    assert ("the rules of this run:<ul><li>monotone_decrease: the score strictly decreases"
            in page)
    assert render_html(results, images) == page


def test_html_without_plots_has_no_images(results) -> None:
    assert "<img" not in render_html(results, None)


# --- report folder -------------------------------------------------------------------------

def test_write_report_writes_every_file(results, tmp_path: Path) -> None:
    out = tmp_path / "report"
    paths = write_folder(render_report(results), out)
    assert paths[0] == out / "results.json"
    assert [str(p.relative_to(out)) for p in paths] == render_report(results).names
    assert json.loads(paths[0].read_text(encoding="utf-8")) == results
    assert paths[0].read_text(encoding="utf-8").endswith("}\n")
    assert (out / "report.md").read_text(encoding="utf-8") == render_markdown(
        results, plot_names(results))
    assert "data:image/png;base64," in (out / "report.html").read_text(encoding="utf-8")
    assert (out / plot_names(results)[f"{DATASET}/negation"]).read_bytes().startswith(
        PNG_SIGNATURE)
    assert sorted(p.name for p in out.iterdir()) == [
        "plots", "report.html", "report.md", "results.json"]


def test_write_report_keeps_non_ascii_text(results, tmp_path: Path) -> None:
    results["datasets"][DATASET]["task"] = "résumé"
    text = write_folder(render_report(results), tmp_path)[0].read_text(encoding="utf-8")
    assert '"task": "résumé"' in text


def test_the_one_writer_writes_the_declared_files_nested_folders_last(tmp_path: Path) -> None:
    inner = files.ReportFiles({"n": 1}, {files.MARKDOWN_FILE: "inner\n"})
    report = files.ReportFiles({"é": [1.5, None]}, {files.MARKDOWN_FILE: "# r\n",
                                                    "plots/a.png": b"\x89PNG"}, {"sub": inner})
    assert report.names == ["results.json", "report.md", "plots/a.png", "sub/results.json",
                            "sub/report.md"]
    written = files.write_folder(report, tmp_path / "out")
    assert [str(p.relative_to(tmp_path / "out")) for p in written] == report.names
    assert (tmp_path / "out" / "results.json").read_text(encoding="utf-8") == \
        '{\n  "é": [\n    1.5,\n    null\n  ]\n}\n'
    assert (tmp_path / "out" / "plots" / "a.png").read_bytes() == b"\x89PNG"
    assert sorted(str(p.relative_to(tmp_path / "out")) for p in (tmp_path / "out").rglob("*")
                  if p.is_file()) == sorted(report.names)  # no temporary file left


@pytest.mark.parametrize(("results", "files_", "folders", "message"), [
    ({"x": float("nan")}, {}, {}, "Out of range float"),
    ({"x": float("inf")}, {}, {}, "Out of range float"),
    ({}, {"../up.md": "x"}, {}, "relative path inside its folder"),
    ({}, {"/abs.md": "x"}, {}, "relative path inside its folder"),
    ({}, {"results.json": "{}"}, {}, "the results' own file"),
    ({}, {}, {"..": {}}, "relative path inside its folder"),
])
def test_a_report_that_cannot_be_written_whole_is_refused_before_any_file(
        results, files_, folders, message, tmp_path: Path) -> None:
    sub = {name: files.ReportFiles({}) for name in folders}
    with pytest.raises(ValueError, match=message):
        files.write_folder(files.ReportFiles(results, files_, sub), tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_write_report_refuses_nan_before_writing_anything(results, tmp_path: Path) -> None:
    results["datasets"][DATASET]["metrics"]["rouge.rougeL"]["gold"]["score_mean"] = float("nan")
    with pytest.raises(ValueError):
        write_folder(render_report(results), tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_atomic_write_keeps_the_old_file_when_interrupted(tmp_path: Path, monkeypatch) -> None:
    target = files.atomic_write_text(tmp_path / "results.json", "old\n")

    def killed(*_: Any) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", killed)
    with pytest.raises(KeyboardInterrupt):
        files.atomic_write_text(target, "new\n")
    assert target.read_text() == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results.json"]


def test_terminal_summary_says_the_change_is_a_percentage_of_gold(results) -> None:
    console = Console(width=200, record=True)
    console.print(summary_table(DATASET, results["datasets"][DATASET]))
    text = " ".join(console.export_text().split())
    assert "✓ -12.3%" in text
    assert "relative change of the rule's headline point, in % of the gold score" in text
