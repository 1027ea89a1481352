"""The main job end to end: perturb, score, judge, report; reproducible, resumable, and clear
about bad input (errors name the field; a metric failing on some tests' rows makes those tests
errors while the others are judged)."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from itertools import pairwise
from pathlib import Path
from statistics import fmean

import datasets
import evaluate
import pytest
from conftest import SHARED_DATA
from runner_support import write_module

from blindspot.demo import read_demo
from blindspot.errors import BlindspotInputError
from blindspot.protocols.rank import run_blindspot
from blindspot.runner import parse_metric_spec, resolve_metrics
from blindspot.runner.data import load_gold_data

CNNDM = SHARED_DATA / "cnndm_summeval100_summarization.jsonl"


def _demo_rows(task: str = "summarization", n: int = 30) -> list[dict]:
    return read_demo(task)[:n]


# -- metric specs -----------------------------------------------------------------------------

def test_metric_spec_defaults_outputs_and_models() -> None:
    rouge = parse_metric_spec("rouge")
    assert (rouge.metric, rouge.output, rouge.name) == ("rouge", "rougeL", "rouge.rougeL")
    assert rouge.options == {"rouge_types": ["rougeL"]}  # only the judged type is computed
    bert = parse_metric_spec("bertscore.f1@minilm")
    assert bert.options == {"model_type": "minilm"} and bert.name == "bertscore.f1@minilm"
    assert parse_metric_spec("gpt_ppl@smollm2").options == {"model": "smollm2"}
    assert parse_metric_spec("ter").higher_is_better is False
    assert parse_metric_spec("chrf").higher_is_better is True


@pytest.mark.parametrize("spec, message", [
    ("nope", "unknown metric 'nope'; valid metrics: .*rouge"),
    ("rouge.rougeX", "no output 'rougeX'; its outputs are rouge1, rouge2, rougeL, rougeLsum"),
    ("rouge@minilm", "uses no model; drop '@minilm'"),
    ("rouge..x", "bad metric spec"),
])
def test_metric_spec_errors(spec: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_metric_spec(spec)


def test_metric_list_errors() -> None:
    with pytest.raises(ValueError, match="given twice: rouge.rougeL"):
        resolve_metrics("rouge,rouge.rougeL")
    with pytest.raises(ValueError, match="no metric given"):
        resolve_metrics(" , ")


# -- data ---------------------------------------------------------------------------------------

def test_columns_found_by_convention_and_checked() -> None:
    gold = load_gold_data("demo", "summarization")
    assert gold.columns == {"hypothesis": "gold", "references": "references",
                            "source": "source", "id": "id"}
    with pytest.raises(ValueError, match=r"references column 'refs' not found; the data has "
                                         r"columns \['id', 'source', 'gold', 'references'\]"
                                         r"; choose one with --references-column"):
        load_gold_data("demo", "summarization", {"references": "refs"})
    with pytest.raises(ValueError, match="no hypothesis column.*--hypothesis-column"):
        load_gold_data(datasets.Dataset.from_dict({"x": ["a"]}), "summarization")


def test_empty_dataset_is_an_error(tmp_path: Path) -> None:
    empty = datasets.Dataset.from_dict({"gold": [], "reference": []})
    with pytest.raises(ValueError, match="has no rows; nothing to perturb or score"):
        run_blindspot(empty, "rouge", tests="truncation", out=tmp_path / "r")
    assert not (tmp_path / "r" / "results.json").exists()


def test_unknown_test_fails_before_any_work(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown test 'truncations'; valid tests: .*truncation"):
        run_blindspot("demo", "rouge", tests="truncation,truncations", out=tmp_path / "r")
    assert not (tmp_path / "r").exists()


# -- the job ------------------------------------------------------------------------------------

def _hand_verdict(points: list[dict]) -> bool:
    """The rank protocol, recomputed from the reported points."""
    judged = [p["score_mean"] for p in points if p["judged"]]
    return all(a > b + 1e-5 for a, b in pairwise(judged))


def test_rouge_on_demo_report_is_consistent(tmp_path: Path) -> None:
    results = run_blindspot("demo", "rouge,chrf", task="summarization",
                            tests="truncation,negation,sentence_switching", seeds=[1, 2],
                            out=tmp_path / "report", progress=False)
    data = results["datasets"]["demo-summarization"]
    rouge = data["metrics"]["rouge.rougeL"]
    assert list(rouge["tests"]) == ["truncation", "negation", "sentence_switching"]
    for test, entry in rouge["tests"].items():
        assert entry["status"] in ("pass", "fail") and entry["passed"] == _hand_verdict(
            entry["points"]), test
        gold, *noised = entry["points"]
        assert gold["level"] == "gold" and gold["noise_ratio"] == 0.0
        assert [p["noise_ratio"] for p in noised if p["judged"]] == sorted(
            p["noise_ratio"] for p in noised if p["judged"])
    truncation = rouge["tests"]["truncation"]
    assert [p["level"] for p in truncation["points"]] == ["gold", "0.1", "0.2", "0.3", "0.4", "0.5"]
    assert truncation["points"][1]["n_seeds"] == 1  # deterministic: one seed
    negation = rouge["tests"]["negation"]
    assert all(p["n_seeds"] == 2 and p["n"] == 60 for p in negation["points"][1:])
    # the gold point is the mean ROUGE-L of the golds, which the rouge module computes too
    rows = _demo_rows()
    direct = evaluate.load("metrics/rouge").compute(
        predictions=[r["gold"] for r in rows], references=[r["references"] for r in rows],
        use_stemmer=True, use_aggregator=False)  # the runner's setting: stemmed, per row
    assert rouge["gold"]["score_mean"] == pytest.approx(fmean(direct["rougeL"]))
    # the worst example is a changed row with the largest score gain over its gold
    worst = truncation["worst_examples"][0]
    assert worst["perturbed"] != worst["gold"]
    assert worst["difference"] == pytest.approx(worst["perturbed_score"] - worst["gold_score"])
    assert worst["difference"] >= max(w["difference"] for w in truncation["worst_examples"])
    out = tmp_path / "report"
    for name in ("results.json", "report.md", "report.html"):
        assert (out / name).is_file()
    assert json.loads((out / "results.json").read_text()) == results
    assert (out / "plots" / "demo-summarization--truncation.png").is_file()
    assert "| truncation | fluency |" in (out / "report.md").read_text()


def test_rouge_l_blind_spots_on_cnndm_as_in_the_paper(tmp_path: Path) -> None:
    """The blind-spots paper (App. I): on its 100 CNN/DM documents, ROUGE-L fails truncation and
    noised punctuation and passes every other fluency and consistency test."""
    results = run_blindspot(str(CNNDM), "rouge", task="summarization",
                            tests="fluency,consistency", out=tmp_path / "r", progress=False)
    data = results["datasets"][CNNDM.name]
    assert data["rows"] == 100 and set(data["skipped_tests"]) == {"bert_diverge"}
    tests = data["metrics"]["rouge.rougeL"]["tests"]
    assert {t for t, r in tests.items() if r["status"] == "fail"} == {"truncation",
                                                                      "noised_punctuation"}
    assert {r["status"] for t, r in tests.items()} == {"pass", "fail"}
    assert len(tests) == 17
    assert tests["negation"]["points"][1]["n_seeds"] == 5


def test_same_seed_same_results_json(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    texts = []
    for run in ("a", "b"):
        monkeypatch.setenv("BLINDSPOT_CACHE", str(tmp_path / f"cache-{run}"))
        run_blindspot("demo", "rouge.rouge2,chrf", task="translation",
                      tests="local_swap,noun_switching,truncation", seeds=[3, 4],
                      out=tmp_path / run, progress=False)
        texts.append((tmp_path / run / "results.json").read_bytes())
    assert texts[0] == texts[1]


def test_metric_failing_on_some_tests_rows(tmp_path: Path) -> None:
    """NaN on negated rows and an exception on doubled words: those two tests are errors that
    say why; the other tests are judged; nothing counts as a pass."""
    picky = evaluate.load(str(write_module(tmp_path, "picky")))
    rows = _demo_rows("translation")
    data = datasets.Dataset.from_dict({"id": [r["id"] for r in rows],
                                       "gold": [r["gold"] for r in rows],
                                       "reference": [r["gold"] for r in rows]})
    results = run_blindspot(data, [picky, "chrf"], task="translation",
                            tests="negation,repeated_token,truncation,article_removal",
                            seeds=[1], out=tmp_path / "r", progress=False)
    metrics = results["datasets"]["data"]["metrics"]
    tests = metrics["picky"]["tests"]
    assert tests["negation"]["status"] == "error" and tests["negation"]["passed"] is None
    assert "returned NaN on" in tests["negation"]["error"]
    assert tests["repeated_token"]["status"] == "error"
    assert "ValueError: cannot score a repeated word" in tests["repeated_token"]["error"]
    assert tests["truncation"]["status"] == "pass" and tests["article_removal"]["status"] == "pass"
    assert all(t["status"] != "error" for t in metrics["chrf.chrf"]["tests"].values())
    report = (tmp_path / "r" / "report.md").read_text()
    assert "| negation | consistency | error |" in report


def test_metric_missing_its_column_is_refused_before_any_work(tmp_path: Path) -> None:
    """A metric that needs a column the data lacks stops the run before anything is perturbed
    or scored (no run state made), naming the metric, the column and the flag."""
    rows = _demo_rows("open_ended", 10)
    data = datasets.Dataset.from_dict({"gold": [r["gold"] for r in rows]})
    with pytest.raises(BlindspotInputError, match=r"metric 'rouge.rougeL' needs references, and "
                       r"the data has no references column \(its columns: gold\)\. Name the "
                       r"column that holds them with --references-column"):
        run_blindspot(data, "rouge,rep_ngram", task="open_ended", tests="truncation",
                      seeds=[1], progress=False, state_dir=tmp_path / "s")
    assert not (tmp_path / "s").exists()


# -- resuming -----------------------------------------------------------------------------------

RUN_SCRIPT = """
import sys, evaluate
from blindspot.protocols.rank import run_blindspot
run_blindspot("demo", [evaluate.load(sys.argv[1])], task="summarization",
              tests="truncation,sentence_switching", seeds=[1, 2], out=sys.argv[2],
              progress=False)
