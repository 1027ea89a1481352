"""Verdict rules, explanations and within-noise fails (issue 18), on hand-computed score tables.

Each case is small enough to check by hand: the points' means and population stds over seeds, the
change of the deciding comparison in percent of gold, and (with per-row scores) whether the paired
bootstrap interval of that comparison straddles 0.
"""

from __future__ import annotations

import json
from pathlib import Path

import evaluate
import numpy as np
import pytest

from blindspot.demo import demo_path
from blindspot.judging import RULES, get_rule, judge_curve
from blindspot.perturbations.perturbation import REGISTRY
from blindspot.protocols.rank import run_blindspot
from blindspot.report.markdown import render_markdown
from blindspot.runner.curves import Cell, Gold, JudgeSettings, judge_test

SETTINGS = JudgeSettings(tolerance=1e-5, noise_cap=0.6, worst_examples=2, bootstrap_seed=0)


# -- declarations -----------------------------------------------------------------------------------

def test_every_test_declares_a_registered_rule() -> None:
    assert {cls.verdict_rule for cls in REGISTRY.values()} <= set(RULES)
    with pytest.raises(ValueError, match="valid verdict rules: below_gold, monotone_decrease, "
                                         "not_above_gold, per_position_drop"):
        get_rule("strictly_better")


@pytest.mark.parametrize("test, rule", [
    ("copy_source", "below_gold"), ("injection", "below_gold"), ("repetition", "below_gold"),
    ("frequent_ngram", "below_gold"), ("positioned_error", "per_position_drop"),
    ("truncation", "monotone_decrease"), ("word_swap", "monotone_decrease")])
def test_tests_declare_the_papers_rule(test: str, rule: str) -> None:
    assert REGISTRY[test].verdict_rule == rule
    assert REGISTRY[test].info()["verdict_rule"] == rule


# -- monotone_decrease --------------------------------------------------------------------------------

def test_monotone_pass_names_the_smallest_drop() -> None:
    out = judge_curve([("0.1", 0.1, [0.8]), ("0.2", 0.2, [0.788])], gold=1.0)
    assert out["passed"] is True and out["within_noise"] is None
    assert out["explanation"] == "drops at every step; smallest drop 1.2% of gold from level 0.1 " \
                                 "to level 0.2"
    assert out["deciding"]["from"] == "0.1" and out["deciding"]["to"] == "0.2"
    assert out["deciding"]["relative_change"] == pytest.approx(-1.2)
    assert out["headline"] == 2  # the noisiest judged point, as before


def test_monotone_fail_names_the_rise_and_is_significant_without_noise() -> None:
    out = judge_curve([("0.1", 0.1, [0.8]), ("0.2", 0.2, [0.7]), ("0.3", 0.3, [0.704])],
                      gold=1.0)
    assert out["passed"] is False
    assert out["explanation"] == "rises 0.4% of gold from level 0.2 to level 0.3"
    assert out["within_noise"] is False  # one seed, no rows: nothing says it is noise


def test_a_rise_inside_the_seeds_spread_is_within_noise() -> None:
    # level 0.2: seeds 0.69, 0.71 (mean 0.70, std 0.01); level 0.3: 0.704 twice (std 0)
    out = judge_curve([("0.1", 0.1, [0.8, 0.8]), ("0.2", 0.2, [0.69, 0.71]),
                       ("0.3", 0.3, [0.704, 0.704])], gold=[1.0, 1.0])
    assert out["passed"] is False
    assert out["deciding"]["seeds_spread"] == pytest.approx(0.01)
    assert out["within_noise"] is True  # +0.004 < 0.01: more seeds could reorder the two


def test_within_noise_needs_every_failing_step_to_be_noise() -> None:
    # gold -> 0.1 rises 0.05 beyond any spread; 0.1 -> 0.2 rises 0.004 inside a 0.01 spread
    out = judge_curve([("0.1", 0.1, [1.05, 1.05]), ("0.2", 0.2, [1.044, 1.064])],
                      gold=[1.0, 1.0])
    assert out["passed"] is False
    assert out["explanation"] == ("rises 5.0% of gold from gold to level 0.1; 1 other step does "
                                  "not drop either")
    assert out["within_noise"] is False


