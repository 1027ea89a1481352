"""The deviation protocol (Sai et al. 2021, Eq. 1; PROTOCOLS.md §3): hand-computed deviations,
normalisation, the template table, human-score tables (and their errors), and the CLI and the
evaluate module end to end on a real CNN/DM slice."""

from __future__ import annotations

import json
from itertools import islice
from pathlib import Path

import pytest
from conftest import SHARED_DATA
from typer.testing import CliRunner

from blindspot.checklists import TASKS, TEMPLATES, canonical_checklist_task, load_human_scores, templates_for
from blindspot.cli import app
from blindspot.perturbations import REGISTRY, get_perturbation
from blindspot.protocols.deviation import deviation, normalise, normaliser
from blindspot.protocols.interface import ProtocolRequest, get_protocol
from blindspot.runner.metric_spec import parse_metric_spec
from blindspot.scoring.engine import score_rows
from blindspot.scoring.scorer import get_scorer

runner = CliRunner()


# -- Eq. 1 ----------------------------------------------------------------------------------------

def test_deviation_by_hand() -> None:
    # h(p') = 0.2: human delta -0.8; metric delta mean(-0.2, -0.1) = -0.15; s = -0.8 + 0.15
    out = deviation(0.2, [0.5, 0.7], [0.3, 0.6], "drop")
    assert out["metric_delta"] == pytest.approx(-0.15, abs=1e-12)
    assert out["human_delta"] == pytest.approx(-0.8, abs=1e-12)
    assert out["deviation"] == pytest.approx(-0.65, abs=1e-12)
    assert (out["n"], out["verdict"]) == (2, "detected")
    # an invariant template: humans do not move, the metric drops 0.05 -> s = +0.05
    same = deviation(1.0, [0.4], [0.35], "invariant")
    assert same["deviation"] == pytest.approx(0.05, abs=1e-12) and same["verdict"] == "dropped"
    assert deviation(1.0, [0.4], [0.35], "invariant", tolerance=0.1)["verdict"] == "kept"
    assert deviation(0.5, [0.4], [0.4], "drop")["verdict"] == "missed"
    with pytest.raises(ValueError, match="as many gold as perturbed"):
        deviation(0.5, [0.4], [], "drop")


def test_normalisation_ranges() -> None:
    chrf, rouge, ter = (parse_metric_spec(s) for s in ("chrf", "rouge", "ter"))
    assert normaliser("auto", chrf, [3.0, 4.0]) == {"method": "range", "low": 0.0, "high": 100.0}
    assert normaliser("auto", rouge, [0.2])["high"] == 1.0
    assert normalise(25.0, normaliser("auto", chrf, [])) == 0.25
    pooled = normaliser("auto", ter, [-80.0, -20.0, -50.0])  # no natural range: min-max
    assert pooled == {"method": "minmax", "low": -80.0, "high": -20.0}
    assert normalise(-50.0, pooled) == 0.5
    assert normaliser("minmax", chrf, [10.0, 30.0])["low"] == 10.0
    with pytest.raises(ValueError, match="normalise='zscore'"):
        normaliser("zscore", chrf, [])


# -- the template table -------------------------------------------------------------------

def test_every_task_has_fluency_invariance_and_control_rows() -> None:
    assert set(TASKS) == {t.task for t in TEMPLATES}
    for task in TASKS:
        criteria = {t.criterion for t in templates_for(task)}
        assert {"fluency", "invariance", "control"} <= criteria and len(criteria) >= 4
    invariant = {t.template for t in TEMPLATES if t.expectation == "invariant"}
    assert invariant == {"synonyms", "contractions", "expansions", "numerals_to_words",
                         "alternative_reference"}
    assert canonical_checklist_task("D2T") == "data_to_text"
    with pytest.raises(ValueError, match="unknown checklist task .open_ended.; valid checklist "
                       "tasks: data_to_text, dialogue, image_captioning"):
        canonical_checklist_task("open_ended")
    with pytest.raises(ValueError, match="not a criterion of task 'summarization'"):
        templates_for("summarization", "adequacy")


MENLI = {"jumble", "typo", "subject_verb_disagreement", "number_error", "name_error",
         "omission"}


def test_template_tests_exist_and_take_their_level() -> None:
    for t in TEMPLATES:
        if t.is_control or (t.test in MENLI and t.test not in REGISTRY):
            continue
        assert t.test in REGISTRY, t
        REGISTRY[t.test].level_kind.parse(t.level)  # raises on a bad level


def test_default_human_scores_cover_every_template_with_a_basis() -> None:
    table = load_human_scores()
    assert set(table.scores) == {t.key for t in TEMPLATES}
    assert all(table.basis[k] for k in table.scores)
    for t in TEMPLATES:
        score = table.scores[t.key]
        assert (score == 1.0) == (t.expectation == "invariant"), t
    assert table.scores[("dialogue", "listening", "can_you_repeat")] == pytest.approx(0.1)


