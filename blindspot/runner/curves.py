"""One test's entry of ``results.json`` from a metric's scores on the gold rows and on every
(level, seed) cell of the test: its points, verdict, per-sample view and worst examples.

The judge itself (the verdict rules, tolerance, noise cap, why a verdict is within noise, the NaN
policy) is :mod:`blindspot.judging`; this module only arranges a run's scores for it: each test is
judged by the rule its perturbation declares, with the per-row scores (mean over seeds) for the
bootstrap of the deciding comparison. A cell that failed or scored NaN makes the test
an ``error`` with the reason, never a pass. A cell's per-row values may be lists or numpy arrays
(a run loads them from disk), and its worst-example candidates may come precomputed
(:func:`worst_candidates` over each chunk of a run), so runs and protocols judge with this one code.
"""

from __future__ import annotations

import heapq
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from statistics import fmean, pstdev
from typing import Any

import numpy as np

from blindspot.judging import (
    DEFAULT_RULE,
    GOLD,
    RowScores,
    cell_problem,
    gold_problem,
    judge_curve,
    nan_error,
    per_sample,
    status_of,
    summarise_point,
)
from blindspot.report.schema import PerSample, Point, TestResult, WorstExample


@dataclass
class Cell:
    """A metric's scores on one (test, level, seed) cell, direction-adjusted (higher = better)."""

    test: str
    level: str
    seed: int
    noise_ratios: RowScores
    applied: Sequence[bool] | np.ndarray
    perturbed: list[str]
    #: per row (a numpy array in a run, read back from disk); None for corpus-level metrics
    scores: RowScores | None = None
    corpus_score: float | None = None
    error: str | None = None
    worst: list[Candidate] | None = None  # precomputed worst-example candidates (a run's chunks)


@dataclass(frozen=True)
class Candidate:
    """A changed row that may be a worst example: its sort key and what the report shows."""

    key: float  # -(perturbed score - gold score): the smallest lowered the score least
    row: int
    id: Any
    gold: str
    perturbed: str
    gold_score: float
    perturbed_score: float


@dataclass
class Gold:
    """The gold rows and the metric's scores on them."""

    ids: list[Any]
    texts: list[str]
    scores: RowScores | None = None
    corpus_score: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    #: how many gold rows were scored, when neither their texts nor their row scores are kept
    #: (a run keeps scores on disk, not texts; a corpus-level metric has no row scores)
    size: int | None = None

    @property
    def rows(self) -> int:
        """How many gold rows were scored."""
        if self.size is not None:
            return self.size
        return len(self.scores) if self.scores is not None else len(self.texts)


@dataclass(frozen=True)
class JudgeSettings:
    tolerance: float
    noise_cap: float
    worst_examples: int
    bootstrap_seed: int


def _mean_or_corpus(scores: RowScores | None, corpus_score: float | None) -> float:
    """The mean row score, or the corpus score of a corpus-level metric (judged only after
    :func:`scores_problem` found every score present)."""
    if scores is not None:
        return fmean(scores)
    if corpus_score is None:
        raise ValueError("neither row scores nor a corpus score to judge")
    return corpus_score


def _cell_value(cell: Cell) -> float:
    return _mean_or_corpus(cell.scores, cell.corpus_score)


def gold_value(gold: Gold) -> float:
    """The gold rows' mean score (or corpus score)."""
    return _mean_or_corpus(gold.scores, gold.corpus_score)


def _levels(cells: Sequence[Cell]) -> dict[str, list[Cell]]:
    by_level: dict[str, list[Cell]] = defaultdict(list)
    for cell in cells:
        by_level[cell.level].append(cell)
    return by_level


def _point(level: str, cells: list[Cell], gold_mean: float, rows: int) -> tuple[dict, float]:
    """A level's summary: score mean / std over seeds, noise ratio mean / std over seeds."""
    ratios = [fmean(c.noise_ratios) for c in cells]
    ratio = fmean(ratios)
    point = summarise_point(level, ratio, [_cell_value(c) for c in cells], gold_mean)
    point["noise_ratio_std"] = pstdev(ratios)
    point["n"] = rows * len(cells)
    return point, ratio


def _shape(point: dict[str, Any], judged: bool) -> Point:
    """A point as results.json keeps it (gold has no noise ratio spread)."""
    return Point(str(point["level"]), point["noise_ratio"], point.get("noise_ratio_std", 0.0),
                 point["score_mean"], point["score_std"], point.get("n"), point["n_seeds"],
                 point["n_nan"], point["relative_change"], judged)


def _row_means(by_level: dict[str, list[Cell]], gold: Gold) -> dict[str, np.ndarray] | None:
    """Each level's per-row score averaged over its seeds, gold under ``GOLD`` (None for a
    corpus-level metric)."""
    if gold.scores is None:
        return None
    means = {level: np.mean([np.asarray(c.scores, dtype=float) for c in cells], axis=0)
             for level, cells in by_level.items()}
    return {GOLD: np.asarray(gold.scores, dtype=float), **means}


def _per_sample(by_level: dict[str, list[Cell]], judged: list[str], gold: Gold,
                seed: int) -> list[PerSample]:
    if gold.scores is None:
        return []
    out = []
    for level in judged:
        noised = np.concatenate([np.asarray(c.scores, dtype=float) for c in by_level[level]])
        paired = np.tile(np.asarray(gold.scores, dtype=float), len(by_level[level]))
        out.append(PerSample(level=level, **per_sample(paired, noised, seed=seed)))
    return out


