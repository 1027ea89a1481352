"""The judge: how a test's scores become a verdict (PROTOCOLS.md §1) and the per-sample view (§4).

Every way of judging -- ``blindspot run`` and the ``blindspot`` evaluate module (through
:mod:`blindspot.runner.curves`), and ``blindspot_accuracy`` (:func:`judge_rows`) -- goes through
this module: the verdict rules, the curve judgement, the per-row statistics and one NaN policy.
It sits below the runner and the protocols and imports neither.

A test is judged by the verdict rule its perturbation declares (``verdict_rule``, a name in
:data:`RULES`):

- ``monotone_decrease`` (the default, the curves of the fluency and consistency tests): a metric
  passes only when its score strictly decreases as the noise ratio grows, gold (noise ratio 0)
  first, judging the points below the noise cap.
- ``below_gold`` (copy-source, injection, repetition, frequent n-gram): every level must score
  below gold, whatever its noise ratio ("a metric fails a test when the noised set is not scored
  below the gold set", blind-spots paper App. D, §5.2, App. E, §5.3).
- ``per_position_drop`` (positioned error, §5.1): an error at every position must cost a
  significant drop -- below gold beyond the noise (the seeds' spread and the rows' bootstrap
  interval); MAUVE-GPT2 fails because an error at the start costs no significant drop.
- ``not_above_gold`` (an LLM judge's verbosity test): what adds nothing must gain nothing --
  no level may score above gold by more than the tolerance.

Every verdict names the comparison that decided it (``explanation``); a fail says whether it is
``within_noise``: every failing comparison lies inside the seeds' spread or its paired bootstrap
interval over rows contains 0 (more exactly: holds both a drop beyond the tolerance and no such
drop), so more rows or seeds could change it.

NaN policy (one for every entry point): a per-row score that is NaN (or missing) makes the test an
``error`` whose message names the rows (:func:`nan_problem`), never a pass, because a NaN compares
False with everything and would otherwise let a broken metric pass silently; NaN on the gold rows
names them "on the gold rows". Per-seed values given straight to :func:`judge_curve` that are NaN
are left out and counted, and a point with only NaN values leaves the test undecided.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats

from blindspot.defaults import BOOTSTRAP_SEED, N_BOOT, NOISE_CAP, TOLERANCE
from blindspot.registry import Registry, snake

#: per-row scores: a list or a numpy array
RowScores = Sequence[float] | np.ndarray

DEFAULT_RULE = "monotone_decrease"  # the verdict rule of a test that names none
GOLD = "gold"  # the gold point's level

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


def judge_curve(points: Sequence[Point], gold: float | Sequence[float],
                tolerance: float = TOLERANCE, noise_cap: float = NOISE_CAP,
                rule: str = DEFAULT_RULE, rows: Mapping[Any, RowScores] | None = None,
                bootstrap_seed: int = BOOTSTRAP_SEED, n_boot: int = N_BOOT,
                name: str | None = None) -> dict[str, Any]:
    """Judge one test's points by its verdict rule (:data:`RULES`), and say why.

    Args:
        points: ``(level, noise_ratio, scores_per_seed)`` for every noised level.
        gold: the gold score, or one gold score per seed.
        tolerance: a score must be lower by more than this to count as lower.
        noise_cap: a rule that judges a curve (``monotone_decrease``) leaves out the points with
            a noise ratio >= the cap; the rules that compare each level with gold judge all.
        rule: the name of the test's rule (a perturbation's ``verdict_rule``).
        rows: per-row scores (mean over seeds) by level, gold under ``"gold"``, for the paired
            bootstrap of the deciding comparison; None (corpus-level metrics): seeds only.
        bootstrap_seed, n_boot: the bootstrap's seed and resamples (the same seed, the same
            numbers).
        name: what to call the noised text when the test has no level (``"-"``).
    Returns:
        ``passed`` (True, False, or None when the test cannot be judged, with ``reason``),
        ``points`` (gold first, sorted by noise ratio), ``excluded`` (levels over the cap),
        ``rule``, ``explanation`` (one sentence naming the deciding comparison; None when
        undecided), ``within_noise`` (for a fail: whether more rows or seeds could change it),
        ``deciding`` (that comparison and its noise) and ``headline`` (the index of the point
        whose change the summary shows).
    """
    chosen = get_rule(rule)
    gold_scores = [gold] if isinstance(gold, (int, float)) else list(gold)
    gold_kept, _ = _finite(gold_scores)
    gold_mean = float(np.mean(gold_kept)) if gold_kept else None
    ordered = sorted(points, key=lambda p: float(p[1]))  # noise ratio, not level order
    cap = noise_cap if chosen.capped else math.inf
    kept = [p for p in ordered if float(p[1]) < cap]
    excluded = [p[0] for p in ordered if float(p[1]) >= cap]
    summaries = [summarise_point(GOLD, 0.0, gold_scores, gold_mean)]
    summaries += [summarise_point(level, ratio, scores, gold_mean) for level, ratio, scores in kept]
    result: dict[str, Any] = {"passed": None, "reason": None, "points": summaries,
                              "excluded": excluded, "rule": chosen.name, "explanation": None,
                              "within_noise": None, "deciding": None, "headline": None}
    if gold_mean is None:
        result["reason"] = "the gold score is NaN or missing"
    elif not kept:
        result["reason"] = f"no noised point has a noise ratio below the cap {noise_cap}"
    elif any(s["score_mean"] is None for s in summaries):
        result["reason"] = "a noised point has only NaN scores"
    else:
        evidence = Evidence(summaries, rows, tolerance, bootstrap_seed, n_boot, name)
        ruling = chosen.decide(evidence)
        result.update(passed=ruling.passed, explanation=chosen.explain(evidence, ruling),
                      headline=ruling.headline,
                      deciding=evidence.describe(ruling.deciding),
                      within_noise=None if ruling.passed else all(
                          evidence.noise(c).within for c in ruling.failing))
    return result


# -- verdict rules --------------------------------------------------------------------------------

@dataclass(frozen=True)
class Comparison:
    """The score at judged point ``end`` against the score at point ``start`` (gold = 0)."""

    start: int
    end: int


@dataclass(frozen=True)
class Noise:
    """How firm a comparison is: the seeds' spread (the two points' population stds added) and
    the paired 95 % bootstrap interval over rows of its difference (None without row scores)."""

    change: float
    spread: float
    ci_low: float | None
    ci_high: float | None
    tolerance: float

    @property
    def within(self) -> bool:
        """Whether more rows or seeds could change the comparison: ``change ± spread`` or the
        bootstrap interval holds both a drop (below ``-tolerance``, where a comparison counts
        as lower) and no drop -- the interval contains 0, up to the tolerance. An interval of
        identical rows ([0, 0]) does not: more rows would not move it."""
        def straddles(low: float, high: float) -> bool:
            return low < -self.tolerance <= high

        by_seeds = self.spread > 0 and straddles(self.change - self.spread,
                                                 self.change + self.spread)
        by_rows = (self.ci_low is not None and self.ci_high is not None
                   and straddles(self.ci_low, self.ci_high))
        return by_seeds or by_rows


@dataclass(frozen=True)
class Ruling:
    """A rule's verdict: the comparison its explanation names, every failing comparison (the
    verdict is within noise only if they all are), and the point the summary shows."""

    passed: bool
    deciding: Comparison
    failing: tuple[Comparison, ...]
    headline: int


class Evidence:
    """The judged points (gold first) of one test and what a rule needs to read them."""

    def __init__(self, points: list[dict[str, Any]], rows: Mapping[Any, RowScores] | None,
                 tolerance: float, seed: int, n_boot: int, name: str | None) -> None:
        self.points, self.rows, self.tolerance = points, rows, tolerance
        self.seed, self.n_boot, self.name = seed, n_boot, name
        self.gold = float(points[0]["score_mean"])
        self._noise: dict[Comparison, Noise] = {}

    @property
    def levels(self) -> range:
        """The indices of the noised points."""
        return range(1, len(self.points))

    def change(self, c: Comparison) -> float:
        """score(end) - score(start): negative is a drop."""
        return self.points[c.end]["score_mean"] - self.points[c.start]["score_mean"]

    def lower(self, c: Comparison) -> bool:
        """Whether the end point scores below the start by more than the tolerance."""
        return self.change(c) < -self.tolerance

    def noise(self, c: Comparison) -> Noise:
        if c not in self._noise:
            start, end = self.points[c.start], self.points[c.end]
            spread = (start["score_std"] or 0.0) + (end["score_std"] or 0.0)
            low = high = None
            if self.rows is not None:
                diffs = (np.asarray(self.rows[end["level"]], dtype=float)
                         - np.asarray(self.rows[start["level"]], dtype=float))
                diffs = diffs[~np.isnan(diffs)]
                if len(diffs):
                    low, high = _bootstrap_ci(diffs, self.seed, self.n_boot)
            self._noise[c] = Noise(self.change(c), spread, low, high, self.tolerance)
        return self._noise[c]

    def amount(self, value: float, of_gold: str = "") -> str:
        """The size of a change as a percentage of the gold score (``of_gold`` after it), or
        absolute when the gold score is 0."""
        size = abs(value)
        if self.gold == 0:
            return f"{size:.4g} (absolute: the gold score is 0)"
        relative = size / abs(self.gold) * 100
        shown = f"{relative:.1f}" if relative >= 0.1 or relative == 0 else f"{relative:.2g}"
        return f"{shown}%{of_gold}"

    def label(self, index: int) -> str:
        """``gold``, ``level 0.2``, or for a test without levels its name."""
        level = str(self.points[index]["level"])
        if index == 0:
            return GOLD
        if level == "-":
            return self.name or "the noised text"
        return f"level {level}"

    def describe(self, c: Comparison) -> dict[str, Any]:
        """The deciding comparison as results.json keeps it."""
        noise = self.noise(c)
        relative = None if self.gold == 0 else noise.change / abs(self.gold) * 100
        return {"from": str(self.points[c.start]["level"]),
                "to": str(self.points[c.end]["level"]), "change": noise.change,
                "relative_change": relative, "seeds_spread": noise.spread,
                "ci_low": noise.ci_low, "ci_high": noise.ci_high}


@dataclass(frozen=True)
class VerdictRule:
    """A registered way to judge a test (a perturbation names one in ``verdict_rule``)."""

    name: str
    description: str  # one line for the report's legend
    capped: bool  # whether the noise cap leaves points out
    decide: Callable[[Evidence], Ruling]
    explain: Callable[[Evidence, Ruling], str]


#: the verdict rules by name (a test declares one as ``verdict_rule``); they register below
RULES: Registry[VerdictRule] = Registry("verdict rule", normalise=snake)


def register_rule(rule: VerdictRule) -> VerdictRule:
    """Add ``rule`` under its name (a name can be registered once)."""
    return RULES.register(rule.name, rule)


def get_rule(name: str) -> VerdictRule:
    """The rule ``name``; an unknown one is a ValueError naming the registered ones."""
    return RULES.get(name)


def _steps(evidence: Evidence) -> list[Comparison]:
    return [Comparison(i - 1, i) for i in evidence.levels]


def _versus_gold(evidence: Evidence) -> list[Comparison]:
    return [Comparison(0, i) for i in evidence.levels]


def _ruling(evidence: Evidence, compared: list[Comparison],
            failing: list[Comparison], headline: int | None = None) -> Ruling:
    """Fail: the failing comparison whose end scores highest against its start; pass: the
    smallest drop. The headline is that comparison's end unless given."""
    pool = failing or compared
    deciding = max(pool, key=lambda c: (evidence.change(c), -c.end))
    return Ruling(not failing, deciding, tuple(failing),
                  deciding.end if headline is None else headline)


