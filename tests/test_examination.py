"""The examination paper's suite (word swap, word drop, phrase repetition, root negation, POS drop)
and its expectations as checks: hand-checked outputs on real sentences, levels, determinism,
noise ratios on WMT21 rows, the checks on hand-made curves, and a run end to end."""

from __future__ import annotations

import json
import math
from itertools import islice, pairwise
from pathlib import Path

import pytest
from conftest import SHARED_DATA
from typer.testing import CliRunner

from blindspot.cli import app
from blindspot.expectations import (
    applied_drops,
    check_expectations,
    decreasing_with_intensity,
    det_drop_hurts_least,
    negation_drops_sharply,
)
from blindspot.noise import noise_ratio
from blindspot.perturbations import canonical_name, get_perturbation, suite_tests
from blindspot.perturbations.phrase_repetition import phrase_length, repeat_final_phrase
from blindspot.perturbations.token_drop import drop_words
from blindspot.perturbations.word_swap import pair_count, swap_candidates
from blindspot.runner.curves import Cell
from blindspot.seeding import row_rng

SUITE = ["phrase_repetition", "pos_drop", "root_negation", "word_drop", "word_swap"]
#: the paper's own example sentence (its Table 2)
PAPER = "He's quick, he's a very complete player and in great form."
WMT = SHARED_DATA / "wmt21_de_en_translation.jsonl"


def wmt_golds(n: int) -> list[dict]:
    with WMT.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in islice(handle, n)]


def apply(name: str, text: str, level, seed: int = 1):
    return get_perturbation(name).apply(text, level, seed=seed, row_id="r")


# -- the catalogue ---------------------------------------------------------------------------

def test_examination_is_a_suite_of_five_tests_at_the_paper_levels() -> None:
    assert suite_tests("examination", "translation") == SUITE
    assert not set(SUITE) & set(suite_tests("all"))  # the core suite does not grow
    for name in ("word_swap", "word_drop", "phrase_repetition"):
        info = get_perturbation(name).info()
        assert info["levels"]["summarization"] == ["0.25", "0.5", "0.75", "1"]
        assert info["category"] == "examination" and "seed paper 4" in info["paper"]
    assert get_perturbation("pos_drop").info()["levels"]["translation"] == [
        "DET", "NOUN", "VERB", "ADJ"]
    assert get_perturbation("root_negation").info()["levels"]["open_ended"] == ["-"]


@pytest.mark.parametrize("alias, name", [("Word Swap", "word_swap"), ("word-drop", "word_drop"),
                                         ("POS-Drop", "pos_drop"),
                                         ("examination repetition", "phrase_repetition"),
                                         ("examination negation", "root_negation")])
def test_paper_names_are_aliases(alias: str, name: str) -> None:
    assert canonical_name(alias) == name


def test_bad_levels_name_the_valid_ones() -> None:
    with pytest.raises(ValueError, match=r"pos_drop.*'PROPN'.*DET.*NOUN.*VERB.*ADJ"):
        apply("pos_drop", PAPER, "PROPN")
    with pytest.raises(ValueError, match=r"word_swap.*1.5.*\(0.0, 1.0\]"):
        apply("word_swap", PAPER, 1.5)


# -- word swap -------------------------------------------------------------------------------

def test_swap_candidates_are_distinct_words_with_letters() -> None:
    words = ["He's", "quick,", "he's", "-", "a", "A", "form."]
    assert swap_candidates(words) == [0, 1, 4, 6]  # "he's"/"A" repeat, "-" has no letter


@pytest.mark.parametrize("m, p, k", [(10, 0.25, 2), (10, 0.5, 6), (10, 0.75, 8), (10, 1.0, 10),
                                     (5, 1.0, 4), (4, 0.75, 4), (3, 0.25, 0), (3, 0.5, 2),
                                     (100, 0.29, 30)])  # floor(100 * 0.29) is 29, not 28
def test_pair_count_rounds_up_to_even_within_the_candidates(m: int, p: float, k: int) -> None:
    assert pair_count(m, p) == k