def test_a_zero_gold_gives_the_absolute_change() -> None:
    out = judge_curve([("1", 0.1, [0.0123])], gold=0.0)
    assert out["explanation"] == "rises 0.0123 (absolute: the gold score is 0) from gold to " \
                                 "level 1"
    assert out["deciding"]["relative_change"] is None
    assert out["deciding"]["change"] == pytest.approx(0.0123)


# -- the paired bootstrap over rows ---------------------------------------------------------------

def _rows(gold: list[float], level: list[float]) -> dict:
    return {"gold": np.array(gold), "a": np.array(level)}


def test_rows_that_straddle_zero_make_a_fail_within_noise() -> None:
    # the mean does not move (fail), but the rows go both ways: the interval straddles 0
    out = judge_curve([("a", 0.1, [1.0])], gold=1.0,
                      rows=_rows([1.0] * 8, [1.1, 0.9] * 4))
    assert out["passed"] is False
    assert out["deciding"]["ci_low"] < 0 < out["deciding"]["ci_high"]
    assert out["within_noise"] is True


def test_identical_rows_are_not_noise() -> None:
    # a metric blind to the change scores every row exactly as gold: [0, 0] is no straddle
    out = judge_curve([("a", 0.1, [1.0])], gold=1.0, rows=_rows([1.0] * 8, [1.0] * 8))
    assert (out["deciding"]["ci_low"], out["deciding"]["ci_high"]) == (0.0, 0.0)
    assert out["passed"] is False and out["within_noise"] is False
    assert out["explanation"] == "stays level (within the tolerance) from gold to level a"


def test_float_noise_around_zero_is_not_noise() -> None:
    # ROUGE ignores punctuation: the rows differ from gold by rounding error only
    rows = _rows([0.2] * 4, [0.2 + 1e-12, 0.2 - 1e-12] * 2)
    out = judge_curve([("a", 0.1, [0.2])], gold=0.2, rows=rows)
    assert out["deciding"]["ci_low"] < 0 < out["deciding"]["ci_high"]  # around 0, by 1e-12
    assert out["passed"] is False and out["within_noise"] is False
    assert out["explanation"] == "stays level (within the tolerance) from gold to level a"


def test_a_rise_on_every_row_is_significant() -> None:
    out = judge_curve([("a", 0.1, [1.01])], gold=1.0, rows=_rows([1.0] * 8, [1.01] * 8))
    assert out["deciding"]["ci_low"] == pytest.approx(0.01)
    assert out["within_noise"] is False


def test_the_bootstrap_is_seeded() -> None:
    rng = np.random.default_rng(3)
    rows = _rows(list(rng.normal(size=50)), list(rng.normal(size=50)))
    args = ([("a", 0.1, [float(rows["a"].mean())])], float(rows["gold"].mean()))
    first = judge_curve(*args, rows=rows, bootstrap_seed=7)["deciding"]
    assert judge_curve(*args, rows=rows, bootstrap_seed=7)["deciding"] == first
    assert judge_curve(*args, rows=rows, bootstrap_seed=8)["deciding"] != first


# -- below_gold ------------------------------------------------------------------------------------

def test_below_gold_fails_when_the_copy_scores_above_gold_whatever_its_noise_ratio() -> None:
    out = judge_curve([("-", 0.95, [1.031])], gold=1.0, rule="below_gold", name="copy_source")
    assert out["passed"] is False and out["excluded"] == []
    assert out["explanation"] == "copy_source scores 3.1% above gold"
    assert out["within_noise"] is False
    assert judge_curve([("-", 0.95, [1.0])], gold=1.0, rule="below_gold",
                       name="copy_source")["explanation"] == ("copy_source scores the same as gold "
                                                              "(within the tolerance)")


def test_below_gold_pass_names_the_closest_level() -> None:
    out = judge_curve([("10", 0.2, [0.95]), ("20", 0.7, [0.9]), ("30", 0.9, [0.8])], gold=1.0,
                      rule="below_gold")
    assert out["passed"] is True
    assert out["explanation"] == ("every level scores below gold; the closest, level 10, scores "
                                  "5.0% below gold")
    # the monotone rule would have judged level 10 alone (the others are over the cap)
    assert judge_curve([("10", 0.2, [0.95]), ("20", 0.7, [0.9])], gold=1.0)["excluded"] == ["20"]


