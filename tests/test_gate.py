"""The CI gate (issue 18 §5): `blindspot run --fail-on error|fail|significant` exit statuses, and
the same gate in `compute`'s result."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from blindspot.cli import app
from blindspot.demo import read_demo
from blindspot.exit_codes import ExitCode, FailOn, failed_tests, gate, run_exit_code
from blindspot.protocols.rank import module_view

EXIT_OK, EXIT_ERRORS, EXIT_FAILED = ExitCode.JUDGED, ExitCode.TESTS_IN_ERROR, ExitCode.TESTS_FAILED

runner = CliRunner()


def _results(statuses: dict[str, tuple[str, bool | None]]) -> dict:
    tests = {test: {"status": status, "within_noise": noise}
             for test, (status, noise) in statuses.items()}
    return {"datasets": {"d": {"metrics": {"m": {"tests": tests}}}}}


@pytest.mark.parametrize("statuses, expected", [
    ({"a": ("pass", None)}, {"error": 0, "fail": 0, "significant": 0}),
    ({"a": ("fail", True)}, {"error": 0, "fail": 3, "significant": 0}),
    ({"a": ("fail", False)}, {"error": 0, "fail": 3, "significant": 3}),
    ({"a": ("error", None), "b": ("undecided", None)}, {"error": 2, "fail": 2, "significant": 2}),
    ({"a": ("error", None), "b": ("fail", True)}, {"error": 2, "fail": 3, "significant": 2}),
])
def test_exit_status_by_gate(statuses: dict, expected: dict) -> None:
    results = _results(statuses)
    assert {mode.value: run_exit_code(results, mode) for mode in FailOn} == expected
    assert gate(results)["exit_code"] == expected


def test_gate_names_the_tests() -> None:
    results = _results({"a": ("fail", True), "b": ("fail", False), "c": ("error", None)})
    assert gate(results) == {"errors": ["d: m / c"], "fails": ["d: m / a", "d: m / b"],
                             "significant_fails": ["d: m / b"],
                             "exit_code": {"error": 2, "fail": 3, "significant": 3}}
    assert failed_tests(results, "error") == []


# -- through the CLI --------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def copied_source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Demo summaries whose source is their own first reference: the copy scores ROUGE-L 1.0,
    far above every gold summary, a fail beyond any noise."""
    path = tmp_path_factory.mktemp("copy") / "rows.jsonl"
    rows = read_demo("summarization")[:8]
    path.write_text("".join(json.dumps({"id": r["id"], "gold": r["gold"],
                                        "references": r["references"],
                                        "source": r["references"][0]}) + "\n" for r in rows),
                    encoding="utf-8")
    return path


def _run(args: list[str], out: Path) -> tuple[int, str, dict | None]:
    result = runner.invoke(app, ["run", *args, "--out", str(out)])
    written = out / "results.json"
    results = json.loads(written.read_text(encoding="utf-8")) if written.exists() else None
    return result.exit_code, result.output, results


@pytest.mark.parametrize("fail_on, code", [(None, EXIT_OK), ("error", EXIT_OK),
                                           ("fail", EXIT_FAILED), ("significant", EXIT_FAILED)])
def test_a_significant_fail(copied_source: Path, tmp_path: Path, fail_on: str | None,
                            code: int) -> None:
    gate = ["--fail-on", fail_on] if fail_on else []
    status, output, results = _run(["--data", str(copied_source), "--metrics", "rouge",
                                    "--tests", "copy_source", *gate], tmp_path)
    result = results["datasets"]["rows.jsonl"]["metrics"]["rouge.rougeL"]["tests"]["copy_source"]
    assert result["status"] == "fail" and result["within_noise"] is False
    assert status == code, output
    if code == EXIT_FAILED:
        kind = "failed beyond the noise" if fail_on == "significant" else "failed"
        assert (f"--fail-on {fail_on}: 1 {kind} (rows.jsonl: rouge.rougeL / copy_source); "
                f"exit status 3") in output


@pytest.fixture(scope="module")
def truncation_run(tmp_path_factory: pytest.TempPathFactory) -> dict:
    out = tmp_path_factory.mktemp("truncation")
    codes = {mode: _run(["--data", "demo", "--metrics", "rouge", "--tests", "truncation",
                         "--fail-on", mode], out)[0] for mode in ("fail", "significant")}
    return {"codes": codes, "results": json.loads((out / "results.json").read_text())}


def test_significant_ignores_a_fail_within_noise(truncation_run: dict) -> None:
    # ROUGE-L rewards truncated summaries on the 30 demo rows, but each rise from one level to
    # the next is within its rows' bootstrap interval: more rows could change the verdict
    result = (truncation_run["results"]["datasets"]["demo-summarization"]["metrics"]
              ["rouge.rougeL"]["tests"]["truncation"])
    assert result["status"] == "fail" and result["within_noise"] is True
    assert truncation_run["codes"] == {"fail": EXIT_FAILED, "significant": EXIT_OK}


def test_errors_exit_2_whatever_the_gate(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps({"id": r["id"], "gold": r["gold"]}) + "\n"
                            for r in read_demo("summarization")[:3]), encoding="utf-8")
    broken = tmp_path / "broken.py"  # a metric that fails on every text: every test ends in error
    broken.write_text("def score(predictions):\n    raise ValueError('broken')\n", encoding="utf-8")
    for fail_on in ([], ["--fail-on", "significant"]):
        status, output, results = _run(["--data", str(path), "--metrics", f"{broken}:score",
                                        "--tests", "truncation", "--seeds", "1", *fail_on],
                                       tmp_path / "out")
        assert status == EXIT_ERRORS, output
        assert "1 ended in error (rows.jsonl: score); exit status 2" in output


def test_fail_on_is_for_the_rank_protocol(tmp_path: Path) -> None:
    result = runner.invoke(app, ["run", "--data", "demo", "--metrics", "rouge", "--protocol",
                                 "deviation", "--fail-on", "fail", "--out", str(tmp_path)])
    assert result.exit_code == ExitCode.BAD_INPUT
    assert "error: --fail-on fail gates on the rank protocol's verdicts" in result.output
    assert not (tmp_path / "results.json").exists()


def test_compute_view_carries_the_gate(truncation_run: dict) -> None:
    view = module_view(truncation_run["results"])
    assert view["gate"]["fails"] == ["demo-summarization: rouge.rougeL / truncation"]
    assert view["gate"]["significant_fails"] == []
    assert view["gate"]["exit_code"] == {"error": 0, "fail": 3, "significant": 0}
    assert view["explanations"]["truncation"].startswith("rises ")