@pytest.mark.parametrize("level, moved", [(0.25, 2), (0.5, 6), (0.75, 8), (1.0, 10)])
def test_word_swap_moves_floor_p_m_words_in_pairs(level: float, moved: int) -> None:
    out = apply("word_swap", PAPER, level)
    gold, new = PAPER.split(), out.perturbed.split()
    assert sorted(new) == sorted(gold)
    changed = [i for i, (a, b) in enumerate(zip(gold, new, strict=True)) if a != b]
    assert len(changed) == moved
    assert 2 not in changed  # the second "he's" is no candidate (a repeat of "He's")
    if level == 0.25:  # one swap: two substitutions, halved, over 11 words
        assert out.noise_ratio == pytest.approx(1 / 11)
        (i, j) = changed
        assert (new[i], new[j]) == (gold[j], gold[i])


def test_word_swap_leaves_short_rows_alone_and_is_deterministic() -> None:
    assert not apply("word_swap", "Hi there", 1.0).applied  # fewer than 3 candidates
    assert not apply("word_swap", "one two three", 0.25).applied  # floor(.75) = 0 words
    runs = {apply("word_swap", PAPER, 1.0, seed).perturbed for seed in (1, 1, 1)}
    assert len(runs) == 1
    assert len({apply("word_swap", PAPER, 1.0, seed).perturbed for seed in range(1, 6)}) > 1


# -- word drop -------------------------------------------------------------------------------

def test_word_drop_is_token_drop_at_the_paper_intensities() -> None:
    for level, left in ((0.25, 8), (0.5, 5), (0.75, 2), (1.0, 1)):  # ceil(11p), one kept
        out = apply("word_drop", PAPER, level, seed=3)
        assert len(out.perturbed.split()) == left
        assert out.noise_ratio == pytest.approx((11 - left) / 11)
        # token_drop's function on the row's own stream
        assert out.perturbed == drop_words(PAPER, level, row_rng(3, "word_drop", f"{level:g}",
                                                                 PAPER))
        words = iter(PAPER.split())
        assert all(w in words for w in out.perturbed.split())  # an in-order subsequence


# -- phrase repetition -------------------------------------------------------------------------

def test_phrase_repetition_on_the_paper_example() -> None:
    phrase = " and in great form"
    body = "He's quick, he's a very complete player and in great form"
    for level, copies in ((0.25, 2), (0.5, 5), (0.75, 8), (1.0, 11)):  # floor(11p)
        out = apply("phrase_repetition", PAPER, level)
        assert out.perturbed == body + phrase * copies + "."
        assert out.noise_ratio == pytest.approx(4 * copies / 11)


def test_phrase_stops_at_punctuation_and_without_final_punctuation() -> None:
    assert phrase_length("She said: yes, we go".split()) == 2
    assert phrase_length(["go"]) == 1
    assert repeat_final_phrase("She said: yes, we go.", 0.5) == "She said: yes, we go we go we go."
    assert (repeat_final_phrase("A female car driver overlooks a biker", 0.25)
            == "A female car driver overlooks a biker driver overlooks a biker")
    assert repeat_final_phrase("Stop!", 0.5) is None  # floor(0.5) copies
    assert apply("phrase_repetition", "Stop!", 1.0).perturbed == "Stop Stop!"


# -- root negation ---------------------------------------------------------------------------

def test_root_negation_reproduces_the_paper_example() -> None:
    out = apply("root_negation", PAPER, "-")
    assert out.perturbed == "He's quick, he's not a very complete player and in great form."
    assert out.noise_ratio == pytest.approx(1 / 11)
    two = apply("root_negation", "She went to the store. He is happy.", "-")
    assert two.perturbed == "She didn't go to the store. He is not happy."


def test_root_negation_has_no_rule_fallback() -> None:
    negated = "She did not go."
    assert not apply("root_negation", negated, "-").applied  # CheckList refuses; kept
    assert apply("negation", negated, 1.0).perturbed == "She did go."  # the fallback does not


# -- POS drop --------------------------------------------------------------------------------

@pytest.mark.parametrize("tag, expected", [("DET", "Cat sat on mat."),
                                           ("NOUN", "The sat on the."),
                                           ("VERB", "The cat on the mat.")])
def test_pos_drop_by_hand(tag: str, expected: str) -> None:
    assert apply("pos_drop", "The cat sat on the mat.", tag).perturbed == expected