@pytest.mark.parametrize("content, message", [
    ("task,criterion,template\nsummarization,coherence,reorder_sentences\n",
     r"lacks column\(s\) \['human_score'\]"),
    ("task,criterion,template,human_score\nsummarization,coherence,reorder_sentences,7\n",
     r"line 2: human_score '7' is outside \[0, 1\]"),
    ("task,criterion,template,human_score\nsummarization,coherence,reorder_sentences,high\n",
     "is not a number"),
    ("task,criterion,template,human_score\nsummarization,coherence,shuffle,0.4\n",
     "line 2: no template summarization/coherence/shuffle"),
    ("task,criterion,template,human_score\nsummarization,coherence,reorder_sentences,0.4\n"
     "summarization,coherence,reorder_sentences,0.5\n", "line 3: .* is given twice"),
])
def test_bad_human_score_tables_are_refused(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "h.csv"
    path.write_text(content)
    with pytest.raises(ValueError, match=message):
        load_human_scores(path)


def test_a_partial_table_names_the_missing_templates(tmp_path: Path) -> None:
    path = tmp_path / "mine.csv"
    path.write_text("task,criterion,template,human_score\n"
                    "summarization,coherence,reorder_sentences,0.35\n")
    table = load_human_scores(path)
    assert table.for_templates(templates_for("summarization", "coherence")) == {
        ("summarization", "coherence", "reorder_sentences"): 0.35}
    with pytest.raises(ValueError, match="mine.csv' has no row for 4 template"):
        table.for_templates(templates_for("summarization", "invariance,coherence"))
    with pytest.raises(ValueError, match="not found"):
        load_human_scores(tmp_path / "nope.csv")


# -- end to end -----------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def cnndm_slice(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("dev") / "cnndm12.jsonl"
    with open(SHARED_DATA / "cnndm_summeval100_summarization.jsonl", encoding="utf-8") as f:
        path.write_text("".join(islice(f, 12)))
    return path


ARGS = ["--protocol", "deviation", "--task", "summarization", "--metrics", "rouge,chrf",
        "--seeds", "1", "--protocol-option", "criteria=coherence,invariance,control"]


def test_cli_end_to_end_matches_a_recomputation(cnndm_slice: Path, tmp_path: Path) -> None:
    out = tmp_path / "report"
    result = runner.invoke(app, ["run", "--data", str(cnndm_slice), *ARGS, "--out", str(out)])
    assert result.exit_code == 0, result.output
    results = json.loads((out / "results.json").read_text())
    assert results["protocol"] == "deviation" and results["dataset"]["rows"] == 12
    keys = [f"{t['criterion']}/{t['template']}" for t in results["templates"]]
    assert keys == ["coherence/reorder_sentences", "invariance/synonyms",
                    "invariance/contractions", "invariance/expansions",
                    "invariance/numerals_to_words", "control/alternative_reference"]
    assert (out / "deviation_heatmap.png").read_bytes()[:4] == b"\x89PNG"
    assert "| coherence/reorder_sentences |" in (out / "report.md").read_text()
    # recompute reorder_sentences for ROUGE-L by hand: s = (0.5 - 1) - mean(f(p') - f(p))
    rows = [json.loads(line) for line in cnndm_slice.read_text().splitlines()]
    golds, refs = [r["gold"] for r in rows], [r["references"] for r in rows]
    cols = get_perturbation("sentence_switching", task="summarization").apply_rows(
        golds, [r["id"] for r in rows], 1, seed=1)
    applied = [i for i, a in enumerate(cols["applied"]) if a]
    scorer = get_scorer("rouge", rouge_types=["rougeL"])
    before = score_rows(scorer, [golds[i] for i in applied], [refs[i] for i in applied])["rougeL"]
    after = score_rows(scorer, [cols["perturbed"][i] for i in applied],
                       [refs[i] for i in applied])["rougeL"]
    expected = -0.5 - sum(b - a for a, b in zip(before, after, strict=True)) / len(applied)
    entry = results["metrics"]["rouge.rougeL"]["templates"]["coherence/reorder_sentences"]
    assert entry["n"] == len(applied) == results["templates"][0]["applied"]
    assert entry["deviation"] == pytest.approx(expected, abs=1e-12)
    # the control: another reference, scored (with the gold) against the remaining ones
    control = results["templates"][-1]
    assert control["applied"] == 12
    assert control["examples"][0]["perturbed"] == rows[0]["references"][0]
    # the same command again gives the same bytes
    again = tmp_path / "again"
    assert runner.invoke(app, ["run", "--data", str(cnndm_slice), *ARGS, "--out",
                               str(again)]).exit_code == 0
    for name in ("results.json", "report.md", "deviation_heatmap.png"):
        assert (again / name).read_bytes() == (out / name).read_bytes(), name


@pytest.mark.parametrize("extra, message", [
    (["--protocol-option", "human_scores=/nonexistent.csv"], "not found"),
    (["--protocol-option", "colour=red"], "'colour' is not an option of the deviation"),
    (["--protocol-option", "templates=shuffle"], "template 'shuffle' is not a template"),
    (["--task", "open_ended"], "unknown checklist task 'open_ended'"),
    (["--data", "second.jsonl"], "deviation protocol judges one dataset at a time; got 2"),
])
def test_cli_errors(cnndm_slice: Path, tmp_path: Path, extra: list[str], message: str) -> None:
    result = runner.invoke(app, ["run", "--data", str(cnndm_slice), *ARGS, *extra,
                                 "--out", str(tmp_path / "o")])
    assert result.exit_code != 0
    assert message in " ".join(result.output.split())


def _run(task: str, data: dict, templates: str) -> dict:
    request = ProtocolRequest(data=data, metrics="rouge", task=task, seeds=[1], progress=False,
                              options={"templates": templates})
    return get_protocol("deviation").run(request).to_dict()


def test_not_applied_and_skipped_templates_say_why() -> None:
    questions = {"gold": ["When was he born?", "He was born in 1990."],
                 "references": [["What year was he born?"], ["His birth year is 1990."]]}
    results = _run("qg", questions, "change_question_word,question_to_assertion")
    by_name = {t["template"]: t for t in results["templates"]}
    assert by_name["question_to_assertion"]["reason"].startswith("needs mlm")
    assert by_name["change_question_word"]["applied"] == 1  # the statement has no wh-word
    assert by_name["change_question_word"]["examples"][0]["gold"] == "When was he born?"
    only = results["metrics"]["rouge.rougeL"]["templates"]
    assert set(only) == {"answerability/change_question_word"} and only[
        "answerability/change_question_word"]["n"] == 1
    statements = {"gold": ["He was born in 1990."], "references": [["His birth year is 1990."]]}
    none = _run("question_generation", statements, "drop_question_word")["templates"][0]
    assert (none["status"], none["reason"]) == ("skipped", "no row could be perturbed")
    dialogue = _run("dialogue", statements, "repeat_previous_utterance")["templates"][0]
    assert dialogue["reason"].startswith("needs the source text")


def test_evaluate_module_dispatches_to_deviation(cnndm_slice: Path) -> None:
    import evaluate

    from blindspot.evaluate_modules import module_path

    rows = [json.loads(line) for line in cnndm_slice.read_text().splitlines()][:6]
    module = evaluate.load(str(module_path("blindspot")))
    out = module.compute(predictions=[r["gold"] for r in rows],
                         references=[r["references"] for r in rows], metric="chrf",
                         protocol="deviation", seeds=[1], progress=False,
                         protocol_options={"criteria": "invariance"})
    assert out["metric"] == "chrf.chrf" and out["results"]["protocol"] == "deviation"
    assert set(out["deviations"]) <= {"invariance/synonyms", "invariance/contractions",
                                      "invariance/expansions", "invariance/numerals_to_words"}
    assert "invariance/synonyms" in out["deviations"]
    assert set(out["verdicts"].values()) <= {"kept", "dropped"}


def test_dialogue_templates_read_the_context() -> None:
    data = {"gold": ["She is a very good student.", "Sure, see you at noon."],
            "references": [["Your daughter is doing great."], ["Okay, noon works for me."]],
            "source": ["Bot: I enjoy having your daughter in my class.\n"
                       "User: I'm glad to hear that.",
                       "User: Lunch tomorrow?"]}
    request = ProtocolRequest(data=data, metrics="chrf", task="dialogue", seeds=[1],
                              progress=False, options={
                                  "templates": "negate_previous_utterance,can_you_repeat"})
    results = get_protocol("deviation").run(request).to_dict()
    negate, repeat = results["templates"]
    assert (negate["applied"], repeat["applied"]) == (1, 2)  # one context has no earlier turn
    assert negate["examples"][0]["perturbed"] == "I don't enjoy having your daughter in my class."
    scores = results["metrics"]["chrf.chrf"]["templates"]
    entry = scores["listening/can_you_repeat"]
    assert entry["human_delta"] == pytest.approx(-0.9)
    assert entry["deviation"] == pytest.approx(-0.9 - entry["metric_delta"], abs=1e-12)
    assert entry["metric_delta"] < 0 and entry["verdict"] == "detected"


def test_control_with_one_reference_swaps_the_roles() -> None:
    data = {"gold": ["The cat sat on the mat.", "Same text."],
            "references": ["A cat was sitting on the mat.", "Same text."]}
    request = ProtocolRequest(data=data, metrics="chrf", task="mt", seeds=[1], progress=False,
                              options={"criteria": "control"})
    results = get_protocol("deviation").run(request).to_dict()
    control = results["templates"][0]
    assert control["applied"] == 1  # the second row has no reference other than its gold
    scorer = get_scorer("chrf")
    gold = score_rows(scorer, [data["gold"][0]], [[data["references"][0]]])["chrf"][0]
    swapped = score_rows(scorer, [data["references"][0]], [[data["gold"][0]]])["chrf"][0]
    entry = results["metrics"]["chrf.chrf"]["templates"]["control/alternative_reference"]
    assert entry["metric_delta"] == pytest.approx((swapped - gold) / 100, abs=1e-12)
    assert entry["deviation"] == pytest.approx(-(swapped - gold) / 100, abs=1e-12)
