"""The examination paper's expectations as checks on a rank run (spec PERTURBATIONS.md §D).

The paper states three expectations of a good metric (its Section 5):

1. ``decreasing_with_intensity``: "a strict monotonous decrease for the impairments with
   increasing degree of severity" (word swap, word drop, repetition). This is the rank protocol's
   strict decrease (:func:`blindspot.judging.judge_curve`, same tolerance) with two
   changes the paper asks for: the points are ordered by the impairment's intensity (its level),
   not by the noise ratio, and every level counts -- the paper's intensities run to a random
   permutation and to n repetitions, far over the rank protocol's noise cap.
2. ``negation_drops_sharply``: "for Negation we expected a sharp drop". The paper gives no
   number, and score scales differ between metrics, so the drop is measured against the same
   metric's drop on another impairment of the run: negating every sentence must lower the score
   at least as much as deleting a quarter of the words (``word_drop`` at its mildest level,
   .25 with the paper's levels). Negation reverses what a text says with one or two added words,
   while a quarter of the words gone still leaves most of its meaning; a metric that cares for
   meaning penalises the negation at least as hard. (The paper saw no metric do so.) The
   negation's drop must also be above the tolerance.
3. ``det_drop_hurts_least``: "the loss of rather unimportant POS (DET) should ... not lead to more
   damage ... than the drop of important POS (NOUN, VERB, ADJ)": the score drop of ``pos_drop``
   at DET must be smaller, by more than the tolerance, than at each of NOUN, VERB and ADJ.

A drop is the gold score minus the impaired score (direction-adjusted: higher is better), the
mean over the rows the impairment changed -- as in the paper, which scored the impaired sentences
only; unchanged rows would dilute a rare tag (ADJ) against a frequent one (DET). Corpus-level
metrics have no row scores: their drop is the corpus score difference over all rows.

Every check returns ``{"expectation", "tests", "passed", "reason", "values"}``: ``passed`` is
None (with ``reason``) when the check cannot be decided (a test missing or failed, no changed
row); ``values`` holds the numbers it compared.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from statistics import fmean
from typing import Any

import numpy as np

from blindspot.judging import TOLERANCE, RowScores, judge_curve

#: the impairments whose scores must fall with each intensity step
INTENSITY_TESTS = ("word_swap", "word_drop", "phrase_repetition")
NEGATION_TEST = "root_negation"
#: the impairment whose mildest level is the yardstick of a sharp negation drop
NEGATION_YARDSTICK = "word_drop"
POS_TEST = "pos_drop"
MILD_TAG = "DET"
CONTENT_TAGS = ("NOUN", "VERB", "ADJ")

Drops = Mapping[tuple[str, str], float | None]


def _check(name: str, tests: Sequence[str], passed: bool | None, reason: str | None = None,
           values: Mapping[str, Any] | None = None) -> dict[str, Any]:
    return {"expectation": name, "tests": list(tests), "passed": passed, "reason": reason,
            "values": dict(values or {})}


def intensity(level: str) -> float:
    """A numeric level's intensity (the ordering key of the curve)."""
    return float(level)


def decreasing_with_intensity(test: str, result: Mapping[str, Any],
                              tolerance: float = TOLERANCE) -> dict[str, Any]:
    """Whether the test's mean score strictly falls at every intensity step, gold first.

    ``result`` is the test's entry in results.json; all its points count (none is capped).
    """
    name = "decreasing_with_intensity"
    if result.get("status") == "error":
        return _check(name, [test], None, f"the metric failed on {test}: {result.get('error')}")
    noised = [p for p in result.get("points", []) if p.get("level") != "gold"]
    gold = [p.get("score_mean") for p in result.get("points", []) if p.get("level") == "gold"]
    curve = [(p["level"], intensity(p["level"]),
              [] if p.get("score_mean") is None else [p["score_mean"]]) for p in noised]
    verdict = judge_curve(curve, gold[0] if gold and gold[0] is not None else math.nan,
                          tolerance=tolerance, noise_cap=math.inf)
    values = {str(p["level"]): p["score_mean"] for p in verdict["points"]}
    return _check(name, [test], verdict["passed"], verdict["reason"], values)


