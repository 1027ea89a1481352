"""The ``blindspot`` command: perturb files in every format, suites, listing, clear errors."""

from __future__ import annotations

import json
import math
from pathlib import Path

import datasets
import pytest
from engine_support import cnndm_rows
from typer.testing import CliRunner

from blindspot.cli import app
from blindspot.io import read_table
from blindspot.perturbations import REGISTRY

runner = CliRunner()


@pytest.fixture()
def gold_file(tmp_path: Path) -> Path:
    path = tmp_path / "gold.jsonl"
    with open(path, "w", encoding="utf-8") as fh:
        for row in cnndm_rows(4):
            fh.write(json.dumps({"id": row["id"], "gold": row["gold"], "source": row["source"]}) + "\n")
    return path


@pytest.mark.parametrize("suffix", [".jsonl", ".csv", ".parquet"])
def test_single_test_every_format(gold_file: Path, tmp_path: Path, suffix: str) -> None:
    source = read_table(gold_file)
    infile = tmp_path / f"in{suffix}"
    outfile = tmp_path / f"out{suffix}"
    from blindspot.io import write_table

    write_table(source, infile)
    result = runner.invoke(app, ["perturb", str(infile), "--test", "truncation", "--level", "0.5",
                                 "--seed", "1", "-o", str(outfile)])
    assert result.exit_code == 0, result.output
    out = read_table(outfile)
    assert out["id"] == source["id"]
    for gold, noised in zip(out["gold"], out["perturbed"], strict=True):
        words = gold.split()
        kept = len(words) - math.floor(len(words) * 0.5)
        assert noised.split()[:kept - 1] == words[:kept - 1]
        assert noised.endswith(".")
    assert {str(x) for x in out["level"]} == {"0.5"}  # csv gives no types back


def test_suite_run_with_seeds_and_notices(gold_file: Path, tmp_path: Path) -> None:
    outfile = tmp_path / "suite.jsonl"
    result = runner.invoke(app, ["perturb", str(gold_file), "--test", "fluency", "--task",
                                 "summarization", "--seeds", "1,2", "-o", str(outfile)])
    assert result.exit_code == 0, result.output
    out = read_table(outfile)
    fluency = {n for n, c in REGISTRY.items() if c.category == "fluency"}
    assert set(out["perturbation"]) == fluency
    for name in fluency:
        rows = out.filter(lambda r, name=name: r["perturbation"] == name)
        seeds = set(rows["seed"])
        assert seeds == ({1} if REGISTRY[name].deterministic else {1, 2})


def test_suite_without_model_skips_with_notice(gold_file: Path, tmp_path: Path) -> None:
    needs_model = [n for n, c in REGISTRY.items() if "mlm" in c.requires
                   and c.levels.get("summarization")]
    result = runner.invoke(app, ["perturb", str(gold_file), "--test", "consistency",
                                 "--seeds", "1", "-o", str(tmp_path / "c.jsonl")])
    assert result.exit_code == 0, result.output
    for name in needs_model:
        assert f"skipped {name}" in " ".join(result.output.split())


@pytest.mark.parametrize("args, message", [
    (["--test", "nope", "--level", "0.1"], "unknown test 'nope'"),
    (["--test", "truncation", "--level", "7"], "out of range"),
    (["--test", "truncation", "--level", "0.1", "--column", "summary"], "text column 'summary' not found"),
    (["--test", "fluency", "--task", "poetry"], "unknown task 'poetry'"),
])
def test_clear_errors(gold_file: Path, tmp_path: Path, args: list[str], message: str) -> None:
    result = runner.invoke(app, ["perturb", str(gold_file), "-o", str(tmp_path / "o.jsonl"), *args])
    assert result.exit_code == 1
    assert message in " ".join(result.output.split())


