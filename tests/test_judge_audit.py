"""The judge audits (position, rubric, flakiness, panel; blindspot judge-audit) against a real
HTTP judge server on 127.0.0.1 (tests/judge_support.py) whose biases are set by the test: each
audit must catch the biased judge and pass the unbiased one. Only the slow test loads a model
(SmolLM2, the pairwise judge in this process)."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest
from judge_support import Behaviour, chat_server

from blindspot import judge_audit as audit
from blindspot.errors import BlindspotInputError
from blindspot.judges.template import load_template, parse_template
from blindspot.scoring.engine import score_rows
from blindspot.scoring.scorer import get_scorer

DEMO = Path(__file__).resolve().parents[1] / "blindspot" / "demo" / "summarization.jsonl"
ROWS = [json.loads(line) for line in DEMO.read_text(encoding="utf-8").splitlines()][:4]
GOLDS = [r["gold"] for r in ROWS]
SOURCES = [r["source"] for r in ROWS]
SHORT = [g.split(".")[0] + "." for g in GOLDS]  # the gold's first sentence: a worse summary


def options(url: str, **more):
    return {"model": "judge-model", "backend": "openai", "url": url, "retries": 0,
            "timeout": 20, **more}


def _pair(body) -> tuple[str, str]:
    text = body["messages"][-1]["content"]
    found = re.search(r"Summary 1:\n(.*)\n\nSummary 2:\n(.*)\n\nWhich", text, re.S)
    assert found, text
    return found.group(1), found.group(2)


def prefers_longer(body) -> int:
    first, second = _pair(body)
    return 1 if len(first) >= len(second) else 2


def always_first(body) -> int:
    return 1


@pytest.mark.parametrize(("grader", "passed", "flip", "both"), [
    (prefers_longer, True, 0.0, 1.0),   # judges the texts: the order changes nothing
    (always_first, False, 1.0, 0.0),    # judges the position: every pair flips
])
def test_position_flip_rate_of_a_pairwise_judge(grader, passed, flip, both) -> None:
    with chat_server(Behaviour(grader=grader)) as (url, behaviour):
        result = audit.position(options(url, template="pairwise", mode="greedy"), GOLDS, SHORT,
                                SOURCES)
    assert (result.passed, result.figures["flip_rate"], result.figures["gold_both"]) == \
        (passed, flip, both)
    assert result.rule == "order_invariant" and result.figures["pairs"] == 4
    # both orders asked, gold first then gold second, each pair's own texts
    pairs = [_pair(r["body"]) for r in behaviour.graded()]
    assert sorted(pairs) == sorted([*zip(GOLDS, SHORT, strict=True), *zip(SHORT, GOLDS, strict=True)])
    assert f"{flip:.0%} of 4 pairs flip" in result.explanation


def test_position_counts_a_tie_as_neither_a_preference_nor_a_flip() -> None:
    # weighted: the judge puts the same probability on 1 and 2 (its argmax alone would say 1)
    with chat_server(Behaviour(grader=always_first, top=0.5)) as (url, _):
        tied = audit.position(options(url, template="pairwise"), GOLDS, SHORT, SOURCES)
    assert tied.figures["ties"] == 1.0 and tied.figures["flip_rate"] == 0.0
    assert tied.figures["gold_both"] == 0.0 and math.isnan(tied.figures["first_wins"])
    assert not tied.passed and tied.flag == ("uninformative: every one of the 8 calls was a "
                                             "tie, so the judge prefers no answer")
    with chat_server(Behaviour(grader=always_first)) as (url, _):
        biased = audit.position(options(url, template="pairwise"), GOLDS, SHORT, SOURCES)
    assert biased.figures["ties"] == 0.0 and biased.figures["flip_rate"] == 1.0
    assert biased.figures["first_wins"] == 1.0 and biased.flag is None


def test_position_budget_is_refused_before_any_call() -> None:
    with chat_server() as (url, behaviour):
        with pytest.raises(BlindspotInputError, match="needs up to 8 judge calls"):
            audit.position(options(url, template="pairwise", max_calls=7), GOLDS, SHORT, SOURCES)
    assert behaviour.requests == []


@pytest.mark.quick
def test_a_pairwise_template_grades_nothing_alone_and_must_have_scale_1_2(tmp_path) -> None:
    assert load_template("pairwise").pairwise and not load_template("fluency").pairwise
    with chat_server() as (url, behaviour):
        with pytest.raises(BlindspotInputError, match="pairwise template"):
            score_rows(get_scorer("llm_judge", **options(url, template="pairwise")), GOLDS,
                       sources=SOURCES, cache=None)
    assert behaviour.graded() == []
    with pytest.raises(BlindspotInputError, match=r"must be \[1, 2\] in a pairwise"):
        parse_template({"scale": [1, 5], "rubric": ["a"], "system": "s",
                        "user": "{hypothesis} {second}"}, tmp_path / "p.toml", "p")


def _rubric_line(body) -> str:
    return body["messages"][-1]["content"].split("1. ", 1)[1].split("\n", 1)[0]


def test_rubric_sensitivity_catches_a_judge_that_reads_the_rubrics_wording() -> None:
    fluency = load_template("fluency")
    texts = GOLDS

    def by_wording(body) -> int:  # grades 3 unless the rubric is reworded
        return 1 if _rubric_line(body) == fluency.reworded[0] else 3

    def by_text(body) -> int:  # grades the summary alone
        summary = body["messages"][-1]["content"].split("Summary:\n", 1)[1]
        return 2 + (len(summary.split("\n\n")[0]) % 2)

    with chat_server(Behaviour(grader=by_wording)) as (url, _):
        biased = audit.rubric(options(url, template="fluency", mode="greedy"), texts)
    with chat_server(Behaviour(grader=by_text)) as (url, behaviour):
        steady = audit.rubric(options(url, template="fluency", mode="greedy"), texts)
    assert not biased.passed and biased.figures["sensitivity"] == 2.0
    assert biased.figures["mean_abs_change"] == {"reversed": 0.0, "reworded": 2.0}
    assert biased.figures["exact_agreement"] == {"reversed": 1.0, "reworded": 0.0}
    assert steady.passed and steady.figures["sensitivity"] == 0.0
    # three rubrics asked of every row, the reversed one last line first
    firsts = {_rubric_line(r["body"]) for r in behaviour.graded()}
    assert firsts == {fluency.rubric[0], fluency.rubric[-1], fluency.reworded[0]}
    assert len(behaviour.graded()) == 3 * len(texts)


def test_flakiness_a_sampled_judge_whose_verdict_changes_is_no_pass() -> None:
    def steady(body) -> int:  # the padded summary below the gold, whatever the seed
        return 1 if "In other words" in body["messages"][-1]["content"] else 2

    def random_grade(body) -> int:  # the grade follows the request's sampling seed
        return body["seed"] % 3 + 1

    with chat_server(Behaviour(grader=steady)) as (url, behaviour):
        stable = audit.flakiness(options(url, template="fluency"), GOLDS, "judge_verbosity", 2,
                                 repeats=3)
    assert {r["body"]["temperature"] for r in behaviour.graded()} == {1.0}  # sampling on
    assert len({r["body"]["seed"] for r in behaviour.graded()}) > 1
    assert stable.passed and stable.figures["stability"] == 1.0
    assert stable.figures["test_verdict"] == "pass" and stable.figures["grade_stability"] == 1.0

    with chat_server(Behaviour(grader=random_grade)) as (url, _):
        flaky = audit.flakiness(options(url, template="fluency"), GOLDS, "judge_verbosity", 2,
                                repeats=6)
    verdicts = flaky.figures["verdicts"]
    assert set(verdicts) == {True, False}  # the same test passes on some repeats, not others
    assert not flaky.passed and flaky.figures["test_verdict"] == "flaky"
    assert flaky.figures["stability"] == max(verdicts.count(True), verdicts.count(False)) / 6
    assert flaky.figures["grade_stability"] < 1.0
    assert "is no pass" in flaky.explanation


def test_judge_audit_command_writes_each_audits_verdict_and_figures(tmp_path, monkeypatch) -> None:
    from typer.testing import CliRunner

    from blindspot.cli import app

    key = "sk-audit-0123456789-never-written"
    monkeypatch.setenv("OPENAI_API_KEY", key)

    def grader(body) -> int:  # pairwise: always the first answer; graded: by the text's length
        text = body["messages"][-1]["content"]
        return 1 if "Summary 2:" in text else len(text) % 3 + 1

    with chat_server(Behaviour(grader=grader)) as (url, behaviour):
        result = CliRunner().invoke(app, [
            "judge-audit", "--data", "demo", "--rows", "3", "--audits", "position,panel",
            "--judge", "rubric=as_written", "--judge", "rubric=reworded", "--judge-url", url,
            "--mode", "greedy", "--tolerance", "panel=1", "--judge-options", "max_tokens=4",
            "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert "position   FAIL  order_invariant: 100% of 3 pairs flip" in result.output
    assert f"report: {(tmp_path / 'report.md').resolve()}" in result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.md", "results.json"]
    written = (tmp_path / "results.json").read_text(encoding="utf-8")
    report = json.loads(written)
    assert (report["schema_version"], report["protocol"]) == (1, "judge-audit")
    assert report["judge"]["url"] == url  # shown as `blindspot run` shows it
    assert report["judge"]["max_tokens"] == 4 and report["judge"]["mode"] == "greedy"
    assert report["audits"]["position"]["flip_rate"] == 1.0
    assert report["audits"]["panel"]["judges"] == ["rubric=as_written", "rubric=reworded"]
    assert report["audits"]["panel"]["tolerance"] == 1 and report["audits"]["panel"]["passed"]
    assert len(report["audits"]["panel"]["panel"]["mean"]) == 3
    assert len(behaviour.graded()) == 2 * 3 + 2 * 3  # both orders, then two judges
    assert {r["body"]["max_tokens"] for r in behaviour.graded()} == {4}
    markdown = (tmp_path / "report.md").read_text(encoding="utf-8")
    assert "## position: FAIL\n\n`order_invariant` (tolerance 0.1): 100% of 3 pairs" in markdown
    assert "## panel: pass" in markdown
    for text in (written, markdown, result.output):
        assert key not in text and url in text
    assert {r["headers"]["authorization"] for r in behaviour.requests} == {f"Bearer {key}"}


def test_a_constant_judge_is_flagged_its_kappa_undefined_and_fail_on_exits_3(tmp_path) -> None:
    from typer.testing import CliRunner

    from blindspot.cli import app

    def audit_of(*extra: str):
        return CliRunner().invoke(app, [
            "judge-audit", "--data", "demo", "--rows", "2", "--audits", "rubric,panel",
            "--judge-url", url, "--mode", "greedy", "--out", str(tmp_path), *extra])

    with chat_server(Behaviour(grader=lambda body: 2)) as (url, _):
        gated = audit_of("--fail-on", "fail")
        plain = audit_of()
    assert gated.exit_code == 3 and plain.exit_code == 0, gated.output + plain.output
    assert ("--fail-on fail: 2 failed (judge-audit / rubric, judge-audit / panel); exit "
            "status 3") in gated.output
    saved = json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))
    rubric, panel = saved["audits"]["rubric"], saved["audits"]["panel"]
    flag = ("uninformative: the judge gave all 6 texts the {} 2, so this audit's figures say "
            "nothing about it")
    assert saved["flags"] == [f"rubric: {flag.format('score')}", f"panel: {flag.format('grade')}"]
    assert not rubric["passed"] and rubric["explanation"].startswith(flag.format("score"))
    assert rubric["sensitivity"] == 0.0  # the figure a constant judge would pass on
    # the full 3 x 3 matrix of the default panel (the rubric as written, reversed, reworded):
    # two judges that give one grade to every row have no kappa (null), not 1
    judges = ["rubric=as_written", "rubric=reversed", "rubric=reworded"]
    assert list(panel["agreement"]) == judges
    assert all(list(row) == judges for row in panel["agreement"].values())
    assert panel["agreement"]["rubric=reworded"]["rubric=as_written"] == {
        "exact": 1.0, "within_1": 1.0, "kappa": None}
    assert "kappa undefined" in panel["explanation"] and not panel["passed"]
    assert f"flag rubric: {flag.format('score')}" in " ".join(plain.output.split())
    assert "## Flags" in (tmp_path / "report.md").read_text(encoding="utf-8")


@pytest.mark.quick
def test_panel_agreement_is_every_judge_against_every_other() -> None:
    from blindspot.judges.agreement import agreement_matrix

    matrix = agreement_matrix({"a": [1, 2, 3], "b": [1, 2, 3], "c": [3, 2, 1]})
    assert matrix["b"]["c"].exact == matrix["c"]["b"].exact == pytest.approx(1 / 3)
    assert matrix["a"]["a"].kappa == 1.0 and matrix["a"]["b"].exact == 1.0
    assert math.isnan(agreement_matrix({"a": [2, 2], "b": [2, 2]})["a"]["b"].kappa)


@pytest.mark.quick
def test_the_commands_audit_flags_are_the_protocols_declared_options() -> None:
    """Each declared option of the judge-audit protocol is a flag of `blindspot judge-audit`
    with its declared default, except the two the command takes repeatable (--judge for
    judges, --tolerance AUDIT=VALUE for AUDIT_tolerance)."""
    import typer.main

    from blindspot.cli import judge_audit_command
    from blindspot.cli._declared import flag
    from blindspot.protocols.declarations import JUDGE_AUDIT

    command = typer.main.get_command_from_info(
        typer.models.CommandInfo(callback=judge_audit_command.judge_audit),
        pretty_exceptions_short=True, rich_markup_mode=None)
    flags = {opt: param.default for param in command.params for opt in param.opts}
    repeated = {"judges"} | {f"{name}_tolerance" for name in judge_audit_command.TOLERANT}
    for spec in JUDGE_AUDIT.options:
        if spec.name in repeated:
            assert flag(spec) not in flags, spec.name
        else:
            assert flags[flag(spec)] == spec.default, spec.name
    assert judge_audit_command.TOLERANT == ("position", "rubric", "panel")
    assert {"--judge", "--tolerance", "--model", "--judge-url", "--max-calls", "--out"} <= set(flags)


@pytest.mark.quick
def test_the_declared_audits_and_tolerances_are_the_audits_own() -> None:
    from blindspot.protocols.declarations import JUDGE_AUDIT

    assert JUDGE_AUDIT.option("audits").choices == tuple(audit.AUDITS)
    for name, spec in audit.AUDITS.items():
        if name != "flakiness":  # its rule has no tolerance to set: every repeat must agree
            assert JUDGE_AUDIT.option(f"{name}_tolerance").default == spec.tolerance, name


@pytest.mark.quick
@pytest.mark.parametrize(("argv", "message"), [
    (["--audits", "positon"], "protocol option audits='positon' is not accepted by the "
     "judge-audit protocol: audits must be comma-separated names from position, rubric, "
     "panel, flakiness"),
    (["--rows", "0"], "protocol option rows=0 is not accepted by the judge-audit protocol: "
     "rows must be a whole number >= 1"),
    (["--mode", "sample"], "mode must be one of weighted, greedy, auto"),
    (["--tolerance", "position=2"], "protocol option position_tolerance='2' is not accepted by "
     "the judge-audit protocol: position_tolerance must be a number >= 0 and <= 1"),
    (["--tolerance", "flakiness=0.5"], "--tolerance 'flakiness=0.5' must look like audit=value "
     "for an audit with a tolerance (position, rubric, panel)"),
    (["--judge-options", "max_tokens"], "--judge-options 'max_tokens': 'max_tokens' must look "
     "like key=value"),
    (["--judge", "rubric"], "judge 'rubric': 'rubric' must look like key=value"),
])
def test_a_bad_audit_setting_is_one_line_before_any_work(argv, message) -> None:
    """A bad value gets the protocol's one message (the same as from --protocol-option or
    compute()), exit 1, no traceback, before any data is read or judge called (a judge's
    option: before the data is read)."""
    from typer.testing import CliRunner

    from blindspot.cli import app

    result = CliRunner().invoke(app, ["judge-audit", "--data", "no-such-file.jsonl", *argv])
    assert result.exit_code == 1, result.output
    assert message in result.output and "Traceback" not in result.output
    assert "no-such-file" not in result.output  # refused before the data is read


def test_run_protocol_judge_audit_is_the_same_protocol(tmp_path) -> None:
    """`blindspot run --protocol judge-audit --metrics llm_judge@MODEL` runs it too: --judge-url
    and --max-calls reach the judge as in any run, the audits' settings as protocol options."""
    from typer.testing import CliRunner

    from blindspot.cli import app

    with chat_server(Behaviour(grader=always_first)) as (url, behaviour):
        result = CliRunner().invoke(app, [
            "run", "--protocol", "judge-audit", "--data", "demo", "--metrics",
            "llm_judge@judge-model", "--judge-url", url, "--max-calls", "4",
            "--protocol-option", "audits=position", "--protocol-option", "rows=2",
            "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert "position   FAIL  order_invariant: 100% of 2 pairs flip" in result.output
    saved = json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))
    assert saved["judge"]["model"] == "judge-model" and saved["judge"]["max_calls"] == 4
    assert list(saved["audits"]) == ["position"] and len(behaviour.graded()) == 4
    assert saved["judge"]["url"] == url