"""


def _stored_cells(out: Path) -> int:
    path = out / ".state" / "state.sqlite"
    if not path.exists():
        return 0
    try:
        with sqlite3.connect(path, timeout=1) as con:
            return con.execute("SELECT COUNT(*) FROM cells_v1").fetchone()[0]
    except sqlite3.OperationalError:  # the table is not created yet
        return 0


def _run(script: Path, out: Path, env: dict) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", RUN_SCRIPT, str(script), str(out)], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def _calls(log: Path) -> int:
    return len(log.read_text().splitlines()) if log.exists() else 0


def test_killed_run_resumes_to_the_same_results(tmp_path: Path) -> None:
    script = write_module(tmp_path, "slow")
    env = dict(os.environ, BLINDSPOT_SCORE_CACHE="0", SLOW_METRIC_SLEEP="0.3")
    whole, cut = tmp_path / "whole", tmp_path / "cut"
    env["SLOW_METRIC_LOG"] = str(tmp_path / "whole.log")
    done = _run(script, whole, env)
    assert done.wait(timeout=300) == 0, done.stderr.read()[-2000:]
    full_calls = _calls(tmp_path / "whole.log")

    env["SLOW_METRIC_LOG"] = str(tmp_path / "cut.log")
    killed = _run(script, cut, env)
    deadline = time.monotonic() + 300
    while _stored_cells(cut) < 4 and killed.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    killed.send_signal(signal.SIGKILL)
    killed.wait(timeout=60)
    assert killed.returncode == -signal.SIGKILL, "the run ended before it could be killed"
    assert not (cut / "results.json").exists()
    before = _calls(tmp_path / "cut.log")
    kept = _stored_cells(cut)
    assert 4 <= kept < 10  # gold + 9 cells in all: it really stopped halfway

    resumed = _run(script, cut, env)
    assert resumed.wait(timeout=300) == 0, resumed.stderr.read()[-2000:]
    assert (cut / "results.json").read_bytes() == (whole / "results.json").read_bytes()
    # the resumed run scored only what was missing (at most one cell was in flight at the kill)
    assert _calls(tmp_path / "cut.log") - before <= full_calls - kept
