"""``blindspot card`` (issue 42): a metric's report card, made by composing the protocols that
judge it, and the leaderboard of cards.

One ROUGE-L card is made by the command line on the first demo rows (two tasks, three tests, one
seed) with the human agreement on SummEval's expert judgments of its first documents; its
verdicts are those of the rank protocol run directly, its Kendall taus those of the correlation
protocol, and its bootstrap interval agrees with a resampling written here. A user's function
metric joins the shipped cards' leaderboard in one command; BERTScore on MiniLM gets a card too
(slow); a card is pushed into a Hub-API server on loopback and read back by its id; bad input is
one line and exit 1.
"""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from conftest import SHARED_DATA
from datasets import Dataset
from hub_support import HubServer, hub_server
from judge_support import Behaviour, chat_server
from scipy import stats
from typer.testing import CliRunner, Result

from blindspot.cli import app
from blindspot.demo import read_demo
from blindspot.protocols.card import fingerprint, shipped_cards, stale_inputs
from blindspot.protocols.correlation import correlations, kendall_intervals
from blindspot.protocols.interface import ProtocolRequest, get_protocol
from blindspot.protocols.rank import run_blindspot
from blindspot.report.card_report import card_label

#: one xdist group: its module fixtures (the SummEval judgments, ROUGE's card, the Hub server)
#: are set up once, not once per worker
pytestmark = pytest.mark.xdist_group("card")

JUDGMENTS = SHARED_DATA / "summeval_expert_judgments.jsonl"
REFERENCES = SHARED_DATA / "cnndm_summeval100_summarization.jsonl"
DOCUMENTS = 10
ROWS = 6
TESTS = "truncation,negation,copy_source"
TASKS = ("summarization", "translation")
#: bootstrap resamples of the interval check: the two streams' percentiles agree within 0.03
DRAWS = 2000
SECTIONS = ("# Report card: ", "## Signature", "## Summary", "## Verdict matrix",
            "## Hygiene checks (check-up)", "## Agreement with human judgments",
            "## Judge audits", "## Cost", "## Worst examples", "## Provenance")
BLINDSPOT = str(Path(sys.executable).parent / "blindspot")


def _cli(*args: str, code: int = 0) -> Result:
    result = CliRunner().invoke(app, list(args))
    assert result.exit_code == code, result.output[-3000:]
    return result


def _csv(text: str) -> list[dict[str, str]]:
    """The CSV table at the end of a command's output."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("metric,tasks,"))
    return list(csv.DictReader(io.StringIO("\n".join(lines[start:]))))


@pytest.fixture(scope="module")
def judgments(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """SummEval's expert judgments of its first documents (all 16 systems each)."""
    rows = [json.loads(line) for line in JUDGMENTS.read_text(encoding="utf-8").splitlines()]
    keep = list(dict.fromkeys(r["id"] for r in rows))[:DOCUMENTS]
    path = tmp_path_factory.mktemp("summeval") / "judgments.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows if r["id"] in keep),
                    encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def rouge_card(tmp_path_factory: pytest.TempPathFactory, judgments: Path
               ) -> tuple[Path, Result, dict]:
    """``blindspot card rouge`` on the first demo rows, with the human agreement."""
    out = tmp_path_factory.mktemp("cards") / "rouge"
    result = _cli("card", "rouge", "--tasks", ",".join(TASKS), "--rows", str(ROWS), "--tests",
                  TESTS, "--seeds", "1", "--checkup-rows", "3", "--max-words", "64", "--human",
                  str(judgments), "--human-references", str(REFERENCES), "--bootstrap", "300",
                  "--reports", "--out", str(out), "--format", "csv")
    return out, result, json.loads((out / "results.json").read_text(encoding="utf-8"))


