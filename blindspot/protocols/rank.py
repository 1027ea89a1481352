"""Rank and monotonicity protocol (PROTOCOLS.md §1) and the per-sample view (§4).

A metric passes a perturbation test only when its score strictly decreases as the noise ratio
grows, gold (noise ratio 0) first. Scores that are NaN are excluded and counted, because a NaN
compares False with everything and would otherwise let a broken metric pass silently.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np
from scipy import stats

TOLERANCE = 1e-5  # the reference tolerance of the blind-spots paper
NOISE_CAP = 0.6  # only points below this noise ratio are judged (the paper's plots)

Point = tuple[Any, float, Sequence[float]]


def _finite(values: Sequence[float]) -> tuple[list[float], int]:
    """The finite values and how many NaN values were dropped."""
    kept = [float(v) for v in values if not math.isnan(float(v))]
    return kept, len(values) - len(kept)


def summarise_point(level: Any, noise_ratio: float, scores: Sequence[float],
             gold_mean: float | None) -> dict[str, Any]:
    """One curve point: mean, population std over seeds and relative change vs. gold."""
    kept, n_nan = _finite(scores)
    mean = float(np.mean(kept)) if kept else None
    std = float(np.std(kept)) if kept else None  # ddof=0: population std, as specified
    relative = None
    if mean is not None and gold_mean is not None and gold_mean != 0:
        relative = (mean - gold_mean) / abs(gold_mean) * 100
    return {"level": level, "noise_ratio": float(noise_ratio), "score_mean": mean,
            "score_std": std, "n_seeds": len(kept), "n_nan": n_nan, "relative_change": relative}


def _strictly_decreasing(means: Sequence[float], tolerance: float) -> bool:
    """False as soon as a score is not below the previous one by more than the tolerance."""
    return not any(a <= b + tolerance for a, b in zip(means, means[1:]))


def judge_curve(points: Sequence[Point], gold: float | Sequence[float],
                tolerance: float = TOLERANCE, noise_cap: float = NOISE_CAP) -> dict[str, Any]:
    """Judge one test's curve: pass only if scores strictly decrease with the noise ratio.

    Args:
        points: ``(level, noise_ratio, scores_per_seed)`` for every noised level.
        gold: the gold score, or one gold score per seed.
        tolerance: a step must drop by more than this to count as a decrease.
        noise_cap: points with a noise ratio >= the cap are left out of the verdict.
    Returns:
        ``passed`` (True, False, or None when the test cannot be judged, with ``reason``),
        ``points`` (gold first, sorted by noise ratio) and ``excluded`` (levels over the cap).
    """
    gold_scores = [gold] if isinstance(gold, (int, float)) else list(gold)
    gold_kept, _ = _finite(gold_scores)
    gold_mean = float(np.mean(gold_kept)) if gold_kept else None
    ordered = sorted(points, key=lambda p: float(p[1]))  # noise ratio, not level order
    kept = [p for p in ordered if float(p[1]) < noise_cap]
    excluded = [p[0] for p in ordered if float(p[1]) >= noise_cap]
    summaries = [summarise_point("gold", 0.0, gold_scores, gold_mean)]
    summaries += [summarise_point(level, ratio, scores, gold_mean) for level, ratio, scores in kept]
    result: dict[str, Any] = {"passed": None, "reason": None, "points": summaries,
                              "excluded": excluded}
    if gold_mean is None:
        result["reason"] = "the gold score is NaN or missing"
    elif not kept:
        result["reason"] = f"no noised point has a noise ratio below the cap {noise_cap}"
    elif any(s["score_mean"] is None for s in summaries):
        result["reason"] = "a noised point has only NaN scores"
    else:
        result["passed"] = _strictly_decreasing([s["score_mean"] for s in summaries], tolerance)
    return result


def _wilcoxon_greater(gold: np.ndarray, noised: np.ndarray) -> float:
    """One-sided paired Wilcoxon p-value for gold > noised; 1.0 when nothing differs."""
    if not np.any(gold - noised):
        return 1.0
    return float(stats.wilcoxon(gold, noised, alternative="greater").pvalue)


#: the bootstrap draws this many resampled values at a time (8 MB of indices)
BOOTSTRAP_BLOCK_VALUES = 1_000_000


def bootstrap_blocks(n_boot: int, n: int, block_values: int = BOOTSTRAP_BLOCK_VALUES
                     ) -> list[int]:
    """How many resamples to draw at a time: an even number, so each block draws a whole number
    of the generator's 64-bit words (numpy's bounded integers take two 32-bit halves from one
    word and drop an odd one out at the end of a call), and the blocks draw exactly the numbers
    of a single ``integers(size=(n_boot, n))`` call, in bounded memory whatever ``n`` is."""
    rows = max(2, block_values // max(n, 1) // 2 * 2)
    return [min(rows, n_boot - start) for start in range(0, n_boot, rows)]


def _bootstrap_ci(diffs: np.ndarray, seed: int, n_boot: int) -> tuple[float, float]:
    """95 % percentile bootstrap CI of the mean difference, deterministic for a seed.

    The resamples are drawn block by block (:func:`bootstrap_blocks`): the numbers of one
    ``(n_boot, n)`` draw, without its n_boot x n indices in memory at once (4 GB at 500k rows).
    """
    rng = np.random.default_rng(seed)
    blocks = bootstrap_blocks(n_boot, len(diffs), BOOTSTRAP_BLOCK_VALUES)
    means = np.concatenate([diffs[rng.integers(0, len(diffs), size=(rows, len(diffs)))]
                            .mean(axis=1) for rows in blocks])
    low, high = np.percentile(means, [2.5, 97.5])
    return float(low), float(high)


def per_sample(gold_scores: Sequence[float], noised_scores: Sequence[float], seed: int = 0,
               n_boot: int = 1000) -> dict[str, Any]:
    """Paired per-row view of gold vs. noised scores, so a verdict comes with its uncertainty.

    Rows where either score is NaN are dropped and counted in ``n_nan``.
    Returns ``n``, ``n_nan``, ``fraction_noised_ge_gold``, ``mean_difference`` (gold - noised),
    ``wilcoxon_p`` (one-sided, gold > noised) and ``ci_low``/``ci_high`` (95 % bootstrap CI).
    """
    if len(gold_scores) != len(noised_scores):
        raise ValueError(f"{len(gold_scores)} gold scores but {len(noised_scores)} noised scores")
    gold = np.asarray(gold_scores, dtype=float)
    noised = np.asarray(noised_scores, dtype=float)
    valid = ~(np.isnan(gold) | np.isnan(noised))
    gold, noised = gold[valid], noised[valid]
    result: dict[str, Any] = {"n": int(valid.sum()), "n_nan": int((~valid).sum()),
                              "fraction_noised_ge_gold": None, "mean_difference": None,
                              "wilcoxon_p": None, "ci_low": None, "ci_high": None}
    if not len(gold):
        return result
    diffs = gold - noised
    low, high = _bootstrap_ci(diffs, seed, n_boot)
    result.update(fraction_noised_ge_gold=float(np.mean(noised >= gold)),
                  mean_difference=float(diffs.mean()), wilcoxon_p=_wilcoxon_greater(gold, noised),
                  ci_low=low, ci_high=high)
    return result


def _nanmean(values: Sequence[float]) -> float:
    """Mean of the finite values; NaN when there is none (the caller counts and reports it)."""
    arr = np.asarray(values, dtype=float)
    arr = arr[~np.isnan(arr)]
    return float(arr.mean()) if len(arr) else float("nan")


def judge_rows(rows: Sequence[tuple[Hashable, float, Any, float, float]],
               tolerance: float = TOLERANCE, noise_cap: float = NOISE_CAP,
               bootstrap_seed: int = 0) -> dict[str, Any]:
    """Verdict of one test from its rows ``(level, noise_ratio, seed, noised, gold)``.

    A level's score per seed is the mean over its rows, its noise ratio the mean over all its
    rows; the curve is judged by :func:`judge_curve` and every level gets the per-sample view.
    """
    by_point: dict[tuple[Any, Any], list[float]] = defaultdict(list)
    by_level: dict[Any, list[tuple[float, float, float]]] = defaultdict(list)
    gold_by_seed: dict[Any, list[float]] = defaultdict(list)
    for level, ratio, seed, noised, gold in rows:
        by_point[(level, seed)].append(noised)
        by_level[level].append((ratio, noised, gold))
        gold_by_seed[seed].append(gold)
    seeds = sorted(gold_by_seed, key=repr)
    points = []
    for level, level_rows in by_level.items():
        ratio = float(np.mean([r[0] for r in level_rows]))
        scores = [_nanmean(by_point[(level, s)]) for s in seeds if (level, s) in by_point]
        points.append((level, ratio, scores))
    verdict = judge_curve(points, [_nanmean(gold_by_seed[s]) for s in seeds],
                          tolerance=tolerance, noise_cap=noise_cap)
    for point in verdict["points"][1:]:
        level_rows = by_level[point["level"]]
        point["n"] = len(level_rows)
        point["n_nan_rows"] = int(sum(np.isnan(n) or np.isnan(g) for _, n, g in level_rows))
    verdict["per_sample"] = {
        level: per_sample([r[2] for r in level_rows], [r[1] for r in level_rows],
                          seed=bootstrap_seed)
        for level, level_rows in by_level.items()}
    return verdict
