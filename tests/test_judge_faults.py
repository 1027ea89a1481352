"""What a judge behind a server can get wrong, against our scripted server on 127.0.0.1
(tests/judge_support.py), for the cases no real server does on cue: a second server's grades are
never the first one's, a cached re-run makes no call, weighted grades without log-probabilities
are refused (or ``mode=auto`` says what ran), a trickling server is cut off within the
time-out, every server fault is named as the server's, and a constant judge is flagged. The bad
input table of docs/judges.md is walked row by row. No model is loaded."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from judge_support import Behaviour, chat_server, rows_file
from typer.testing import CliRunner

from blindspot.cli import app
from blindspot.judges.backends import Endpoint, JudgeServerError, RemoteJudge, Sampling, endpoint_text
from blindspot.scoring.scorer import get_scorer
from blindspot.scoring.signature import metric_signature, parse_signature

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "blindspot" / "demo" / "summarization.jsonl"
ROWS = [json.loads(line) for line in DEMO.read_text(encoding="utf-8").splitlines()][:2]
#: the time-out the runs here give one call; the table's trickle row says the same
TIMEOUT = 3
#: what a whole command may take (reading the rows, perturbing, the identity probe) on two
#: busy cores: a per-read time-out held a trickle for the server's 120 s, twice with one retry
COMMAND_S = 90


def _data(tmp_path: Path) -> Path:
    return rows_file(tmp_path, ROWS)


def _run(data: Path, out: Path, url: str, *extra: str):
    """``blindspot run`` with the judge at ``url`` (fluency: it reads the summary alone)."""
    return CliRunner().invoke(app, [
        "run", "--data", str(data), "--metrics", "llm_judge@judge-model", "--tests", "truncation",
        "--seeds", "1", "--out", str(out), "--judge-url", url,
        "--option", "llm_judge.template=fluency", "--option", "llm_judge.retries=1",
        "--option", f"llm_judge.timeout={TIMEOUT}", *extra])


@pytest.fixture(autouse=True)
def _no_key(monkeypatch: pytest.MonkeyPatch) -> None:
    """No key in the environment: the 401 row says so, as it would to a user without one."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


def _entry(out: Path) -> dict:
    data = json.loads((out / "results.json").read_text(encoding="utf-8"))["datasets"]
    return next(iter(next(iter(data.values()))["metrics"].values()))


def constant(grade: int):
    return lambda body: grade


def varied(body: dict) -> int:
    """A grade of fluency's scale (1-3) that follows the text judged."""
    return len(body["messages"][-1]["content"]) % 3 + 1


# -- the identity of a remote judge ------------------------------------------------------------------

@pytest.mark.quick
def test_the_endpoint_is_written_with_its_port_and_without_a_slash() -> None:
    assert endpoint_text("http://127.0.0.1:8000/v1/") == "http://127.0.0.1:8000/v1"
    assert endpoint_text("https://Judge.Example.org/api/v1") == "https://judge.example.org:443/api/v1"
    assert endpoint_text("http://[::1]/v1") == "http://[::1]:80/v1"