def worst_candidates(scores: RowScores, gold_scores: RowScores,
                     applied: Sequence[bool] | np.ndarray, k: int, ids: Sequence[Any],
                     gold_texts: Sequence[str], perturbed: Sequence[str], offset: int = 0) -> list[Candidate]:
    """A cell's (or a chunk of a cell's) ``k`` changed rows whose score the noise lowered least,
    in :func:`_worst`'s order; ``offset`` is the first row's number in the whole dataset."""
    keyed = ((-(score - gold), i) for i, (score, gold, changed) in
             enumerate(zip(scores, gold_scores, applied, strict=True)) if changed)
    return [Candidate(key, offset + i, ids[i], gold_texts[i], perturbed[i], gold_scores[i],
                      scores[i]) for key, i in heapq.nsmallest(k, keyed)]


def keep_worst(kept: Sequence[Candidate], more: Sequence[Candidate], k: int) -> list[Candidate]:
    """The ``k`` first of two candidate lists of one cell."""
    return heapq.nsmallest(k, [*kept, *more], key=lambda c: (c.key, c.row))


def _worst(by_level: dict[str, list[Cell]], judged: list[str], gold: Gold,
           k: int) -> list[WorstExample]:
    """The k changed rows whose score the noise lowered least (or raised most)."""
    if gold.scores is None or k <= 0:
        return []
    candidates = []
    for rank, level in enumerate(judged):
        for cell in by_level[level]:
            if cell.scores is None:  # row scores come with the gold's (checked above)
                continue
            found = cell.worst if cell.worst is not None else worst_candidates(
                cell.scores, gold.scores, cell.applied, k, gold.ids, gold.texts, cell.perturbed)
            candidates += [(c.key, rank, cell.seed, c.row, c, cell) for c in found]
    candidates.sort(key=lambda c: c[:4])
    return [WorstExample(c.id, cell.level, cell.seed, c.gold, c.perturbed, c.gold_score,
                         c.perturbed_score, c.perturbed_score - c.gold_score)
            for _, _, _, _, c, cell in candidates[:k]]




def _values(scores: RowScores | None, corpus_score: float | None) -> Sequence[Any] | np.ndarray:
    return scores if scores is not None else [corpus_score]


def _ids(gold: Gold, scores: RowScores | None) -> Sequence[Any]:
    """The ids that name a cell's rows in a NaN message (positions when the gold rows' ids are
    not kept, as in a run)."""
    if scores is None:
        return ["(corpus)"]
    return gold.ids if len(gold.ids) == len(scores) else range(len(scores))


def scores_problem(cells: Sequence[Cell], gold: Gold) -> str | None:
    """The NaN policy of :mod:`blindspot.judging` on a test's scores: the error of NaN gold
    scores, else of the first cell (in plan order) that failed or scored NaN; None when the test
    can be judged."""
    gold_error = nan_error(_values(gold.scores, gold.corpus_score), _ids(gold, gold.scores))
    if gold_error:
        return gold_problem(gold_error)
    for cell in cells:
        error = cell.error or nan_error(_values(cell.scores, cell.corpus_score),
                                        _ids(gold, cell.scores))
        if error:
            return cell_problem(cell.level, cell.seed, error)
    return None


def judge_test(test: str, category: str, cells: Sequence[Cell], gold: Gold,
               settings: JudgeSettings, rule: str = DEFAULT_RULE) -> TestResult:
    """The results.json entry of one test, judged by ``rule`` (its perturbation's
    ``verdict_rule``)."""
    problem = scores_problem(cells, gold)
    if problem is not None:
        return TestResult.failed(test, category, rule, problem)
    by_level = _levels(cells)
    rows = gold.rows
    gold_mean = gold_value(gold)
    curve, shaped = [], {}
    for level, level_cells in by_level.items():
        point, ratio = _point(level, level_cells, gold_mean, rows)
        shaped[level] = point
        curve.append((level, ratio, [_cell_value(c) for c in level_cells]))
    verdict = judge_curve(curve, gold_mean, tolerance=settings.tolerance,
                          noise_cap=settings.noise_cap, rule=rule,
                          rows=_row_means(by_level, gold), bootstrap_seed=settings.bootstrap_seed,
                          name=test)
    judged = [str(p["level"]) for p in verdict["points"][1:]]
    gold_point = summarise_point(GOLD, 0.0, [gold_mean], gold_mean)
    gold_point["n"] = rows
    points = [_shape(gold_point, True)] + [_shape(shaped[level], True) for level in judged]
    excluded = sorted((lv for lv in by_level if lv not in judged),
                      key=lambda lv: shaped[lv]["noise_ratio"])
    points += [_shape(shaped[level], False) for level in excluded]
    passed = verdict["passed"]
    headline = points[verdict["headline"]] if verdict["headline"] is not None else None
    return TestResult(
        test, category, verdict["rule"], status_of(passed), passed, verdict["reason"], None,
        verdict["explanation"], verdict["within_noise"], verdict["deciding"],
        headline.relative_change if headline else None,
        headline.score_mean - gold_mean if headline else None, points,
        _per_sample(by_level, judged, gold, settings.bootstrap_seed),
        _worst(by_level, judged, gold, settings.worst_examples))