def test_below_gold_fail_names_the_highest_level_and_counts_the_others() -> None:
    # GPT-PPL on repetition (paper Table 13, WikiText): every Rep-k scores above gold
    out = judge_curve([("10", 0.15, [-15.48]), ("20", 0.3, [-10.70]), ("30", 0.45, [-8.080])],
                      gold=-21.81, rule="below_gold")
    assert out["passed"] is False
    assert out["explanation"] == "level 30 scores 63.0% above gold; 2 other levels fail too"
    assert out["headline"] == 3 and out["points"][3]["relative_change"] == pytest.approx(62.95,
                                                                                          abs=0.01)


# -- per_position_drop -------------------------------------------------------------------------------

def _two_seeds(mean: float, std: float) -> list[float]:
    """Two seed scores with this mean and population std."""
    return [mean - std, mean + std]


def test_per_position_drop_fails_mauve_gpt2_at_the_start() -> None:
    # paper Table 8, MAUVE-GPT2: gold 0.961 (0.007); random-start 0.949 (0.016), -1.3%, inside
    # the spread; random-end 0.005 (0.039), -99.4%
    gold = _two_seeds(0.961, 0.007)
    points = [("start-random", 0.04, _two_seeds(0.949, 0.016)),
              ("end-random", 0.04, _two_seeds(0.005, 0.039))]
    out = judge_curve(points, gold=gold, rule="per_position_drop")
    assert out["passed"] is False
    assert out["explanation"] == ("level start-random scores only 1.2% below gold, a drop "
                                  "within the noise")
    assert out["within_noise"] is True


def test_per_position_drop_passes_mauve_roberta() -> None:
    # paper Table 8, MAUVE-RoBERTa: every position costs 37.8 % or more, far beyond the stds
    gold = _two_seeds(0.969, 0.007)
    points = [("start-random", 0.04, _two_seeds(0.037, 0.007)),
              ("middle-shuffle", 0.04, _two_seeds(0.603, 0.005)),
              ("end-shuffle", 0.04, _two_seeds(0.242, 0.024))]
    out = judge_curve(points, gold=gold, rule="per_position_drop")
    assert out["passed"] is True
    assert out["explanation"] == ("every position drops significantly; the closest, level "
                                  "middle-shuffle, scores 37.8% below gold")


# -- the results.json entry -------------------------------------------------------------------------

def _cell(level: str, seed: int, scores: list[float], ratio: float = 0.9) -> Cell:
    return Cell("copy_source", level, seed, [ratio] * len(scores), [True] * len(scores),
                ["x"] * len(scores), scores=scores)


def test_judge_test_entry_carries_rule_explanation_and_noise() -> None:
    gold = Gold([1, 2, 3, 4], ["a", "b", "c", "d"], scores=[1.0, 2.0, 3.0, 4.0])
    entry = judge_test("copy_source", "targeted", [_cell("-", 1, [1.5, 2.0, 3.0, 4.0])], gold,
                       SETTINGS, rule="below_gold").to_dict()
    assert entry["status"] == "fail" and entry["rule"] == "below_gold"
    assert entry["explanation"] == "copy_source scores 5.0% above gold"
    # the rows never drop (+0.5, 0, 0, 0): the interval starts at 0, no straddle
    assert entry["deciding"]["ci_low"] == 0.0 and entry["within_noise"] is False
    assert entry["relative_change"] == pytest.approx(5.0)
    assert entry["absolute_change"] == pytest.approx(0.125)
    assert [p["judged"] for p in entry["points"]] == [True, True]  # ratio 0.9, over the cap


def test_judge_test_averages_seeds_per_row_for_the_bootstrap() -> None:
    # seeds disagree row by row; their per-row means equal gold on every row: CI [0, 0]
    gold = Gold([1, 2], ["a", "b"], scores=[1.0, 1.0])
    cells = [_cell("0.1", 1, [1.1, 0.9], 0.1), _cell("0.1", 2, [0.9, 1.1], 0.1)]
    entry = judge_test("copy_source", "targeted", cells, gold, SETTINGS).to_dict()
    assert entry["rule"] == "monotone_decrease" and entry["status"] == "fail"
    assert (entry["deciding"]["ci_low"], entry["deciding"]["ci_high"]) == (0.0, 0.0)
    assert entry["deciding"]["seeds_spread"] == 0.0
    assert entry["within_noise"] is False