def _decide_monotone(evidence: Evidence) -> Ruling:
    steps = _steps(evidence)
    failing = [c for c in steps if not evidence.lower(c)]
    return _ruling(evidence, steps, failing, headline=len(evidence.points) - 1)


def _moved(evidence: Evidence, c: Comparison) -> str:
    change = evidence.change(c)
    if change > evidence.tolerance:
        return f"rises {evidence.amount(change, ' of gold')}"
    return "stays level (within the tolerance)"


def _explain_monotone(evidence: Evidence, ruling: Ruling) -> str:
    c = ruling.deciding
    where = f"from {evidence.label(c.start)} to {evidence.label(c.end)}"
    if ruling.passed:
        return (f"drops at every step; smallest drop "
                f"{evidence.amount(evidence.change(c), ' of gold')} {where}")
    others = len(ruling.failing) - 1
    more = {0: "", 1: "; 1 other step does not drop either"}.get(
        others, f"; {others} other steps do not drop either")
    return f"{_moved(evidence, c)} {where}{more}"


def _decide_below_gold(evidence: Evidence) -> Ruling:
    compared = _versus_gold(evidence)
    return _ruling(evidence, compared, [c for c in compared if not evidence.lower(c)])


def _explain_versus_gold(evidence: Evidence, ruling: Ruling, every: str) -> str:
    c = ruling.deciding
    change = evidence.change(c)
    if ruling.passed and len(evidence.levels) == 1:
        return f"{evidence.label(c.end)} scores {evidence.amount(change)} below gold"
    if ruling.passed:
        return (f"{every}; the closest, {evidence.label(c.end)}, scores "
                f"{evidence.amount(change)} below gold")
    others = len(ruling.failing) - 1
    more = {0: "", 1: "; 1 other level fails too"}.get(others,
                                                        f"; {others} other levels fail too")
    if change > evidence.tolerance:
        where = f"scores {evidence.amount(change)} above gold"
    elif not evidence.lower(c):
        where = "scores the same as gold (within the tolerance)"
    else:  # lower, but not beyond the noise (per_position_drop)
        where = f"scores only {evidence.amount(change)} below gold, a drop within the noise"
    return f"{evidence.label(c.end)} {where}{more}"


