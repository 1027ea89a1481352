"""The LLM judge's openai backend against a real HTTP server on 127.0.0.1 (tests/judge_support.py):
429 then success, a reply with no grade, a plain JSON completion, a server that dies mid-run (and
the resume), a call budget too small, the weighted grade from top_logprobs, and a key that never
reaches a file or a log (and no key sent when none is set). The templates are checked here too.
No model is loaded. The server faults and the identity of a server: tests/test_judge_faults.py."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest
from judge_support import NEXT, TOP, Behaviour, chat_server, grade_for, rows_file
from typer.testing import CliRunner

from blindspot.cli import app
from blindspot.errors import BlindspotInputError
from blindspot.judges.grades import NoGradeError, parse_grade, weighted_grade
from blindspot.judges.template import load_template, shipped_templates
from blindspot.scoring.engine import score_rows
from blindspot.scoring.scorer import get_scorer

DEMO = Path(__file__).resolve().parents[1] / "blindspot" / "demo" / "summarization.jsonl"
ROWS = [json.loads(line) for line in DEMO.read_text(encoding="utf-8").splitlines()][:4]
KEY = "sk-test-0123456789abcdef-never-written"


def judge(url: str, **options):
    return get_scorer("llm_judge", model="judge-model", backend="openai", url=url, retries=2,
                      timeout=20, **options)


def score(scorer, rows=ROWS):
    return score_rows(scorer, [r["gold"] for r in rows], sources=[r["source"] for r in rows],
                      cache=None)


# -- templates and grades ---------------------------------------------------------------------------

@pytest.mark.quick
def test_judges_imports_no_scorer() -> None:
    """blindspot.judges (templates, grades, the server backend) sits under the scorers: the
    in-process backend that needs the likelihood metrics' helpers is scorers/llm_judge.py's."""
    package = Path(__file__).resolve().parents[1] / "blindspot" / "judges"
    for module in package.glob("*.py"):
        for node in ast.walk(ast.parse(module.read_text(encoding="utf-8"))):
            names = ([node.module or ""] if isinstance(node, ast.ImportFrom)
                     else [a.name for a in node.names] if isinstance(node, ast.Import) else [])
            assert not any(n.startswith("blindspot.scorers") for n in names), module.name


@pytest.mark.quick
def test_every_shipped_template_loads_and_renders_its_placeholders() -> None:
    assert shipped_templates() == ["coherence", "consistency", "fluency", "mt_adequacy",
                                   "pairwise", "quality", "relevance"]
    for name in shipped_templates():
        template = load_template(name)
        system, user = template.render("HYPO", ("REF",), "SRC")
        assert "HYPO" in user["content"] and "{" not in user["content"]
        assert template.reworded is not None and len(template.reworded) == len(template.rubric)
        assert (("SRC" in user["content"]) == template.needs("source"))


@pytest.mark.quick
@pytest.mark.parametrize(("text", "field", "said"), [
    ('scale = [1, 5]\nrubric = ["a"]\nsystem = "s"\nuser = "{hypothesis} {summary}"', "user",
     "{summary}"),
    ('scale = [1, 10]\nrubric = ["a"]\nsystem = "s"\nuser = "{hypothesis}"', "scale", "<= 9"),
    ('scale = [1, 5]\nrubric = ["a"]\nsystem = "s"', "user", "missing"),
    ('scale = [1, 5]\nrubric = ["a"]\nsystem = "s"\nuser = "{source}"', "user", "{hypothesis}"),
    ('scale = [1, 5]\nrubric = ["a"]\nreworded = ["a", "b"]\nsystem = "s"\nuser = "{hypothesis}"',
     "reworded", "one for one"),
])
def test_a_bad_template_file_is_one_error_naming_the_file_and_field(tmp_path: Path, text: str,
                                                                    field: str, said: str) -> None:
    path = tmp_path / "mine.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(BlindspotInputError) as caught:
        load_template(str(path))
    assert caught.value.file == str(path) and caught.value.field == field
    assert said in str(caught.value)


@pytest.mark.quick
def test_a_users_template_file_scores_like_a_shipped_one(tmp_path: Path) -> None:
    path = tmp_path / "mine.toml"
    path.write_text('scale = [1, 5]\nrubric = ["short"]\nsystem = "grade"\n'
                    'user = "{rubric}\\n{hypothesis}\\nGrade {scale_min}-{scale_max}."',
                    encoding="utf-8")
    with chat_server() as (url, server):
        out = score_rows(judge(url, template=str(path), mode="greedy"), ["abc"], cache=None)
    sent = server.graded()[0]["body"]["messages"]
    assert sent == [{"role": "system", "content": "grade"},
                    {"role": "user", "content": "1. short\nabc\nGrade 1-5."}]
    assert out["grade"] == [float(grade_for(sent))]


@pytest.mark.quick
def test_grades_are_parsed_and_weighted_by_hand() -> None:
    assert parse_grade("Coherence: 4. The sentences", range(1, 6)) == 4
    assert parse_grade("score 12 then 3", range(1, 6)) == 3  # 12 is not a grade of 1-5
    assert parse_grade("I cannot rate it", range(1, 6)) is None
    weighted = weighted_grade({1: 0.1, 2: 0.1, 3: 0.2, 4: 0.4, 5: 0.2})
    assert weighted is not None and weighted.grade == 4
    assert weighted.score == pytest.approx((0.1 + 0.2 + 0.6 + 1.6 + 1.0) / 1.0)


# -- the client against a real server ----------------------------------------------------------------

@pytest.mark.quick
def test_the_weighted_grade_comes_from_top_logprobs_with_calls_and_tokens() -> None:
    with chat_server() as (url, server):
        out = score(judge(url))
    grades = [grade_for(r["body"]["messages"]) for r in server.graded()]
    assert all(r["body"]["stream"] and r["body"]["top_logprobs"] == 20 for r in server.requests)
    by_prompt = sorted(grades)
    expected = sorted(g * TOP + (g + 1) * NEXT if g < 5 else 5.0 for g in grades)
    assert sorted(out["score"]) == pytest.approx(expected)
    assert sorted(out["grade"]) == [float(g) for g in by_prompt]
    assert out["calls"] == [1.0] * 4 and out["prompt_tokens"] == [100.0] * 4


@pytest.mark.quick
def test_a_429_is_retried_and_then_succeeds() -> None:
    with chat_server(Behaviour(fail_first=2, status=429)) as (url, server):
        out = score(judge(url, mode="greedy"), ROWS[:1])
    assert len(server.requests) == 4  # two 429s, then the identity probe, then the row
    assert len(server.graded()) == 1
    assert out["grade"] == [float(grade_for(server.requests[-1]["body"]["messages"]))]


@pytest.mark.quick
@pytest.mark.parametrize("mode", ["greedy", "weighted"])
def test_a_plain_json_completion_is_read_as_a_streamed_one(mode: str) -> None:
    # a server that ignores "stream": true and answers one chat.completion object
    with chat_server(Behaviour(reply="json")) as (url, _):
        whole = score(judge(url, mode=mode), ROWS[:2])
    with chat_server() as (url, _):
        streamed = score(judge(url, mode=mode), ROWS[:2])
    assert whole == streamed
    assert all(g in (1.0, 2.0, 3.0, 4.0, 5.0) for g in whole["grade"])


@pytest.mark.quick
def test_no_key_is_sent_when_its_variable_is_unset(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("BLINDSPOT_UNSET_KEY", raising=False)
    with chat_server() as (url, server):
        score(judge(url, mode="greedy", api_key_env="BLINDSPOT_UNSET_KEY"), ROWS[:1])
    assert server.requests and all("authorization" not in r["headers"] for r in server.requests)


@pytest.mark.quick
def test_a_reply_with_no_grade_is_an_error_naming_the_row_and_the_reply() -> None:
    with chat_server(Behaviour(no_grade=True)) as (url, _):
        with pytest.raises(NoGradeError) as caught:
            score(judge(url, mode="greedy"), ROWS[:1])
    assert ROWS[0]["gold"][:40] in str(caught.value)
    assert "I would rather not say." in str(caught.value)


# -- whole runs through the command line -------------------------------------------------------------

def _data(tmp_path: Path) -> Path:
    return rows_file(tmp_path, ROWS)


def _run(data: Path, out: Path, url: str, *extra: str):
    return CliRunner().invoke(app, [
        "run", "--data", str(data), "--metrics", "llm_judge@judge-model", "--tests",
        "truncation,copy_source", "--seeds", "1", "--out", str(out), "--judge-url", url,
        "--option", "llm_judge.retries=1", "--option", "llm_judge.timeout=5",
        "--option", "llm_judge.api_key_env=BLINDSPOT_TEST_JUDGE_KEY", *extra])


def test_a_call_budget_too_small_is_refused_before_any_call(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BLINDSPOT_SCORE_CACHE", "0")  # the budget counts without a score cache too
    data = _data(tmp_path)
    with chat_server() as (url, server):
        refused = _run(data, tmp_path / "out", url, "--max-calls", "3")
        assert refused.exit_code == 1, refused.output
        assert "budget is 3" in refused.output and server.graded() == []
        needed = int(re.search(r"needs up to (\d+) judge calls", refused.output)[1])
        enough = _run(data, tmp_path / "out", url, "--max-calls", str(needed))
    assert enough.exit_code == 0, enough.output
    assert 0 < len(server.graded()) <= needed
    metric = next(iter(json.loads((tmp_path / "out" / "results.json").read_text())["datasets"]
                       .values()))["metrics"]
    entry = next(iter(metric.values()))
    assert entry["usage"]["calls"] == len(server.graded()) and entry["usage"]["cached"] == 0
    assert entry["anchors"]["gold"] is not None  # the anchors fit the budget too


def test_a_dead_server_stops_the_run_and_the_same_command_resumes_to_the_same_bytes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("BLINDSPOT_TEST_JUDGE_KEY", KEY)
    monkeypatch.setenv("BLINDSPOT_CACHE", str(tmp_path / "cache-a"))
    data, out = _data(tmp_path), tmp_path / "out"
    with chat_server(Behaviour(answer_at_most=9)) as (url, server):
        port = int(url.rsplit(":", 1)[1].split("/")[0])
        dead = _run(data, out, url)
    assert dead.exit_code == 1
    assert dead.output.count("error: ") == 1 and "failed after 2 tries" in dead.output
    assert "run the same command to resume" in dead.output
    assert all(r["headers"]["authorization"] == f"Bearer {KEY}" for r in server.requests)
    with chat_server(port=port) as (url, _):
        resumed = _run(data, out, url)
        monkeypatch.setenv("BLINDSPOT_CACHE", str(tmp_path / "cache-b"))
        clean = _run(data, tmp_path / "clean", url)
    assert resumed.exit_code == 0 and clean.exit_code == 0, resumed.output + clean.output
    assert (out / "results.json").read_bytes() == (tmp_path / "clean" / "results.json").read_bytes()
    entry = json.loads((out / "results.json").read_text())["datasets"]
    usage = next(iter(next(iter(entry.values()))["metrics"].values()))["usage"]
    assert usage["calls"] > 9 and usage["prompt_tokens"] == 100 * usage["calls"]
    # the key is in no file the runs wrote (results, report, state, cache) and in no output
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert KEY.encode() not in path.read_bytes(), path
    for result in (dead, resumed, clean):
        assert KEY not in result.output
    logged = capfd.readouterr()
    assert KEY not in logged.out + logged.err