def test_the_rouge_card_has_every_section_its_signature_and_its_blind_spot(rouge_card) -> None:
    out, result, card = rouge_card
    text = (out / "card.md").read_text(encoding="utf-8")
    assert [text.index(s) for s in SECTIONS] == sorted(text.index(s) for s in SECTIONS)
    assert card["signature"].startswith("blindspot:") and "|metric:rouge.rougeL|" in \
        card["signature"] and card["signature"] in text
    # ROUGE-L rises as a summary is cut (the blind-spots paper): its fluency line names it
    assert "truncation (summarization" in card["summary"]["fluency"]
    assert card["tasks"]["summarization"]["tests"]["truncation"]["status"] == "fail"
    assert list(card["tasks"]) == list(TASKS) and card["judge_audit"] is None
    assert [c["verdict"] for c in card["checkup"]["checks"].values()].count("error") == 0
    assert card["cost"]["seconds_per_1000_texts"] > 0 and card["cost"]["texts"] == ROWS
    assert f"report: {(out / 'card.md').resolve()}" in " ".join(result.output.split())
    # --reports: each composed protocol's own folder beside the card
    for folder, protocol in (("rank-summarization", "rank"), ("rank-translation", "rank"),
                             ("checkup", None), ("correlation", "correlation")):
        saved = json.loads((out / folder / "results.json").read_text(encoding="utf-8"))
        assert saved.get("protocol") == protocol and (out / folder / "report.md").is_file()


def test_the_card_composes_the_rank_and_correlation_protocols(rouge_card, judgments) -> None:
    _, _, card = rouge_card
    for task in TASKS:
        rank = run_blindspot(Dataset.from_list(read_demo(task)[:ROWS]), "rouge", task=task,
                             tests=TESTS, seeds=[1], progress=False)
        (entry,) = next(iter(rank["datasets"].values()))["metrics"].values()
        for test, verdict in entry["tests"].items():
            kept = card["tasks"][task]["tests"][test]
            assert (kept["status"], kept["relative_change"], kept["within_noise"]) == \
                (verdict["status"], verdict["relative_change"], verdict["within_noise"])
    direct = get_protocol("correlation").run(ProtocolRequest(
        str(judgments), "rouge", progress=False,
        options={"references": str(REFERENCES), "bootstrap": 300})).to_dict()
    (entry,) = direct["metrics"].values()
    assert card["human"]["criteria"] == entry["criteria"]
    assert (card["human"]["documents"], card["human"]["systems"]) == (DOCUMENTS, 16)
    for levels in card["human"]["criteria"].values():
        for level in levels.values():
            low, high = level["kendall_ci"]
            assert low <= level["kendall"] <= high


def _judged(judgments: Path) -> tuple[list[str], list[str], list[float], list[float]]:
    """Systems, documents, a metric (the summary's length in words: any score will do) and the
    relevance judgments of every judged summary."""
    rows = [json.loads(line) for line in judgments.read_text(encoding="utf-8").splitlines()]
    return ([r["system"] for r in rows], [r["id"] for r in rows],
            [float(len(r["summary"].split())) for r in rows],
            [float(r["expert_relevance"]) for r in rows])


def test_the_bootstrap_interval_agrees_with_a_resampling_written_here(judgments) -> None:
    systems, documents, metric, human = _judged(judgments)
    found = kendall_intervals(systems, documents, metric, human, DRAWS)
    docs, names = sorted(set(documents)), sorted(set(systems))
    # SummEval judges every system once per document: a document x system table of each side
    table = np.zeros((2, len(docs), len(names)))
    for i, (doc, system) in enumerate(zip(documents, systems, strict=True)):
        table[:, docs.index(doc), names.index(system)] = (metric[i], human[i])
    per_doc = [correlations(list(table[0, d]), list(table[1, d]))["kendall"]
               for d in range(len(docs))]
    rng = np.random.default_rng(12345)  # another stream than ours: the intervals agree in law
    summary, system = [], []
    for _ in range(DRAWS):
        picked = rng.integers(0, len(docs), len(docs))
        summary.append(np.mean([per_doc[d] for d in picked]))
        means = table[:, picked].mean(axis=1)
        system.append(stats.kendalltau(means[0], means[1])[0])
    for level, draws in (("summary", summary), ("system", system)):
        assert found[level] == pytest.approx(list(np.percentile(draws, [2.5, 97.5])), abs=0.03)


def test_a_card_knows_whether_it_is_current(rouge_card, judgments) -> None:
    _, _, card = rouge_card
    assert card["fingerprint"] == fingerprint(card["inputs"])
    files = {"human": judgments, "human_references": REFERENCES}
    assert stale_inputs(card, **files) == {}
    older = {**card, "inputs": {**card["inputs"], "rules": "0" * 64,
                                "data": {**card["inputs"]["data"], "translation": "changed"}}}
    assert sorted(stale_inputs(older, **files)) == ["data", "rules"]