def _decide_position_drop(evidence: Evidence) -> Ruling:
    compared = _versus_gold(evidence)
    failing = [c for c in compared if not evidence.lower(c) or evidence.noise(c).within]
    return _ruling(evidence, compared, failing)


register_rule(VerdictRule(
    "monotone_decrease",
    "the score strictly decreases as the noise ratio grows, gold first, each step by more than "
    "the tolerance (only points below the noise cap)", True, _decide_monotone, _explain_monotone))
register_rule(VerdictRule(
    "below_gold",
    "every level scores below gold by more than the tolerance, whatever its noise ratio", False,
    _decide_below_gold,
    lambda e, r: _explain_versus_gold(e, r, "every level scores below gold")))
register_rule(VerdictRule(
    "per_position_drop",
    "an error at every position lowers the score significantly: below gold by more than the "
    "tolerance and beyond the noise (the seeds' spread and the rows' bootstrap interval)",
    False, _decide_position_drop,
    lambda e, r: _explain_versus_gold(e, r, "every position drops significantly")))


def _decide_not_above_gold(evidence: Evidence) -> Ruling:
    compared = _versus_gold(evidence)
    failing = [c for c in compared if evidence.change(c) > evidence.tolerance]
    return _ruling(evidence, compared, failing)


def _explain_not_above_gold(evidence: Evidence, ruling: Ruling) -> str:
    c = ruling.deciding
    change = evidence.change(c)
    side = "above" if change > 0 else "below"
    if ruling.passed:
        return (f"no level scores above gold; the highest, {evidence.label(c.end)}, scores "
                f"{evidence.amount(change)} {side} gold")
    others = len(ruling.failing) - 1
    more = {0: "", 1: "; 1 other level does too"}.get(others, f"; {others} other levels do too")
    return f"{evidence.label(c.end)} scores {evidence.amount(change)} above gold{more}"


