"""Panels of judges, their agreement, and a judge's calibration against human grades.

Several judges (models, or prompt variants of one: ``rubric=reversed``, ``reworded``) grade the
same rows; :func:`panel` gives the rows' panel scores (mean, median, min) and :func:`agreement`
how far the verdict depends on which judge was picked: the share of rows graded exactly alike,
the share within a tolerance, and Cohen's kappa (agreement beyond chance, from scikit-learn;
undefined for two judges that each give one and the same grade to every row), for one pair or
every pair of a panel (:func:`agreement_matrix`).
:func:`calibration` sets a judge against human grades (SummEval's expert judgments): Pearson and
Spearman correlation, and for a pass/fail threshold on both scales the Brier score and the
expected calibration error of the judge's scaled score read as a probability of "pass".
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats

#: equal-width bins of the expected calibration error
ECE_BINS = 10


@dataclass(frozen=True)
class Panel:
    """Per-row panel scores of several judges."""

    mean: list[float]
    median: list[float]
    min: list[float]


def _matrix(grades: Mapping[str, Sequence[float]]) -> np.ndarray:
    lengths = {len(v) for v in grades.values()}
    if len(grades) < 2 or len(lengths) != 1:
        raise ValueError("a panel needs two or more judges with one grade per row each; got "
                         + ", ".join(f"{k}: {len(v)} rows" for k, v in grades.items()))
    return np.array([list(map(float, v)) for v in grades.values()])


def panel(grades: Mapping[str, Sequence[float]]) -> Panel:
    """The panel's mean, median and minimum per row (``grades``: judge -> one grade per row)."""
    table = _matrix(grades)
    return Panel(table.mean(0).tolist(), np.median(table, 0).tolist(), table.min(0).tolist())


@dataclass(frozen=True)
class Agreement:
    """Two judges on the same rows."""

    exact: float  #: share of rows with the same grade
    within: float  #: share of rows whose grades differ by at most the tolerance
    #: Cohen's kappa of the grades (1: perfect, 0: chance); NaN when it is undefined: both
    #: judges gave every row one and the same grade, so chance alone explains their agreement
    kappa: float


def agreement(first: Sequence[float], second: Sequence[float], tolerance: float = 1.0
              ) -> Agreement:
    """How often two judges agree, on the same rows (the grades, e.g. the ``grade`` output)."""
    from sklearn.metrics import cohen_kappa_score  # lazy: scikit-learn comes with the models extra

    a, b = _matrix({"first": first, "second": second})
    kappa = float(cohen_kappa_score(a.astype(int), b.astype(int))) if len(set(a) | set(b)) > 1 \
        else math.nan
    return Agreement(float(np.mean(a == b)), float(np.mean(np.abs(a - b) <= tolerance)), kappa)


def agreement_matrix(grades: Mapping[str, Sequence[float]], tolerance: float = 1.0
                     ) -> dict[str, dict[str, Agreement]]:
    """Every judge against every judge (judge -> judge -> :class:`Agreement`, the full N x N
    matrix, the diagonal included), not each against the first only."""
    _matrix(grades)  # two or more judges, one grade per row each
    return {a: {b: agreement(grades[a], grades[b], tolerance) for b in grades} for a in grades}


def constant_grade(grades: Sequence[float]) -> float | None:
    """The one grade every row got, or None when the grades vary (or there are none): a judge
    that gives every text the same grade says nothing about the texts."""
    values = {float(g) for g in grades if not math.isnan(float(g))}
    return values.pop() if len(values) == 1 and len(grades) > 1 else None


@dataclass(frozen=True)
class Calibration:
    """A judge against human grades on the same rows."""

    pearson: float
    spearman: float
    brier: float  #: mean (p - passed)^2, p the judge's score scaled to [0, 1]
    ece: float  #: expected calibration error of p over ``ECE_BINS`` equal-width bins
    rows: int


def calibration(judge: Sequence[float], human: Sequence[float], scale: tuple[float, float],
                threshold: float) -> Calibration:
    """The judge's ``score`` (on ``scale``) against human grades; a row passes when its human
    grade is at least ``threshold``, and the judge's scaled score is its probability of passing."""
    scores, truth = _matrix({"judge": judge, "human": human})
    low, high = scale
    p = np.clip((scores - low) / (high - low), 0.0, 1.0)
    passed = (truth >= threshold).astype(float)
    bins = np.minimum((p * ECE_BINS).astype(int), ECE_BINS - 1)
    ece = sum(abs(p[bins == k].mean() - passed[bins == k].mean()) * np.mean(bins == k)
              for k in range(ECE_BINS) if np.any(bins == k))
    return Calibration(float(stats.pearsonr(scores, truth)[0]),
                       float(stats.spearmanr(scores, truth)[0]),
                       float(np.mean((p - passed) ** 2)), float(ece), len(scores))