def test_the_leaderboard_counts_the_cards_verdicts(rouge_card) -> None:
    out, _, card = rouge_card
    (row,) = _csv(_cli("card", "--leaderboard", str(out), "--no-shipped", "--format",
                       "csv").output)
    counts = Counter((r["category"], r["status"]) for task in card["tasks"].values()
                     for r in task["tests"].values())
    for category in ("fluency", "consistency", "targeted"):
        assert int(row[f"{category}_passed"]) == counts[category, "pass"]
        assert int(row[f"{category}_decided"]) == counts[category, "pass"] + \
            counts[category, "fail"]
    assert row["metric"] == "rouge.rougeL" and row["signature"] == card["signature"]
    markdown = _cli("card", "--leaderboard", str(out), "--no-shipped", "--format",
                    "markdown").output
    assert markdown.startswith("| metric | tasks | fluency | fluency \\~ |")
    none = _cli("card", "--leaderboard", str(out), "--no-shipped", "--task", "open_ended",
                "--format", "csv").output
    assert _csv(none) == []  # ROUGE-L reads per-row references: no open-ended figures


def test_a_user_function_metric_joins_the_leaderboard_in_one_command(tmp_path: Path,
                                                                     monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    Path("my_metric.py").write_text(
        "from statistics import fmean\n\n\n"
        "def length_ratio(predictions, references):\n"
        "    return [len(p.split()) / fmean(len(r.split()) for r in refs)\n"
        "            for p, refs in zip(predictions, references)]\n", encoding="utf-8")
    result = _cli("card", "my_metric.py:length_ratio", "--tasks", "summarization", "--rows", "4",
                  "--tests", "truncation,sentence_switching", "--seeds", "1", "--checkup-rows",
                  "2", "--max-words", "32", "--format", "csv")
    card = json.loads(Path("cards/length_ratio/results.json").read_text(encoding="utf-8"))
    assert card["summary"]["consistency"].startswith("consistency: 0 of 1 passed; blind spots: "
                                                     "sentence_switching")
    assert card["tasks"]["summarization"]["tests"]["truncation"]["status"] == "pass"
    shown = {row["metric"] for row in _csv(result.output)}
    shipped = {card_label(c) for c in shipped_cards()}
    assert len(shipped) >= 20 and shown == {"length_ratio", *shipped}


def test_bad_input_is_one_line_before_any_work(rouge_card, tmp_path: Path) -> None:
    out = tmp_path / "card"
    cases = [
        (["card", "rouge", "--human", str(tmp_path / "none.jsonl"), "--out", str(out)],
         "no such file; give a jsonl/csv/parquet file (human judgments to correlate with"),
        (["card", "rouge,chrf", "--out", str(out)], "a card describes one metric; got 2"),
        (["card", "rouge", "--tasks", "poetry", "--out", str(out)], "tasks"),
        (["card"], "give the METRIC"),
        (["card", "--leaderboard", str(tmp_path / "nowhere")], "no such folder of cards"),
        (["card", "rouge", "--push-git", str(tmp_path)], "--push-git needs --push"),
    ]
    for args, message in cases:
        result = _cli(*args, code=1)
        assert message in result.output and "Traceback" not in result.output, args
        assert not (out / "results.json").exists()
    damaged = tmp_path / "cards" / "broken"
    damaged.mkdir(parents=True)
    (damaged / "results.json").write_text('{"protocol": "card", ', encoding="utf-8")
    result = _cli("card", "--leaderboard", str(tmp_path / "cards"), code=1)
    assert f"{damaged / 'results.json'}: not a readable results.json" in \
        " ".join(result.output.split())
    card = json.loads((rouge_card[0] / "results.json").read_text(encoding="utf-8"))
    (damaged / "results.json").write_text(json.dumps({**card, "tasks": {"summarization": {}}}),
                                          encoding="utf-8")
    result = _cli("card", "--leaderboard", str(tmp_path / "cards"), code=1)
    assert f"{damaged / 'results.json'}: a card the leaderboard cannot read (KeyError" in \
        " ".join(result.output.split()) and "Traceback" not in result.output


@pytest.mark.slow
def test_bertscore_on_minilm_gets_a_card(tmp_path: Path) -> None:
    out = tmp_path / "bertscore"
    _cli("card", "bertscore@minilm", "--tasks", "translation", "--rows", "4", "--tests",
         "truncation", "--seeds", "1", "--checkup-rows", "2", "--max-words", "32", "--out",
         str(out), "--no-shipped")
    card = json.loads((out / "results.json").read_text(encoding="utf-8"))
    text = (out / "card.md").read_text(encoding="utf-8")
    assert all(section in text for section in SECTIONS)
    assert "|metric:bertscore.f1|model:minilm@" in card["signature"] and \
        "|dev:cpu|" in card["signature"]
    assert card["metric"]["kind"] == "model" and card["cost"]["device"] == "cpu"
    assert card["tasks"]["translation"]["tests"]["truncation"]["status"] in ("pass", "fail")


def _grade(body: dict) -> int:
    """A judge with a known bias: a pairwise prompt prefers the first summary; a graded one
    grades by the prompt's length (1-3, the fluency rubric's scale)."""
    text = body["messages"][-1]["content"]
    return 1 if "Summary 2:" in text else len(text) % 3 + 1


def test_an_llm_judges_card_holds_its_audits_and_names_its_server_as_run_does(
        tmp_path: Path) -> None:
    """The judge (a chat server on loopback, as tests/judge_support.py serves one) gets the
    judge-audit protocol's audits on the first task's rows, as that protocol gives them; its
    signature names the server that graded, as ``run``'s does (issue 38: the endpoint, never a
    key), and the card's settings leave the ``url`` option out."""
    with chat_server(Behaviour(grader=_grade)) as (url, _):
        judge = {"llm_judge": {"backend": "openai", "url": url, "retries": 0}}
        request = ProtocolRequest("demo", "llm_judge@judge-model", tests="truncation", seeds=[1],
                                  metric_options=judge, progress=False, out=tmp_path / "card",
                                  options={"tasks": "summarization", "rows": 3,
                                           "checkup_rows": 2, "max_words": 32,
                                           "time_cost": False})
        card = get_protocol("card").run(request).to_dict()
        audit = get_protocol("judge-audit").run(ProtocolRequest(
            Dataset.from_list(read_demo("summarization")[:3]), "llm_judge@judge-model",
            metric_options=judge, progress=False)).to_dict()
    assert card["judge_audit"]["audits"] == {
        name: {"passed": entry["passed"], "explanation": entry["explanation"]}
        for name, entry in audit["audits"].items()}
    text = (tmp_path / "card" / "card.md").read_text(encoding="utf-8")
    assert "| position |" in text and "| rubric |" in text
    assert url in card["signature"] and url in text
    assert "url" not in json.dumps(card["config"])


@pytest.fixture(scope="module")
def hub(tmp_path_factory: pytest.TempPathFactory) -> HubServer:
    with hub_server(tmp_path_factory.mktemp("hub")) as running:
        yield running


def test_a_card_is_pushed_and_read_back_from_the_hub(rouge_card, hub: HubServer,
                                                     tmp_path: Path) -> None:
    out, _, card = rouge_card
    pushed = _cli("card", "--out", str(out), "--push", "org/rouge-card", "--push-git",
                  str(hub.mirrors))
    assert "pushed to" in pushed.output
    readme = (out / "README.md").read_text(encoding="utf-8")
    assert readme.startswith("---\npretty_name: 'blindspot report card: rouge.rougeL'")
    assert json.loads((out / "blindspot_build.json").read_text())["fingerprint"] == \
        card["fingerprint"]
    env = dict(os.environ, HF_ENDPOINT=hub.endpoint, HF_HOME=str(tmp_path / "home"),
               HF_HUB_OFFLINE="0")
    done = subprocess.run([BLINDSPOT, "card", "--leaderboard", "org/rouge-card", "--no-shipped",
                           "--format", "csv"], capture_output=True, text=True, env=env,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    (row,) = _csv(done.stdout)
    assert (row["metric"], row["signature"]) == ("rouge.rougeL", card["signature"])
    assert "/api/datasets/org/rouge-card" in hub.log.read_text()
