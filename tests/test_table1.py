"""Tests of ``blindspot report``: Table 1 of a run as CSV, LaTeX or markdown, from results.json.

The results are test_report's hand-written ones (every verdict, a within-noise fail, a metric that
could not run), so each expected cell is worked out from them by hand.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import pytest
from test_report import DATASET, make_results
from typer.testing import CliRunner

from blindspot.cli import app
from blindspot.report.markdown import render_markdown as report_markdown
from blindspot.report.table1 import latex_escape

runner = CliRunner()


def results_file(tmp_path: Path, results: dict[str, Any] | None = None) -> Path:
    path = tmp_path / "results.json"
    path.write_text(json.dumps(results or make_results() | {"schema_version": 2}))
    return path


def test_csv_has_one_row_per_test_in_words(tmp_path: Path) -> None:
    result = runner.invoke(app, ["report", str(results_file(tmp_path)), "--format", "csv"])
    assert result.exit_code == 0, result.output
    rows = list(csv.reader(io.StringIO(result.stdout)))
    assert rows == [
        ["dataset", "test", "category", "rouge.rougeL", "bertscore.f1", "broken.score"],
        [DATASET, "truncation", "fluency", "pass -12.3%", "error", "error"],
        [DATASET, "negation", "consistency", "fail +0.8%", "pass -4.3%", "error"],
        [DATASET, "repetition", "fluency", "undecided", "fail (within noise) +1.0%", "error"]]


def test_latex_escapes_names_and_marks_within_noise_fails(tmp_path: Path) -> None:
    results = make_results() | {"schema_version": 2}
    data = results["datasets"].pop(DATASET)
    data["metrics"] = {("rouge_&_50%" if name == "rouge.rougeL" else name): entry
                       for name, entry in data["metrics"].items()}
    results["datasets"]["cnn_dm #1"] = data
    out = tmp_path / "table1.tex"
    result = runner.invoke(app, ["report", str(results_file(tmp_path, results)), "--format",
                                 "latex", "--out", str(out)])
    assert result.exit_code == 0, result.output
    lines = out.read_text().splitlines()
    assert r"\providecommand{\bsfail}{\ensuremath{\times}}" in lines
    assert r"test & category & rouge\_\&\_50\% & bertscore.f1 & broken.score \\" in lines
    assert r"truncation & fluency & \bspass{} -12.3\% & error & error \\" in lines
    assert r"repetition & fluency & n/a & \bsfail\bsnoise{} +1.0\% & error \\" in lines
    assert any(line.startswith(r"\caption{Blind-spot tests on cnn\_dm \#1.") for line in lines)
    assert r"\begin{tabular}{llccc}" in lines and lines.count(r"\end{table}") == 1


def test_latex_escape_writes_every_special_as_text() -> None:
    assert latex_escape("a\\b{c}~d^e$f#g_h&i%j") == (
        r"a\textbackslash{}b\{c\}\textasciitilde{}d\textasciicircum{}e\$f\#g\_h\&i\%j")
    assert latex_escape("Δ+0.01 —") == r"$\Delta$+0.01 --"


def test_markdown_is_the_reports_summary(tmp_path: Path) -> None:
    """The markdown table is report.md's own summary, legend included."""
    result = runner.invoke(app, ["report", str(results_file(tmp_path)), "--format", "markdown"])
    assert result.exit_code == 0, result.output
    table = result.stdout.split("\n\n", 1)[1]
    assert table.strip() in report_markdown(make_results())
    assert "| repetition | fluency | n/a (capped) | ✗\\~ +1.0% | error |" in table


def test_a_report_folder_is_read_too(tmp_path: Path) -> None:
    results_file(tmp_path)
    result = runner.invoke(app, ["report", str(tmp_path), "--format", "csv"])
    assert result.exit_code == 0 and result.stdout.startswith("dataset,test,category")


@pytest.mark.parametrize(("content", "expected"), [
    (None, "no such file"),
    ("{not json", "not a readable JSON file"),
    ("[1, 2]", "a JSON list, not a results object"),
    (json.dumps({"schema_version": 99, "datasets": {}}), "field 'schema_version' is 99"),
    (json.dumps({"schema_version": 2, "protocol": "correlation", "metrics": {}}),
     "results of the 'correlation' protocol"),
])
def test_a_missing_or_invalid_file_is_one_clear_error(tmp_path: Path, content: str | None,
                                                      expected: str) -> None:
    path = tmp_path / "results.json"
    if content is not None:
        path.write_text(content)
    result = runner.invoke(app, ["report", str(path), "--format", "csv"])
    assert result.exit_code == 1
    assert result.stderr.startswith(f"error: {path}: ") and expected in result.stderr
    assert "Traceback" not in result.output


def test_a_test_without_a_status_names_where(tmp_path: Path) -> None:
    results = make_results() | {"schema_version": 2}
    del results["datasets"][DATASET]["metrics"]["bertscore.f1"]["tests"]["negation"]["status"]
    result = runner.invoke(app, ["report", str(results_file(tmp_path, results))])
    assert result.exit_code == 1
    assert (f"dataset '{DATASET}', metric 'bertscore.f1', test 'negation': field 'status' is "
            "None") in result.stderr


def test_an_unknown_format_is_refused(tmp_path: Path) -> None:
    result = runner.invoke(app, ["report", str(results_file(tmp_path)), "--format", "tex"])
    assert result.exit_code == 1 and "--format 'tex' is not one of csv, latex, markdown" in (
        result.stderr)
