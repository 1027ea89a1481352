"""The Space and the LLM judge: a visitor never names a judge URL (their metric specs name an
offline model at most, and they set no metric option); the operator may configure one judge
server (``blindspot space --judge-url`` or $BLINDSPOT_SPACE_JUDGE_URL), which every llm_judge run
of the Space then calls; a judge flagged uninformative is named as such in the results the
Space shows."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

import blindspot.space
from blindspot.cli import app
from blindspot.space.limits import SpaceLimits, judge_options, limits_from_env
from blindspot.space.tabs.stress import make_request, verdicts_html

OPERATOR = "http://127.0.0.1:8000/v1"


def _request(metrics: list[str], limits: SpaceLimits) -> dict:
    return make_request("rank", "demo", "summarization", None, metrics, ["truncation"], [1],
                        None, {}, limits)


@pytest.mark.parametrize("spec", ["llm_judge@http://127.0.0.1:9/v1", "llm_judge@evil.example:80",
                                  "llm_judge@/etc/passwd"])
def test_a_visitor_cannot_name_a_judge_server_or_a_path(spec: str) -> None:
    with pytest.raises(ValueError, match="not allowed here"):
        _request([spec], SpaceLimits(judge_url=OPERATOR))


def test_the_operators_judge_server_is_the_only_one_a_space_run_calls() -> None:
    plain = _request(["rouge", "llm_judge@smollm2"], SpaceLimits())
    assert "metric_options" not in plain  # no operator server: the judge runs in-process
    served = _request(["rouge", "llm_judge@smollm2"], SpaceLimits(judge_url=OPERATOR))
    assert served["metric_options"] == {"llm_judge": {"backend": "openai", "url": OPERATOR}}
    assert judge_options(SpaceLimits(judge_url=OPERATOR), ["rouge"]) == {}


@pytest.mark.parametrize("url", ["http://user:secret@127.0.0.1:8000/v1",
                                 "http://127.0.0.1:8000/v1?key=secret", "file:///etc/passwd"])
def test_the_operators_judge_url_holds_no_credentials(url: str) -> None:
    with pytest.raises(ValueError, match="judge URL"):
        limits_from_env({"BLINDSPOT_SPACE_JUDGE_URL": url})
    assert limits_from_env({"BLINDSPOT_SPACE_JUDGE_URL": OPERATOR}).judge_url == OPERATOR


def test_blindspot_space_takes_the_operators_judge_url_and_refuses_credentials(
        monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []
    monkeypatch.setattr(blindspot.space, "serve", lambda *args: calls.append(args))
    monkeypatch.delenv("BLINDSPOT_SPACE_JUDGE_URL", raising=False)
    result = CliRunner().invoke(app, ["space", "--judge-url", OPERATOR])
    assert result.exit_code == 0, result.output
    assert calls[-1][3].judge_url == OPERATOR
    refused = CliRunner().invoke(app, ["space", "--judge-url", "http://me:pw@127.0.0.1:8000/v1"])
    assert refused.exit_code == 1 and "credentials" in refused.output and "pw" not in refused.output
    assert len(calls) == 1


@pytest.mark.quick
def test_the_stress_tab_names_an_uninformative_judge() -> None:
    flag = ("uninformative: it gave every text of the run the same score (1), so its verdicts "
            "say nothing about the texts")
    results = {"config": {}, "datasets": {"demo-summarization": {
        "task": "summarization", "rows": 2,
        "metrics": {"llm_judge.score@smollm2": {"tests": {}, "flags": [flag]},
                    "rouge.rougeL": {"tests": {}}}}}}
    shown = verdicts_html(results)
    assert f"<p>flag llm_judge.score@smollm2: {flag}</p>" in shown
    assert shown.count("<p>flag ") == 1  # ROUGE-L carries none
