"""The judge category's tests, with hand-computed outputs, and their verdict rule."""

from __future__ import annotations

import pytest

from blindspot.judging import judge_curve
from blindspot.perturbations.perturbation import REGISTRY
from blindspot.perturbations.suites import suite_tests

pytestmark = pytest.mark.quick

GOLD = "A fire broke out on Tuesday. Polyform said it was cooperating."


def test_verbosity_restates_the_golds_own_sentences_after_content_free_lead_ins() -> None:
    test = REGISTRY.get("judge_verbosity")(task="summarization")
    out = test.apply_rows([GOLD, "!!"], [0, 1], 3, 1)
    assert out["perturbed"][0] == (
        GOLD + " In other words, a fire broke out on Tuesday. To put it another way, Polyform "
        "said it was cooperating. That is to say, a fire broke out on Tuesday.")
    assert out["applied"] == [True, False]  # a gold with no letter is left alone
    assert out["noise_ratio"][0] > 0
    assert test.verdict_rule == "not_above_gold" and test.category == "judge"
    assert suite_tests(["judge"], "summarization") == ["judge_verbosity"]


@pytest.mark.parametrize(("padded", "passed", "said"), [
    ([3.0, 3.1], True, "no level scores above gold"),
    ([3.0, 3.6], False, "scores 20.0% above gold"),
])
def test_not_above_gold_fails_a_judge_that_pays_for_length(padded: list[float], passed: bool,
                                                          said: str) -> None:
    points = [(level, 0.5 * level, [score]) for level, score in zip((1, 2), padded, strict=True)]
    verdict = judge_curve(points, 3.0, tolerance=0.2, rule="not_above_gold")
    assert verdict["passed"] is passed
    assert said in verdict["explanation"]


def test_a_panel_its_agreement_and_its_calibration_by_hand() -> None:
    from blindspot.judges.agreement import agreement, calibration, panel

    table = panel({"a": [1, 2], "b": [3, 2], "c": [2, 5]})
    assert (table.mean, table.median, table.min) == ([2.0, 3.0], [2.0, 2.0], [1.0, 2.0])
    agreed = agreement([1, 2, 3, 3], [1, 2, 2, 4], tolerance=1)
    assert (agreed.exact, agreed.within) == (0.5, 1.0)
    # p_o = 0.5, p_e = 0.25 * 0.25 + 0.25 * 0.5 = 0.1875
    assert agreed.kappa == pytest.approx((0.5 - 0.1875) / (1 - 0.1875))
    fit = calibration([1, 5, 3, 5], [1, 5, 2, 4], scale=(1, 5), threshold=4)
    # p = [0, 1, 0.5, 1] against passed = [0, 1, 0, 1]: only the third row is off, by 0.5
    assert fit.brier == pytest.approx(0.25 / 4) and fit.ece == pytest.approx(0.5 * 0.25)
    assert fit.spearman > 0.9 and fit.rows == 4
    with pytest.raises(ValueError, match="two or more judges"):
        panel({"a": [1, 2], "b": [1]})


def test_the_budget_counts_every_sanity_anchor() -> None:
    from blindspot.scoring.anchors import ANCHOR_COUNT
    from blindspot.scoring.probe import CheckRows, anchor_hypotheses

    assert len(anchor_hypotheses(CheckRows(["a b", "c d"], None, None), 0)) == ANCHOR_COUNT