register_rule(VerdictRule(
    "not_above_gold",
    "no level scores above gold by more than the tolerance (what adds nothing must gain "
    "nothing: an LLM judge's verbosity test)", False, _decide_not_above_gold,
    _explain_not_above_gold))


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


def per_sample(gold_scores: RowScores, noised_scores: RowScores,
               seed: int = BOOTSTRAP_SEED,
               n_boot: int = N_BOOT) -> dict[str, Any]:
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


# -- the NaN policy -------------------------------------------------------------------------------

def nan_rows(scores: Sequence[float | None] | np.ndarray) -> list[int]:
    """The positions of the NaN (or missing) scores."""
    return np.flatnonzero(np.isnan(np.asarray(scores, dtype=float))).tolist()


def nan_message(first_ids: Sequence[Any], bad: int, rows: int) -> str:
    """The message of ``bad`` NaN scores out of ``rows``, naming (up to) the first five ids."""
    shown = ", ".join(str(i) for i in first_ids[:5]) + (", ..." if bad > 5 else "")
    return f"the metric returned NaN on {bad} of {rows} rows (ids {shown})"


def nan_error(scores: Sequence[float | None] | np.ndarray, ids: Sequence[Any]) -> str | None:
    """A message naming the rows whose score is NaN, or None when every score is a number."""
    bad = nan_rows(scores)
    return nan_message([ids[i] for i in bad[:5]], len(bad), len(scores)) if bad else None