def test_pos_drop_adj_on_the_paper_example_and_rows_without_the_tag() -> None:
    out = apply("pos_drop", PAPER, "ADJ")  # quick, complete, great
    assert out.perturbed == "He's, he's a very player and in form."
    # whitespace words: "He's" -> "He's," (the comma stays), three words gone: 4 edits
    assert out.noise_ratio == pytest.approx(4 / 11)
    assert not apply("pos_drop", "The cat sat on the mat.", "ADJ").applied


# -- real data: determinism and noise ratios ---------------------------------------------------

def test_real_rows_are_deterministic_and_order_free() -> None:
    rows = wmt_golds(20)
    texts, ids = [r["gold"] for r in rows], [r["id"] for r in rows]
    for name, level in (("word_swap", 0.5), ("word_drop", 0.75), ("pos_drop", "NOUN"),
                        ("root_negation", "-"), ("phrase_repetition", 0.25)):
        test = get_perturbation(name)
        forward = test.apply_rows(texts, ids, level, seed=2)
        backward = test.apply_rows(texts[::-1], ids[::-1], level, seed=2)
        assert forward["perturbed"] == backward["perturbed"][::-1]
        assert forward == test.apply_rows(texts, ids, level, seed=2)
        if name in ("word_swap", "word_drop"):  # random: another seed, other words
            assert forward["perturbed"] != test.apply_rows(texts, ids, level, seed=3)["perturbed"]
        for gold, new, applied, ratio in zip(texts, forward["perturbed"], forward["applied"],
                                             forward["noise_ratio"], strict=True):
            assert applied == (new != gold)
            assert ratio == pytest.approx(noise_ratio(gold, new, swap=name == "word_swap")
                                          if applied else 0.0)


def test_real_rows_noise_ratios_follow_the_definitions() -> None:
    rows = wmt_golds(30)
    texts, ids = [r["gold"] for r in rows], [r["id"] for r in rows]
    drop = get_perturbation("word_drop").apply_rows(texts, ids, 0.5, seed=1)
    for gold, ratio in zip(texts, drop["noise_ratio"], strict=True):
        n = len(gold.split())
        assert ratio == pytest.approx(min(math.ceil(n * 0.5), n - 1) / n)
    rep = get_perturbation("phrase_repetition").apply_rows(texts, ids, 1.0, seed=1)
    for gold, new in zip(texts, rep["perturbed"], strict=True):
        n = len(gold.split())
        assert len(new.split()) == n + n * phrase_length(gold.rstrip(" .!?").split())
    negated = get_perturbation("root_negation").apply_rows(texts, ids, "-", seed=1)
    assert sum(negated["applied"]) >= 20  # CheckList negates most WMT sentences
    det = get_perturbation("pos_drop").apply_rows(texts, ids, "DET", seed=1)
    assert sum(det["applied"]) >= 25


# -- the expectations on hand-made curves ------------------------------------------------------

def curve(scores: dict[str, float | None], gold: float = 1.0, ratios: dict | None = None) -> dict:
    """A test's results entry with points in noise-ratio order (here: reversed intensity)."""
    points = [{"level": "gold", "score_mean": gold, "noise_ratio": 0.0}]
    points += [{"level": lv, "score_mean": s, "noise_ratio": (ratios or {}).get(lv, 2.0)}
               for lv, s in sorted(scores.items(), reverse=True)]
    return {"status": "undecided", "points": points}


def test_decreasing_with_intensity_orders_by_level_and_ignores_the_noise_cap() -> None:
    good = decreasing_with_intensity("word_swap", curve({"0.25": .8, "0.5": .6, "0.75": .4,
                                                         "1": .2}))
    assert good["passed"] is True and good["reason"] is None
    assert good["values"] == {"gold": 1.0, "0.25": .8, "0.5": .6, "0.75": .4, "1": .2}
    flat = decreasing_with_intensity("word_drop", curve({"0.25": .8, "0.5": .6, "0.75": .4,
                                                         "1": .4 - 1e-6}))
    assert flat["passed"] is False  # the last step is within the tolerance
    up = decreasing_with_intensity("word_drop", curve({"0.25": 1.01, "0.5": .6}))
    assert up["passed"] is False  # above gold at the first step


def test_decreasing_with_intensity_undecided_cases() -> None:
    broken = decreasing_with_intensity("word_swap", {"status": "error", "error": "boom",
                                                     "points": []})
    assert broken["passed"] is None and "boom" in broken["reason"]
    nan = decreasing_with_intensity("word_swap", curve({"0.25": None, "0.5": .5}))
    assert nan["passed"] is None and "NaN" in nan["reason"]