def negation_drops_sharply(negation: float | None, yardstick: float | None,
                           tolerance: float = TOLERANCE,
                           yardstick_label: str = f"{NEGATION_YARDSTICK} @ 0.25") -> dict[str, Any]:
    """Whether negating lowers the score at least as much as the yardstick impairment does."""
    name = "negation_drops_sharply"
    tests = [NEGATION_TEST, NEGATION_YARDSTICK]
    values = {"negation_drop": negation, "yardstick": yardstick_label, "yardstick_drop": yardstick}
    if negation is None:
        return _check(name, tests, None, f"no score drop of {NEGATION_TEST} (no row negated, "
                                         f"or the metric failed)", values)
    if yardstick is None:
        return _check(name, tests, None, f"no score drop of {yardstick_label} to compare with "
                                         f"(run {NEGATION_YARDSTICK} too, e.g. --tests "
                                         f"examination)", values)
    return _check(name, tests, negation > tolerance and negation >= yardstick, None, values)


def det_drop_hurts_least(drops: Mapping[str, float | None],
                         tolerance: float = TOLERANCE) -> dict[str, Any]:
    """Whether dropping determiners lowers the score less than dropping each content tag."""
    name = "det_drop_hurts_least"
    values = {f"{tag}_drop": drops.get(tag) for tag in (MILD_TAG, *CONTENT_TAGS)}
    compared_drops = {tag: drop for tag in CONTENT_TAGS if (drop := drops.get(tag)) is not None}
    compared = list(compared_drops)
    mild = drops.get(MILD_TAG)
    if mild is None or not compared:
        missing = [t for t in (MILD_TAG, *CONTENT_TAGS) if drops.get(t) is None]
        return _check(name, [POS_TEST], None, f"no score drop for {POS_TEST} at "
                                              f"{', '.join(missing)}", values)
    worse = [tag for tag, drop in compared_drops.items() if not mild + tolerance < drop]
    reason = None
    if worse:
        reason = f"DET drop is not smaller than the drop at {', '.join(worse)}"
    elif len(compared) < len(CONTENT_TAGS):
        reason = "compared with " + ", ".join(compared) + " only"
    return _check(name, [POS_TEST], not worse, reason, values)


def applied_drops(cells: Iterable[Any], gold_scores: RowScores | None,
                  gold_corpus: float | None) -> dict[tuple[str, str], float | None]:
    """Mean (gold - impaired) score per (test, level) over the changed rows of all seeds.

    ``cells`` are the runner's scored cells (``test, level, applied, scores, corpus_score,
    error``; per-row values as lists or numpy arrays); a level whose cells failed, or that
    changed no row, gets None.
    """
    diffs: dict[tuple[str, str], list[Any]] = defaultdict(list)
    failed: set[tuple[str, str]] = set()
    for cell in cells:
        key = (cell.test, str(cell.level))
        if cell.error:
            failed.add(key)
        elif cell.scores is None or gold_scores is None:
            diffs[key].append([gold_corpus - cell.corpus_score])
        else:
            changed = np.asarray(cell.applied, dtype=bool)
            diffs[key].append(np.asarray(gold_scores, dtype=float)[changed]
                              - np.asarray(cell.scores, dtype=float)[changed])
        diffs.setdefault(key, [])
    return {key: None if key in failed or not sum(map(len, parts)) else
            fmean(float(d) for part in parts for d in part)
            for key, parts in diffs.items()}


def check_expectations(tests: Mapping[str, Mapping[str, Any]], drops: Drops,
                       tolerance: float = TOLERANCE) -> list[dict[str, Any]]:
    """Every expectation whose test is in the run (``tests``: a metric's results.json tests).

    Returns an empty list when the run has none of the examination tests.
    """
    checks = [decreasing_with_intensity(test, tests[test], tolerance)
              for test in INTENSITY_TESTS if test in tests]
    if NEGATION_TEST in tests:
        levels = sorted((level for test, level in drops if test == NEGATION_YARDSTICK),
                        key=intensity)
        label = f"{NEGATION_YARDSTICK} @ {levels[0]}" if levels else NEGATION_YARDSTICK
        checks.append(negation_drops_sharply(
            drops.get((NEGATION_TEST, "-")),
            drops.get((NEGATION_YARDSTICK, levels[0])) if levels else None, tolerance, label))
    if POS_TEST in tests:
        checks.append(det_drop_hurts_least(
            {tag: drops.get((POS_TEST, tag)) for tag in (MILD_TAG, *CONTENT_TAGS)}, tolerance))
    return checks