def gold_problem(message: str) -> str:
    """The error of a metric that failed (or scored NaN) on the gold rows."""
    return f"on the gold rows: {message}"


def cell_problem(level: Any, seed: Any, message: str) -> str:
    """The error of a test one of whose (level, seed) cells failed or scored NaN."""
    return f"level {level}, seed {seed}: {message}"


def status_of(passed: bool | None) -> str:
    """A judged test's status: ``pass``, ``fail``, or ``undecided`` (``passed`` None)."""
    return "undecided" if passed is None else ("pass" if passed else "fail")


# -- judging rows of scores (the blindspot_accuracy module) ---------------------------------------

Row = tuple[Hashable, float, Any, float, float]


def rows_problem(rows: Sequence[Row], ids: Sequence[Any]) -> str | None:
    """The NaN policy on a test's rows ``(level, noise_ratio, seed, noised, gold)``: the error
    ``blindspot run`` reports for the same scores (gold rows first, then the first (level, seed)
    cell in row order with a NaN score), or None."""
    gold_error = nan_error([r[4] for r in rows], ids)
    if gold_error:
        return gold_problem(gold_error)
    cells: dict[tuple[Any, Any], list[int]] = defaultdict(list)
    for i, (level, _, seed, _, _) in enumerate(rows):
        cells[(level, seed)].append(i)
    for (level, seed), members in cells.items():
        error = nan_error([rows[i][3] for i in members], [ids[i] for i in members])
        if error:
            return cell_problem(level, seed, error)
    return None


def judge_rows(rows: Sequence[Row], tolerance: float = TOLERANCE, noise_cap: float = NOISE_CAP,
               bootstrap_seed: int = BOOTSTRAP_SEED, rule: str = DEFAULT_RULE,
               name: str | None = None, ids: Sequence[Any] | None = None) -> dict[str, Any]:
    """Verdict of one test from its rows ``(level, noise_ratio, seed, noised, gold)``.

    A level's score per seed is the mean over its rows, its noise ratio the mean over all its
    rows; the curve is judged by :func:`judge_curve` with ``rule`` and every level gets the
    per-sample view. The rows carry no row id to pair levels by, so whether a fail is within
    noise is told by the seeds' spread alone. A NaN score makes the test an ``error`` naming the
    rows (``ids``, default their positions), as ``blindspot run`` does (:func:`rows_problem`).
    """
    problem = rows_problem(rows, list(range(len(rows))) if ids is None else ids)
    if problem is not None:
        return {"status": "error", "error": problem, "passed": None, "reason": None,
                "points": [], "excluded": [], "rule": get_rule(rule).name, "explanation": None,
                "within_noise": None, "deciding": None, "headline": None, "per_sample": {}}
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
        scores = [float(np.mean(by_point[(level, s)])) for s in seeds if (level, s) in by_point]
        points.append((level, ratio, scores))
    verdict = judge_curve(points, [float(np.mean(gold_by_seed[s])) for s in seeds],
                          tolerance=tolerance, noise_cap=noise_cap, rule=rule, name=name)
    verdict = {"status": status_of(verdict["passed"]), "error": None, **verdict}
    for point in verdict["points"][1:]:
        point["n"] = len(by_level[point["level"]])
        point["n_nan_rows"] = 0  # a NaN row makes the test an error (above)
    verdict["per_sample"] = {
        level: per_sample([r[2] for r in level_rows], [r[1] for r in level_rows],
                          seed=bootstrap_seed)
        for level, level_rows in by_level.items()}
    return verdict