def test_unreadable_and_missing_files(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{not json\n")
    result = runner.invoke(app, ["perturb", str(bad), "--test", "truncation", "--level", "0.1",
                                 "-o", str(tmp_path / "o.jsonl")])
    assert result.exit_code == 1 and "bad.jsonl, line 1: not valid JSON" in result.output
    result = runner.invoke(app, ["perturb", str(tmp_path / "none.csv"), "--test", "truncation",
                                 "--level", "0.1", "-o", str(tmp_path / "o.jsonl")])
    assert result.exit_code == 1 and "not found" in result.output
    result = runner.invoke(app, ["perturb", str(bad.with_suffix(".txt")), "--test", "truncation",
                                 "--level", "0.1", "-o", str(tmp_path / "o.jsonl")])
    assert result.exit_code == 1 and "unsupported file type" in result.output


def test_missing_id_column_uses_text_hash(tmp_path: Path) -> None:
    path = tmp_path / "noid.jsonl"
    datasets.Dataset.from_dict({"gold": ["One two three four.", "Five six seven eight."]}).to_json(path)
    result = runner.invoke(app, ["perturb", str(path), "--test", "truncation", "--level", "0.5",
                                 "-o", str(tmp_path / "o.jsonl")])
    assert result.exit_code == 0, result.output
    assert read_table(tmp_path / "o.jsonl")["perturbed"] == ["One two.", "Five six."]


def test_list_json_has_every_test() -> None:
    result = runner.invoke(app, ["list", "--json"])
    assert result.exit_code == 0
    entries = json.loads(result.output)
    assert {e["name"] for e in entries} == set(REGISTRY)
    truncation = next(e for e in entries if e["name"] == "truncation")
    assert truncation["levels"]["summarization"] == ["0.1", "0.2", "0.3", "0.4", "0.5"]


# -- blindspot run: the main job ----------------------------------------------------------------

def test_run_writes_a_report_with_column_mapping(tmp_path: Path) -> None:
    data = tmp_path / "mine.csv"
    rows = [{"doc": r["id"], "summary": r["gold"], "ref": r["references"][0]}
            for r in cnndm_rows(6)]
    datasets.Dataset.from_list(rows).to_csv(str(data), index=False)
    out = tmp_path / "report"
    result = runner.invoke(app, ["run", "--data", str(data), "--metrics", "rouge.rouge1,chrf",
                                 "--tests", "truncation,negation", "--seeds", "1",
                                 "--hypothesis-column", "summary", "--references-column", "ref",
                                 "--id-column", "doc", "--out", str(out),
                                 "--protocol-option", "worst_examples=1"])
    assert result.exit_code == 0, result.output
    results = json.loads((out / "results.json").read_text())
    assert results["protocol"] == "rank" and results["config"]["worst_examples"] == 1
    data_entry = results["datasets"]["mine.csv"]
    assert data_entry["columns"] == {"hypothesis": "summary", "references": "ref",
                                     "source": None, "id": "doc"}
    assert list(data_entry["metrics"]) == ["rouge.rouge1", "chrf.chrf"]
    assert "truncation" in result.output and "report:" in result.output
    examples = data_entry["metrics"]["chrf.chrf"]["tests"]["truncation"]["worst_examples"]
    assert {e["id"] for e in examples} <= {r["doc"] for r in rows}


@pytest.mark.parametrize("args, message", [
    (["--metrics", "rouge,bleurtx"], "unknown metric 'bleurtx'"),
    (["--metrics", "rouge", "--tests", "negations"], "unknown test 'negations'"),
    (["--metrics", "rouge", "--references-column", "nope"], "references column 'nope' not found"),
    (["--metrics", "rouge", "--option", "rouge"], "must look like metric.key=value"),
    (["--metrics", "rouge", "--option", "rouge.measure=\"area\""], "measure must be one of"),
    (["--metrics", "rouge", "--data", "no-such-org/no-such-set"],
     "could not load 'no-such-org/no-such-set' from the Hugging Face Hub"),
    (["--metrics", "rouge", "--protocol", "ranking"], "unknown protocol 'ranking'; valid protocols: "),
    (["--metrics", "rouge", "--protocol-option", "tolerance"], "must look like key=value"),
    (["--metrics", "rouge", "--protocol-option", "tolerence=0.1"],
     "'tolerence' is not an option of the rank protocol; valid options: actors, address, batch_size,"),
])
def test_run_clear_errors(gold_file: Path, tmp_path: Path, args: list[str], message: str) -> None:
    result = runner.invoke(app, ["run", "--data", str(gold_file), "--out", str(tmp_path / "r"),
                                 *args])
    assert result.exit_code == 1
    assert message in " ".join(result.output.split())
