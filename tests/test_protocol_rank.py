"""The rank and monotonicity protocol (PROTOCOLS.md §1), the per-sample view (§4) and the
`metrics/blindspot_accuracy` module, on hand-computed cases."""

from __future__ import annotations

import math
from pathlib import Path

import evaluate
import pytest

from blindspot.judging import judge_curve, per_sample

ROOT = Path(__file__).resolve().parents[1]


def test_strictly_decreasing_curve_passes() -> None:
    out = judge_curve([(1, 0.1, [0.8]), (2, 0.2, [0.5])], gold=1.0)
    assert out["passed"] is True
    assert [p["level"] for p in out["points"]] == ["gold", 1, 2]


def test_flat_curve_within_tolerance_fails() -> None:
    # 1.0 -> 0.999995 drops by 5e-6, not more than the 1e-5 tolerance
    assert judge_curve([(1, 0.1, [0.999995])], gold=1.0)["passed"] is False
    assert judge_curve([(1, 0.1, [1.0])], gold=1.0)["passed"] is False
    assert judge_curve([(1, 0.1, [0.99998])], gold=1.0)["passed"] is True


def test_increasing_curve_fails() -> None:
    # truncation-like: a metric that rewards shorter outputs
    out = judge_curve([(1, 0.1, [0.9]), (2, 0.3, [1.2])], gold=1.0)
    assert out["passed"] is False


def test_cap_excludes_a_point() -> None:
    points = [(1, 0.1, [0.8]), (2, 0.6, [0.9]), (3, 0.7, [0.95])]
    out = judge_curve(points, gold=1.0)
    assert out["passed"] is True  # the rises at 0.6 and 0.7 are not judged
    assert out["excluded"] == [2, 3]
    assert [p["level"] for p in out["points"]] == ["gold", 1]
    assert judge_curve(points, gold=1.0, noise_cap=0.65)["passed"] is False


def test_no_point_under_cap_is_not_judged() -> None:
    out = judge_curve([(1, 0.8, [0.2])], gold=1.0)
    assert out["passed"] is None and "cap" in out["reason"]


def test_sorted_by_noise_ratio_not_level() -> None:
    # level 3 has the smallest noise ratio: in ratio order the curve decreases
    points = [(1, 0.4, [0.3]), (2, 0.25, [0.6]), (3, 0.1, [0.9])]
    out = judge_curve(points, gold=1.0)
    assert out["passed"] is True
    assert [p["level"] for p in out["points"]] == ["gold", 3, 2, 1]
    # in level order (0.3, 0.6, 0.9) it would have failed
    assert judge_curve([(1, 0.1, [0.3]), (2, 0.2, [0.6])], gold=1.0)["passed"] is False


def test_relative_change_and_population_std() -> None:
    out = judge_curve([(1, 0.1, [0.6, 1.0])], gold=[2.0, 2.0])
    gold, point = out["points"]
    assert gold["relative_change"] == 0.0 and gold["score_std"] == 0.0
    assert point["score_mean"] == pytest.approx(0.8)
    assert point["score_std"] == pytest.approx(0.2)  # population: sqrt(((0.2)^2 + 0.2^2) / 2)
    assert point["relative_change"] == pytest.approx(-60.0)  # (0.8 - 2) / 2 * 100
    assert point["n_seeds"] == 2
    neg = judge_curve([(1, 0.1, [-3.0])], gold=-2.0)["points"][1]
    assert neg["relative_change"] == pytest.approx(-50.0)  # (-3 + 2) / |-2| * 100


def test_nan_scores_excluded_counted_never_pass() -> None:
    out = judge_curve([(1, 0.1, [0.8, math.nan])], gold=1.0)
    assert out["passed"] is True
    assert out["points"][1]["n_seeds"] == 1 and out["points"][1]["n_nan"] == 1
    all_nan = judge_curve([(1, 0.1, [math.nan])], gold=1.0)
    assert all_nan["passed"] is None and "NaN" in all_nan["reason"]
    nan_gold = judge_curve([(1, 0.1, [0.5])], gold=math.nan)
    assert nan_gold["passed"] is None

    rows = per_sample([1.0, 1.0, math.nan, 1.0], [0.5, math.nan, 0.2, 1.0])
    assert rows["n"] == 2 and rows["n_nan"] == 2
    assert rows["fraction_noised_ge_gold"] == 0.5
    empty = per_sample([math.nan], [0.1])
    assert empty["n"] == 0 and empty["wilcoxon_p"] is None


def test_per_sample_fraction_and_bootstrap_determinism() -> None:
    gold = [1.0, 1.0, 1.0, 1.0]
    noised = [0.5, 1.0, 1.2, 0.7]  # rows 2 and 3 are not lowered
    out = per_sample(gold, noised, seed=3)
    assert out["fraction_noised_ge_gold"] == 0.5
    assert out["mean_difference"] == pytest.approx(0.15)  # (0.5 + 0 - 0.2 + 0.3) / 4
    assert out == per_sample(gold, noised, seed=3)
    assert out["ci_low"] <= out["mean_difference"] <= out["ci_high"]
    assert per_sample(gold, noised, seed=4)["ci_low"] != out["ci_low"] or \
        per_sample(gold, noised, seed=4)["ci_high"] != out["ci_high"]