def test_negation_drop_is_compared_with_a_quarter_of_the_words_dropped() -> None:
    assert negation_drops_sharply(0.2, 0.1)["passed"] is True
    assert negation_drops_sharply(0.1, 0.1)["passed"] is True
    assert negation_drops_sharply(0.05, 0.1)["passed"] is False
    assert negation_drops_sharply(0.0, -0.1)["passed"] is False  # no drop is never sharp
    assert negation_drops_sharply(None, 0.1)["passed"] is None
    missing = negation_drops_sharply(0.2, None)
    assert missing["passed"] is None and "word_drop" in missing["reason"]


def test_det_drop_must_hurt_less_than_each_content_tag() -> None:
    good = det_drop_hurts_least({"DET": .01, "NOUN": .2, "VERB": .1, "ADJ": .05})
    assert good["passed"] is True and good["values"]["ADJ_drop"] == .05
    bad = det_drop_hurts_least({"DET": .01, "NOUN": .2, "VERB": .1, "ADJ": .005})
    assert bad["passed"] is False and bad["reason"].endswith("ADJ")
    tie = det_drop_hurts_least({"DET": .1, "NOUN": .2, "VERB": .1, "ADJ": .3})
    assert tie["passed"] is False and "VERB" in tie["reason"]
    partial = det_drop_hurts_least({"DET": .01, "NOUN": .2, "VERB": .1, "ADJ": None})
    assert partial["passed"] is True and "NOUN, VERB only" in partial["reason"]
    assert det_drop_hurts_least({"DET": None, "NOUN": .2})["passed"] is None


def test_drops_count_only_the_rows_an_impairment_changed() -> None:
    gold = [1.0, 0.8, 0.6]
    cells = [Cell("pos_drop", "ADJ", 1, [.1, 0, 0], [True, False, False], ["a", "b", "c"],
                  scores=[0.5, 0.8, 0.6]),
             Cell("word_drop", "0.25", 1, [.3] * 3, [True] * 3, ["a", "b", "c"],
                  scores=[0.9, 0.6, 0.5]),
             Cell("word_drop", "0.25", 2, [.3] * 3, [True] * 3, ["a", "b", "c"],
                  scores=[0.7, 0.8, 0.6]),
             Cell("pos_drop", "DET", 1, [0] * 3, [False] * 3, ["a", "b", "c"], scores=gold),
             Cell("root_negation", "-", 1, [0] * 3, [True] * 3, ["a", "b", "c"], error="NaN")]
    drops = applied_drops(cells, gold, None)
    assert drops[("pos_drop", "ADJ")] == pytest.approx(0.5)  # not 0.5 / 3
    assert drops[("word_drop", "0.25")] == pytest.approx((.1 + .2 + .1 + .3 + 0 + 0) / 6)
    assert drops[("pos_drop", "DET")] is None and drops[("root_negation", "-")] is None
    corpus = Cell("pos_drop", "DET", 1, [0], [False], ["a"], corpus_score=0.7)
    assert applied_drops([corpus], None, 0.9)[("pos_drop", "DET")] == pytest.approx(0.2)


def test_check_expectations_picks_the_mildest_word_drop_level() -> None:
    tests = {"root_negation": {}, "word_drop": curve({"0.25": .8, "0.5": .6, "1": .1})}
    drops = {("root_negation", "-"): 0.15, ("word_drop", "1"): 0.9, ("word_drop", "0.5"): 0.4,
             ("word_drop", "0.25"): 0.2}
    checks = check_expectations(tests, drops)
    assert [c["expectation"] for c in checks] == ["decreasing_with_intensity",
                                                  "negation_drops_sharply"]
    assert checks[1]["values"]["yardstick"] == "word_drop @ 0.25"
    assert checks[1]["passed"] is False  # 0.15 < 0.2
    assert check_expectations({"truncation": {}}, {}) == []


# -- end to end ------------------------------------------------------------------------------