# -- the demo, end to end ------------------------------------------------------------------------

@pytest.fixture(scope="module")
def demo_targeted(tmp_path_factory: pytest.TempPathFactory) -> dict:
    out = tmp_path_factory.mktemp("targeted")
    return run_blindspot("demo", "rouge,chrf", task="summarization", tests="targeted",
                         out=out, progress=False)


def test_demo_targeted_tests_all_get_a_verdict(demo_targeted: dict) -> None:
    data = demo_targeted["datasets"]["demo-summarization"]
    for metric, entry in data["metrics"].items():
        assert list(entry["tests"]) == ["copy_source", "injection", "repetition"]
        for test, result in entry["tests"].items():
            assert result["status"] in ("pass", "fail"), (metric, test, result["reason"])
            assert result["rule"] == "below_gold"
            assert result["explanation"]
            assert all(p["judged"] for p in result["points"])
    copy = data["metrics"]["rouge.rougeL"]["tests"]["copy_source"]
    assert copy["points"][1]["noise_ratio"] >= 0.6  # over the cap, yet judged
    assert copy["explanation"] == f"copy_source scores {-copy['relative_change']:.1f}% below gold"


def test_demo_targeted_report_has_no_na(demo_targeted: dict) -> None:
    text = render_markdown(demo_targeted)
    rows = [line for line in text.splitlines() if line.startswith("| copy")
            or line.startswith("| injection") or line.startswith("| repetition")]
    assert len(rows) == 3 and not any("n/a" in row for row in rows)


@pytest.mark.slow
def test_gpt_ppl_fails_repetition_on_wikitext(tmp_path) -> None:
    """The paper's App. E on SmolLM2: appending copies of the last 4-gram raises GPT-PPL's score
    (negated perplexity), so the metric fails the test at every Rep-k. Six WikiText demo rows
    keep it to a few minutes on CPU."""
    lines = demo_path("open_ended").read_text(encoding="utf-8").splitlines()[:6]
    rows = tmp_path / "wiki.jsonl"
    rows.write_text("\n".join(lines) + "\n", encoding="utf-8")
    results = run_blindspot(str(rows), "gpt_ppl@smollm2", task="open_ended", tests="repetition",
                            progress=False)
    result = results["datasets"]["wiki.jsonl"]["metrics"]["gpt_ppl.gpt_ppl@smollm2"]["tests"][
        "repetition"]
    assert result["status"] == "fail", result["explanation"]
    assert result["rule"] == "below_gold" and result["within_noise"] is False
    means = [p["score_mean"] for p in result["points"]]
    assert all(m > means[0] for m in means[1:])  # every Rep-k above gold
    assert result["explanation"].startswith("level 30 scores") and "above gold" in \
        result["explanation"]
    assert json.loads(json.dumps(result)) == result


def test_blindspot_accuracy_judges_a_targeted_test_by_its_rule(monkeypatch) -> None:
    """The evaluate module and `blindspot run` give a catalogue test the same rule."""
    monkeypatch.chdir(Path(__file__).resolve().parents[1])
    module = evaluate.load("metrics/blindspot_accuracy")
    # rep-10 drops, rep-20 (noise ratio 0.7, over the cap) scores above gold
    table = dict(predictions=[0.8, 0.8, 1.2, 1.2], references=[1.0] * 4, levels=[10, 10, 20, 20],
                 noise_ratios=[0.3, 0.3, 0.7, 0.7], seeds=[0] * 4)
    out = module.compute(tests=["repetition"] * 4, **table)["repetition"]
    assert out["rule"] == "below_gold" and out["passed"] is False
    assert out["explanation"] == "level 20 scores 20.0% above gold"
    other = module.compute(tests=["my_test"] * 4, **table)["my_test"]
    assert other["rule"] == "monotone_decrease" and other["passed"] is True  # 20 over the cap