def test_wilcoxon_on_clear_drop_and_no_difference() -> None:
    gold = [1.0 + 0.01 * i for i in range(20)]
    noised = [g - 0.3 - 0.01 * i for i, g in enumerate(gold)]
    out = per_sample(gold, noised)
    assert out["wilcoxon_p"] < 0.05
    assert out["fraction_noised_ge_gold"] == 0.0
    assert out["ci_low"] > 0
    same = per_sample(gold, gold)
    assert same["wilcoxon_p"] == 1.0 and same["fraction_noised_ge_gold"] == 1.0


def test_length_mismatch_is_an_error() -> None:
    with pytest.raises(ValueError):
        per_sample([1.0, 2.0], [1.0])


def _table() -> dict[str, list]:
    """Two tests, two levels, two seeds, two rows per (level, seed); gold scores all 1.0.

    "drop": seed means 0.8/0.6 at level 1 (ratio 0.1), 0.4/0.4 at level 2 (ratio 0.2) -> passes.
    "trunc": noised scores rise to 1.1 at level 2 -> fails; its level 3 (ratio 0.7) is over the cap.
    """
    cols: dict[str, list] = {k: [] for k in
                             ("predictions", "references", "tests", "levels", "noise_ratios",
                              "seeds")}
    scores = {("drop", 1, 0): [0.9, 0.7], ("drop", 1, 1): [0.5, 0.7],
              ("drop", 2, 0): [0.4, 0.4], ("drop", 2, 1): [0.3, 0.5],
              ("trunc", 1, 0): [0.9, 0.9], ("trunc", 1, 1): [0.9, 0.9],
              ("trunc", 2, 0): [1.1, 1.1], ("trunc", 2, 1): [1.1, 1.1],
              ("trunc", 3, 0): [0.0, 0.0], ("trunc", 3, 1): [0.0, 0.0]}
    ratio = {1: 0.1, 2: 0.2, 3: 0.7}
    for (test, level, seed), values in scores.items():
        for value in values:
            for key, item in zip(cols, (value, 1.0, test, level, ratio[level], seed), strict=True):
                cols[key].append(item)
    return cols


def test_evaluate_module_matches_judge_curve(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    module = evaluate.load("metrics/blindspot_accuracy")
    out = module.compute(**_table())
    assert out["drop"]["passed"] is True and out["trunc"]["passed"] is False
    assert out["trunc"]["excluded"] == [3]
    direct = judge_curve([(1, 0.1, [0.8, 0.6]), (2, 0.2, [0.4, 0.4])], gold=[1.0, 1.0])
    for got, want in zip(out["drop"]["points"], direct["points"], strict=True):
        for key in ("level", "noise_ratio", "score_mean", "score_std", "relative_change"):
            assert got[key] == pytest.approx(want[key])
    assert out["drop"]["points"][1]["score_std"] == pytest.approx(0.1)
    assert out["drop"]["points"][1]["n"] == 4
    level1 = out["drop"]["per_sample"][1]
    assert level1 == per_sample([1.0] * 4, [0.9, 0.7, 0.5, 0.7])
    assert out["trunc"]["per_sample"][2]["fraction_noised_ge_gold"] == 1.0


def test_evaluate_module_errors_on_nan_and_checks_columns(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    module = evaluate.load("metrics/blindspot_accuracy")
    out = module.compute(predictions=[0.5, 0.4, 0.5, math.nan], references=[1.0] * 4,
                         tests=["u", "u", "t", "t"], levels=[1] * 4, noise_ratios=[0.1] * 4,
                         seeds=[0] * 4)
    assert out["u"]["status"] == "pass" and out["u"]["points"][1]["n_nan_rows"] == 0
    assert out["t"]["passed"] is None and out["t"]["status"] == "error"
    assert out["t"]["error"] == ("level 1, seed 0: the metric returned NaN on 1 of 2 rows "
                                 "(ids 3)")  # named by its position in predictions
    only_nan = module.compute(predictions=[math.nan], references=[1.0], tests=["t"], levels=[1],
                              noise_ratios=[0.1], seeds=[0])
    assert only_nan["t"]["passed"] is None and only_nan["t"]["status"] == "error"
    with pytest.raises(ValueError, match="seeds"):
        module.compute(predictions=[0.5], references=[1.0], tests=["t"], levels=[1],
                       noise_ratios=[0.1])


@pytest.mark.parametrize("n", [7, 10, 1001])
def test_blocked_bootstrap_draws_the_numbers_of_one_draw(n: int, monkeypatch) -> None:
    """Drawing the resamples a few at a time (bounded memory) changes no bit of the interval."""
    import numpy as np

    from blindspot import judging as rank

    diffs = np.random.default_rng(5).normal(size=n)
    rng = np.random.default_rng(0)
    means = diffs[rng.integers(0, n, size=(1000, n))].mean(axis=1)  # the one-draw formula
    expected = tuple(float(x) for x in np.percentile(means, [2.5, 97.5]))
    monkeypatch.setattr(rank, "BOOTSTRAP_BLOCK_VALUES", 3 * n)  # blocks of 2 resamples
    assert rank.bootstrap_blocks(1000, n, 3 * n) == [2] * 500
    assert rank._bootstrap_ci(diffs, 0, 1000) == expected
    monkeypatch.setattr(rank, "BOOTSTRAP_BLOCK_VALUES", 10**9)  # one block
    assert rank._bootstrap_ci(diffs, 0, 1000) == expected
    assert rank.bootstrap_blocks(999, n, 3 * n)[-1] == 1  # an odd total ends on one resample
