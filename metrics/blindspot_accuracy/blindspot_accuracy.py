"""Blind-spot accuracy: the rank and monotonicity verdict of the blind-spots paper (He et al., 2023).

Each row pairs a metric's score on a noised hypothesis (``predictions``) with its score on the gold
hypothesis it was made from (``references``), tagged with its test, perturbation level, noise ratio
and seed. Per test, the score of a level and seed is the mean over its rows; the metric passes
only if the scores strictly decrease with the noise ratio, gold first (tolerance 1e-5, points with
a noise ratio >= 0.6 left out). A catalogue test that declares another verdict rule is judged
by it, as ``blindspot run`` judges it (copy-source, injection, repetition, frequent n-gram: every
level below gold; positioned error: a significant drop at every position), and each verdict comes
with its ``explanation`` and, for a fail, ``within_noise`` (from the seeds' spread: rows carry no
id to pair levels by). A per-sample view per level adds the fraction of rows the noise
did not lower, a paired one-sided Wilcoxon p-value and a bootstrap CI of the mean drop. A NaN (or
missing) score makes its test an ``error`` naming the rows by their position in ``predictions``,
as ``blindspot run`` does on the same scores (one judge: :mod:`blindspot.judging`); a test that
cannot be judged has ``passed`` None, never True.

Examples:
    >>> import evaluate
    >>> judge = evaluate.load("blindspot_accuracy")
    >>> out = judge.compute(predictions=[0.8, 0.6, 0.5, 0.3, 1.0, 1.0, 1.0, 1.0],
    ...                     references=[1.0] * 8,
    ...                     tests=["drop"] * 4 + ["flat"] * 4,
    ...                     levels=[1, 1, 2, 2, 1, 1, 2, 2],
    ...                     noise_ratios=[0.1, 0.1, 0.2, 0.2] * 2,
    ...                     seeds=[0] * 8)
    >>> out["drop"]["passed"], out["flat"]["passed"]
    (True, False)
    >>> [round(p["relative_change"], 6) for p in out["drop"]["points"]]
    [0.0, -30.0, -60.0]
    >>> out["flat"]["per_sample"][1]["fraction_noised_ge_gold"]
    1.0
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

import datasets
import evaluate

from blindspot.judging import DEFAULT_RULE, NOISE_CAP, TOLERANCE, judge_rows
from blindspot.perturbations.perturbation import REGISTRY, canonical_name

_CITATION = """\
@inproceedings{he-etal-2023-blind,
    title = "On the Blind Spots of Model-Based Evaluation Metrics for Text Generation",
    author = "He, Tianxing and Zhang, Jingyu and Wang, Tianle and Kumar, Sachin and
      Cho, Kyunghyun and Glass, James and Tsvetkov, Yulia",
    booktitle = "Proceedings of the 61st Annual Meeting of the Association for Computational
      Linguistics (Volume 1: Long Papers)",
    year = "2023",
    publisher = "Association for Computational Linguistics",
    pages = "12067--12097",
}
"""

_INPUTS = """
Args:
    predictions (list of float): the metric's score of each noised row.
    references (list of float): the metric's score of the gold row it was made from.
    tests (list of str): the test of each row.
    levels (list): the perturbation level of each row.
    noise_ratios (list of float): the noise ratio of each row (a level's ratio is their mean).
    seeds (list of int): the seed of each row.
    tolerance (float): a step must drop by more than this (default 1e-5).
    noise_cap (float): points with a noise ratio >= this are left out (default 0.6).
    bootstrap_seed (int): seed of the per-sample bootstrap (default 0).
Returns:
    {test: {"status": "pass", "fail", "undecided" or "error" (a NaN score), "error": its
    message or None, "passed": bool or None, "reason": str or None, "rule": the verdict rule,
    "explanation": the deciding step in a sentence, "within_noise": for a fail, whether more
    seeds could change it, "deciding": that step, "points": [gold point, then one per
    level sorted by noise ratio: level, noise_ratio, score_mean, score_std, n_seeds, n,
    n_nan_rows, relative_change], "excluded": [levels over the cap],
    "per_sample": {level: fraction_noised_ge_gold, wilcoxon_p, ci_low, ci_high, ...}}}
"""

_ROW_KWARGS = ("tests", "levels", "noise_ratios", "seeds")


def _rule(test: str) -> str:
    """The verdict rule a catalogue test declares (``blindspot run`` judges it so too); any
    other test name is judged by the rank protocol's default rule."""
    try:
        return REGISTRY[canonical_name(test)].verdict_rule
    except ValueError:
        return DEFAULT_RULE


def _check_rows(n_rows: int, columns: dict[str, Any]) -> list[Sequence[Any]]:
    """Every per-row kwarg is present and has one value per row; their values, in order."""
    for name, values in columns.items():
        if values is None:
            raise ValueError(f"blindspot_accuracy needs `{name}`: one value per row")
        if len(values) != n_rows:
            raise ValueError(f"`{name}` has {len(values)} values for {n_rows} rows")
    return list(columns.values())


class BlindspotAccuracy(evaluate.Metric):
    """Per-test pass/fail of a metric under the rank and monotonicity protocol."""

    def _info(self) -> evaluate.MetricInfo:
        return evaluate.MetricInfo(
            description=__doc__, citation=_CITATION, inputs_description=_INPUTS,
            features=datasets.Features({"predictions": datasets.Value("float64"),
                                        "references": datasets.Value("float64")}))

    def _compute(self, predictions: list[float], references: list[float],
                 tests: Sequence[str] | None = None, levels: Sequence[Any] | None = None,
                 noise_ratios: Sequence[float] | None = None, seeds: Sequence[Any] | None = None,
                 tolerance: float = TOLERANCE, noise_cap: float = NOISE_CAP,
                 bootstrap_seed: int = 0) -> dict[str, Any]:
        columns = dict(zip(_ROW_KWARGS, (tests, levels, noise_ratios, seeds), strict=True))
        row_tests, row_levels, row_ratios, row_seeds = _check_rows(len(predictions), columns)
        by_test: dict[str, list[tuple[Any, float, Any, float, float]]] = defaultdict(list)
        positions: dict[str, list[int]] = defaultdict(list)
        for i, (test, level, ratio, seed, noised, gold) in enumerate(
                zip(row_tests, row_levels, row_ratios, row_seeds, predictions, references,
                    strict=True)):
            by_test[test].append((level, float(ratio), seed,
                                  float("nan") if noised is None else float(noised),
                                  float("nan") if gold is None else float(gold)))
            positions[test].append(i)
        return {test: judge_rows(rows, tolerance, noise_cap, bootstrap_seed, _rule(test), test,
                                 ids=positions[test])
                for test, rows in by_test.items()}