def test_cli_run_of_the_examination_suite_reports_the_expectations(tmp_path: Path) -> None:
    data = tmp_path / "wmt10.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in wmt_golds(10)), encoding="utf-8")
    out = tmp_path / "report"
    result = CliRunner().invoke(app, ["run", "--data", str(data), "--metrics", "rouge,chrf",
                                      "--task", "translation", "--tests", "examination",
                                      "--seeds", "1", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "Expectations of the examination paper" in result.output
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    (data_entry,) = results["datasets"].values()
    for metric in ("rouge.rougeL", "chrf.chrf"):
        entry = data_entry["metrics"][metric]
        checks = entry["expectations"]
        assert [(c["expectation"], c["tests"][0]) for c in checks] == [
            ("decreasing_with_intensity", "word_swap"), ("decreasing_with_intensity", "word_drop"),
            ("decreasing_with_intensity", "phrase_repetition"),
            ("negation_drops_sharply", "root_negation"), ("det_drop_hurts_least", "pos_drop")]
        assert all(c["passed"] in (True, False) for c in checks)
        swap = {p["level"]: p["score_mean"] for p in entry["tests"]["word_swap"]["points"]}
        assert checks[0]["values"] == swap  # the curve the check judged is the test's own
        scores = [swap[k] for k in ("gold", "0.25", "0.5", "0.75", "1.0")]
        assert checks[0]["passed"] == all(a > b + 1e-5 for a, b in pairwise(scores))
        pos = checks[4]["values"]
        assert checks[4]["passed"] == all(pos["DET_drop"] + 1e-5 < pos[f"{t}_drop"]
                                          for t in ("NOUN", "VERB", "ADJ"))
    report = (out / "report.md").read_text(encoding="utf-8")
    assert "### Expectations of the examination paper" in report
    assert "| det\\_drop\\_hurts\\_least | pos\\_drop |" in report or \
        "| det_drop_hurts_least | pos_drop |" in report


def test_evaluate_module_returns_the_expectations() -> None:
    import evaluate

    rows = wmt_golds(8)
    module = evaluate.load(str(Path(__file__).parents[1] / "metrics" / "blindspot"))
    out = module.compute(predictions=[r["gold"] for r in rows],
                         references=[r["reference"] for r in rows], metric="chrf",
                         task="translation", tests="pos_drop,root_negation,word_drop",
                         seeds=[1], progress=False)
    names = [c["expectation"] for c in out["expectations"]]
    assert names == ["decreasing_with_intensity", "negation_drops_sharply",
                     "det_drop_hurts_least"]
    assert out["expectations"] == next(iter(out["results"]["datasets"].values()))[
        "metrics"]["chrf.chrf"]["expectations"]


def test_paper_setup_scores_each_impaired_text_against_its_original(tmp_path: Path) -> None:
    """--references-column gold: one column in two roles (the paper's reference = the original)."""
    from blindspot.protocols.rank import run_blindspot

    data = tmp_path / "wmt6.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in wmt_golds(6)), encoding="utf-8")
    results = run_blindspot(str(data), "chrf", task="translation", tests="pos_drop", seeds=[1],
                            columns={"references": "gold"}, progress=False)
    (entry,) = results["datasets"].values()
    assert entry["columns"]["references"] == entry["columns"]["hypothesis"] == "gold"
    chrf = entry["metrics"]["chrf.chrf"]
    assert chrf["gold"]["score_mean"] == pytest.approx(100.0)  # each text against itself
    (check,) = chrf["expectations"]
    assert all(check["values"][f"{t}_drop"] > 0 for t in ("DET", "NOUN", "VERB"))


def test_report_rows_mark_undecided_and_unchecked_metrics() -> None:
    from blindspot.report import views
    from blindspot.report.markdown import expectations

    neg = negation_drops_sharply(0.2, None)
    data = {"metrics": {"a": {"expectations": [neg, det_drop_hurts_least({"DET": .1, "NOUN": .3,
                                                                           "VERB": .2,
                                                                           "ADJ": .2})]},
                        "b": {"expectations": []}}}
    rows = views.expectation_rows(data)
    assert [(r.test, r.category, [c.text for c in r.cells]) for r in rows] == [
        ("negation_drops_sharply", "root_negation, word_drop", ["n/a (missing)", "—"]),
        ("det_drop_hurts_least", "pos_drop", ["✓", "—"])]
    text = "\n".join(expectations(data))
    assert "### Expectations of the examination paper" in text
    assert "no score drop of word" in text  # the undecided line says why
    assert expectations({"metrics": {"b": {}}}) == []