def test_flakiness_a_repeat_whose_reply_holds_no_grade_gives_no_verdict() -> None:
    with chat_server(Behaviour(no_grade=True)) as (url, _):
        result = audit.flakiness(options(url, template="fluency"), GOLDS[:2], "judge_verbosity",
                                 1, repeats=2)
    assert result.figures["verdicts"] == [None, None]
    assert result.figures["no_grade_repeats"] == 2 and not result.passed
    assert result.figures["test_verdict"] == "no verdict"
    assert math.isnan(result.figures["stability"])  # never "stability 100%"
    assert ("(stability none: no repeat gave a verdict, the test's verdict: no verdict); 0 "
            "repeat(s) graded every row, too few to compare grades; 2 of the repeats had a "
            "reply with no grade") in result.explanation


@pytest.mark.slow
def test_position_in_process_weighs_smollm2s_own_probabilities_of_1_and_2() -> None:
    import torch

    from blindspot.models import load_causal_lm
    from blindspot.scorers.llm_judge import prompt_ids

    judge = get_scorer("llm_judge", model="smollm2", template="pairwise")
    pairs = [(GOLDS[0], SHORT[0]), (SHORT[0], GOLDS[0])]
    replies = [judge.prefer([a], [b], SOURCES[:1])[0] for a, b in pairs]
    tokenizer, model = load_causal_lm("smollm2")
    template = load_template("pairwise")
    for (first, second), reply in zip(pairs, replies, strict=True):
        ids = prompt_ids(tokenizer, template.render(first, (), SOURCES[0], second=second))
        with torch.inference_mode():
            probs = torch.softmax(model(input_ids=torch.tensor([ids])).logits[0, -1].float(), -1)
        one, two = (float(probs[tokenizer.encode(d, add_special_tokens=False)[0]])
                    for d in ("1", "2"))
        assert reply.score - 1 == pytest.approx(two / (one + two), rel=1e-4)
        assert reply.grade == (1 if one >= two else 2)
    result = audit.position({"model": "smollm2", "template": "pairwise"}, GOLDS[:1], SHORT[:1],
                            SOURCES[:1])
    gold_first, gold_second = replies[0].grade == 1, replies[1].grade == 2
    assert result.figures["flip_rate"] == float(gold_first != gold_second)
    assert result.figures["gold_both"] == float(gold_first and gold_second)


def test_the_protocol_writes_a_figure_it_cannot_compute_as_null(tmp_path) -> None:
    """A sampled judge whose replies hold no grade leaves the flakiness audit no grade to
    compare: results.json says null (strict JSON, not NaN); compute()'s view is built from the
    same result."""
    from blindspot.protocols.interface import ProtocolRequest, get_protocol

    protocol = get_protocol("judge-audit")
    with chat_server(Behaviour(no_grade=True)) as (url, behaviour):
        result = protocol.run(ProtocolRequest(
            data="demo", metrics="llm_judge@judge-model", progress=False, out=tmp_path,
            metric_options={"llm_judge": options(url)},
            options={"audits": "flakiness", "rows": 2, "repeats": 2}))
    assert behaviour.requests  # each repeat stops at its first reply with no grade
    saved = json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))
    assert saved == result.to_dict()
    flaky = saved["audits"]["flakiness"]
    assert flaky["grade_stability"] is None and flaky["verdicts"] == [None, None]
    assert flaky["stability"] is None
    assert not flaky["passed"] and flaky["no_grade_repeats"] == 2
    view = protocol.view(result)
    assert view["passed"] == {"flakiness": False} and view["results"] == saved
    assert view["explanations"]["flakiness"] == flaky["explanation"]