@pytest.mark.quick
def test_the_cache_key_and_the_signature_carry_the_server_and_what_it_serves(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BLINDSPOT_FAULTS_KEY", "sk-never-in-a-signature")

    def judged(url: str):
        return get_scorer("llm_judge", model="judge-model", backend="openai", url=url,
                          template="fluency", api_key_env="BLINDSPOT_FAULTS_KEY")

    with chat_server(Behaviour(fingerprint="fp_a")) as (url, _):
        first = judged(url)
        signature = parse_signature(metric_signature(first, "score", [1]))
        identity = first.identity()
    port = int(url.rsplit(":", 1)[1].split("/")[0])
    with chat_server(Behaviour(fingerprint="fp_b"), port=port) as (_, _):
        other = judged(url).identity()  # the same URL, another fingerprint
    with chat_server(Behaviour(models=["another-model"]), port=port) as (_, _):
        renamed = judged(url).identity()  # the same URL, another model listed
    assert len({identity, other, renamed}) == 3
    assert f'server="{endpoint_text(url)}"' in signature["opts"]
    assert "served=judge-model" in signature["opts"] and "fingerprint=fp_a" in signature["opts"]
    assert "sk-never" not in json.dumps(signature) and "BLINDSPOT_FAULTS_KEY" not in json.dumps(
        signature)


def test_a_second_server_never_reuses_the_first_ones_grades_and_a_cached_rerun_calls_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BLINDSPOT_CACHE", str(tmp_path / "cache"))
    data, out = _data(tmp_path), tmp_path / "out"
    with chat_server(Behaviour(grader=constant(2))) as (url, server_a):
        first = _run(data, out, url, "--option", "llm_judge.mode=greedy")
    with chat_server(Behaviour(grader=constant(3))) as (url, server_b):
        second = _run(data, out, url, "--option", "llm_judge.mode=greedy")  # the same command
        made = _entry(out)
        again = _run(data, tmp_path / "again", url, "--option", "llm_judge.mode=greedy")
    assert first.exit_code == second.exit_code == again.exit_code == 0, second.output
    assert made["anchors"]["gold"] == 3.0  # B's grade, not A's 2
    assert made["usage"]["calls"] == len(server_b.graded()) > 0
    assert made["usage"]["cached"] == 0
    cached = _entry(tmp_path / "again")
    assert cached["usage"]["calls"] == 0 and cached["usage"]["prompt_tokens"] == 0
    assert cached["usage"]["cached"] == made["usage"]["calls"]
    assert len(server_b.graded()) == made["usage"]["calls"]  # the re-run asked no row
    assert len(server_a.graded()) > 0
    # a judge that gives every text one grade is flagged in results, the terminal and report.md
    for result, folder in ((second, out), (again, tmp_path / "again")):
        assert _entry(folder)["flags"] == [
            "uninformative: it gave every text of the run the same score (3), so its verdicts "
            "say nothing about the texts"]
        assert "flag llm_judge.score@judge-model: uninformative" in " ".join(result.output.split())
        report = (folder / "report.md").read_text(encoding="utf-8")
        assert "### Flags" in report and "0 calls made" in (tmp_path / "again" / "report.md"
                                                             ).read_text(encoding="utf-8")


# -- weighted means weighted -------------------------------------------------------------------------

def test_weighted_without_log_probabilities_is_refused_before_any_row_and_auto_says_what_ran(
        tmp_path: Path) -> None:
    data = _data(tmp_path)
    with chat_server(Behaviour(grader=varied, logprobs=False)) as (url, server):
        refused = _run(data, tmp_path / "weighted", url)
        assert refused.exit_code == 1, refused.output
        assert server.graded() == []  # only the identity probe was sent
        auto = _run(data, tmp_path / "auto", url, "--option", "llm_judge.mode=auto")
    lines = [line for line in refused.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ")
    assert "returns no log-probabilities" in lines[0] and "llm_judge.mode=greedy" in lines[0]
    assert auto.exit_code == 0, auto.output
    assert "mode=greedy" in parse_signature(_entry(tmp_path / "auto")["signature"])["opts"]
    with chat_server(Behaviour(grader=varied)) as (url, _):
        weighted = _run(data, tmp_path / "auto-weighted", url, "--option", "llm_judge.mode=auto")
    assert weighted.exit_code == 0, weighted.output
    assert "mode=weighted" in parse_signature(_entry(tmp_path / "auto-weighted")["signature"])[
        "opts"]


# -- deadlines ---------------------------------------------------------------------------------------

@pytest.mark.quick
def test_a_server_that_sends_keep_alives_and_never_a_token_is_cut_off_within_the_timeout() -> None:
    # the probe is answered, then every row trickles: the row's call is cut at its deadline
    with chat_server(Behaviour(reply="trickle", fault_from=1)) as (url, _):
        judge = RemoteJudge(Endpoint(url, retries=3, timeout=2.0), "judge-model",
                            Sampling("greedy"))
        judge.identity()
        start = time.monotonic()
        with pytest.raises(JudgeServerError, match="did not finish a reply within 2 s"):
            judge.reply([{"role": "user", "content": "grade this"}], "this", (1, 2, 3))
        took = time.monotonic() - start
    assert 1.9 <= took < 3.0  # one deadline for the call, its retries included


@pytest.mark.quick
def test_a_server_that_answers_5xx_while_it_starts_gets_back_off_then_serves() -> None:
    # a cold server (transformers serve loading its model) answers 503 for a while, without
    # saying how long: the tries wait 0.5 s, then 1 s, within the call's one deadline
    with chat_server(Behaviour(fail_first=2, status=503, retry_after=None)) as (url, server):
        judge = RemoteJudge(Endpoint(url, retries=3, timeout=20.0), "judge-model",
                            Sampling("greedy"))
        start = time.monotonic()
        judge.identity()  # the probe is the call that meets the cold server
        took = time.monotonic() - start
    assert len(server.requests) == 3 and took >= 1.5


# -- the bad-input table of docs/judges.md -----------------------------------------------------------

#: how the scripted server plays each row of the table (its first cell)
CASES = {
    "unreachable": None,
    "401": Behaviour(key="the-right-key"),
    "5xx": Behaviour(fail_first=100, status=503),
    "not a chat completion": Behaviour(reply="not_chat"),
    "malformed chunk": Behaviour(reply="malformed"),
    "no choices": Behaviour(reply="no_choices"),
    "trickle": Behaviour(reply="trickle"),
    "no log-probabilities": Behaviour(logprobs=False),
    "no grade": Behaviour(no_grade=True),
    "out of range": Behaviour(grader=constant(7)),
}


def table() -> list[tuple[str, str, int]]:
    """(case, the documented line, exit status) of each row of the table."""
    text = (ROOT / "docs" / "judges.md").read_text(encoding="utf-8")
    section = text.split("### When the server misbehaves", 1)[1].split("\n#", 1)[0]
    rows = []
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 4 and cells[0].startswith("`") and cells[3].isdigit():
            rows.append((cells[0].strip("`"), cells[2].strip("`"), int(cells[3])))
    return rows


def test_the_table_has_a_row_for_every_case() -> None:
    assert [case for case, _, _ in table()] == list(CASES)


@pytest.mark.parametrize(("case", "said", "status"), table())
def test_each_bad_input_of_the_table_is_its_one_line_and_exit_status_within_the_deadline(
        tmp_path: Path, case: str, said: str, status: int) -> None:
    behaviour = CASES[case]
    mode = () if case == "no log-probabilities" else ("--option", "llm_judge.mode=greedy")
    start = time.monotonic()
    if behaviour is None:
        with chat_server() as (url, _):
            pass  # the port is closed again: nothing listens there
        result = _run(_data(tmp_path), tmp_path / "out", url, *mode)
    else:
        with chat_server(behaviour) as (url, server):
            result = _run(_data(tmp_path), tmp_path / "out", url, *mode)
            # no call outlived its deadline, as the server saw it (a trickle: until the judge
            # hung up, plus the second to its next keep-alive)
            served = server.served()
        assert max(served, default=0.0) <= TIMEOUT + 1.5, served
    took = time.monotonic() - start
    output = " ".join(result.output.split())
    assert result.exit_code == status, result.output
    expected = said.replace("PORT", url.rsplit(":", 1)[1].split("/")[0])
    for part in (p.strip() for p in expected.split("...")):
        assert part in output, (part, result.output)
    if status == 1:
        assert result.output.count("error: ") == 1 and "Traceback" not in result.output
    assert took < COMMAND_S, took
