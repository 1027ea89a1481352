"""The judge's own blind spots that no text perturbation shows: position, rubric, flakiness,
panels.

The ``judge`` category's text tests (``judge_verbosity``) perturb the text the judge reads, like
every other test. These audits vary the *judge* instead, on the same rows, and each is
declared here (:data:`AUDITS`: its name, what it asks, its verdict rule and its tolerance):

* ``position``: a pairwise judge (a template naming ``{second}``, such as the shipped
  ``pairwise``) sees (gold, perturbed) and (perturbed, gold). It reports the **flip rate** (the
  share of pairs whose preferred text changes with the order), the share of pairs that prefer
  the gold in both orders, and the **ties** (a weighted judge that puts the same probability on
  both answers prefers neither; a tie is never counted as a preference). Rule
  ``order_invariant``: the flip rate is at most the tolerance.
* ``rubric``: the same judge with its rubric as written, in reverse order and reworded (the
  template's ``reworded`` lines) grades the same rows. It reports the **rubric sensitivity** (the
  largest mean absolute change of a row's score from the rubric as written) and each variant's
  exact grade agreement. Rule ``rubric_invariant``: the sensitivity is at most the tolerance
  (in grade points).
* ``flakiness``: the judge samples (``mode=sample``) ``repeats`` times, one seed per repeat,
  and a text test is judged on each repeat's scores by that test's own verdict rule. It reports
  the **stability** (the share of repeats whose verdict is the majority's; a repeat whose reply
  held no grade gives no verdict, and with no verdict at all there is no stability), the share
  of rows whose grade never changes, and the test's verdict over the repeats: ``pass`` only when
  every repeat passes, ``fail`` when none does, else ``flaky`` (a flaky judge's pass is no
  pass). Rule ``stable_verdict``: every repeat gives the same verdict.
* ``panel``: several judges (models, or variants of one) grade the same rows; each row's panel
  score (mean, median, min) and every judge's agreement with every other (the N x N matrix:
  exact, within one grade, Cohen's kappa). Rule ``panel_agrees``: every pair of judges gives the
  same grade on at least ``1 - tolerance`` of the rows, so a verdict that depends on which judge
  was picked shows.

A judge that gives every text one grade is **uninformative**: its agreement is perfect and its
verdicts stable, and neither says anything. An audit that finds it so carries the flag and does
not pass; Cohen's kappa of two such judges is undefined (NaN, ``null`` in results.json), not 1.

Each audit returns an :class:`AuditResult` (``passed``, the figures, one sentence saying why,
the flag); the judge's calls go through :class:`~blindspot.scorers.llm_judge.LlmJudge`, so the
call budget and both backends apply unchanged.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from blindspot.judges.agreement import agreement, agreement_matrix, constant_grade, panel
from blindspot.judges.grades import NoGradeError
from blindspot.judging import judge_curve
from blindspot.perturbations.perturbation import REGISTRY
from blindspot.registry import Registry
from blindspot.scoring.engine import score_rows
from blindspot.scoring.scorer import get_scorer

#: option values a judge is built from (``llm_judge``'s keyword arguments)
JudgeOptions = Mapping[str, Any]


@dataclass(frozen=True)
class AuditSpec:
    """One audit's declaration: what ``blindspot judge-audit`` lists and checks against."""

    name: str
    asks: str
    rule: str
    rule_text: str
    tolerance: float  #: the default tolerance of the rule


AUDITS: Registry[AuditSpec] = Registry("judge audit")
for _spec in (
    AuditSpec("position", "a pairwise judge sees (gold, perturbed) and (perturbed, gold)",
              "order_invariant", "the share of pairs whose preference flips with the order is "
              "at most the tolerance", 0.1),
    AuditSpec("rubric", "the rubric as written, reversed and reworded grades the same rows",
              "rubric_invariant", "no rubric variant moves the mean absolute score by more "
              "than the tolerance (grade points)", 0.25),
    AuditSpec("panel", "several judges (models, or variants of one) grade the same rows",
              "panel_agrees", "every pair of judges gives the same grade on all but the "
              "tolerance's share of the rows", 0.2),
    AuditSpec("flakiness", "a sampled judge judges a text test once per seed",
              "stable_verdict", "the text test's verdict is the same on every repeat (the test "
              "counts as passed only when every repeat passes)", 0.0),
):
    AUDITS.register(_spec.name, _spec)


@dataclass
class AuditResult:
    """An audit's verdict, its figures (JSON-ready) and why."""

    audit: str
    rule: str
    tolerance: float
    passed: bool
    explanation: str
    figures: dict[str, Any] = field(default_factory=dict)
    #: ``uninformative: ...`` when the judge gave every text one grade (the audit then fails)
    flag: str | None = None


def _judge(options: JudgeOptions, **overrides: Any) -> Any:
    return get_scorer("llm_judge", **{**options, **overrides})


def _uninformative(values: Sequence[float], what: str = "grade") -> str | None:
    """The flag of a judge that gave every text one grade (or one score: ``what``), so that
    what the audit compares says nothing, or None."""
    value = constant_grade(values)
    return None if value is None else (
        f"uninformative: the judge gave all {len(values)} texts the {what} {value:g}, so this "
        "audit's figures say nothing about it")


def _flagged(flag: str | None, passed: bool, why: str) -> tuple[bool, str]:
    """An audit of an uninformative judge does not pass: its figures would read as perfect."""
    return (False, f"{flag}; {why}") if flag else (passed, why)


def _share(values: Sequence[bool]) -> float:
    return float(np.mean(values)) if values else math.nan


# -- position ---------------------------------------------------------------------------------------

def position(options: JudgeOptions, golds: Sequence[str], perturbed: Sequence[str],
             sources: Sequence[str | None] | None = None, tolerance: float | None = None
             ) -> AuditResult:
    """The position audit of a pairwise judge (``options`` name a pairwise template)."""
    spec = AUDITS.get("position")
    tol = spec.tolerance if tolerance is None else tolerance
    if not golds:
        raise ValueError("the position audit has no pair: the test changed none of the rows "
                         "(give another --test or --level, or more --rows)")
    judge = _judge(options)
    judge.reserve(2 * len(golds))  # both orders, refused before any call
    first = [_preferred(r) for r in judge.prefer(golds, perturbed, sources)]
    second = [_preferred(r) for r in judge.prefer(perturbed, golds, sources)]
    # which text each order preferred: "gold", "perturbed" or "tie"
    in_first = [{1: "gold", 2: "perturbed"}.get(p, "tie") for p in first]
    in_second = [{1: "perturbed", 2: "gold"}.get(p, "tie") for p in second]
    pairs = list(zip(in_first, in_second, strict=True))
    ties = _share(["tie" in pair for pair in pairs])
    flip_rate = _share([a != b and "tie" not in (a, b) for a, b in pairs])
    gold_both = _share([pair == ("gold", "gold") for pair in pairs])
    decided = [p for p in first + second if p != 0]
    first_wins = _share([p == 1 for p in decided])
    flag = (f"uninformative: every one of the {len(first + second)} calls was a tie, so the "
            "judge prefers no answer" if not decided else None)
    passed, why = _flagged(flag, flip_rate <= tol, (
        f"{flip_rate:.0%} of {len(pairs)} pairs flip with the order "
        f"({'at most' if flip_rate <= tol else 'above'} the tolerance {tol:.0%}); "
        f"{gold_both:.0%} prefer the gold in both orders, {ties:.0%} are a tie in one order or "
        f"both, and the first answer wins {_percent(first_wins)} of the calls that preferred "
        "one"))
    return AuditResult("position", spec.rule, tol, passed, why,
                       {"pairs": len(pairs), "flip_rate": flip_rate, "gold_both": gold_both,
                        "ties": ties, "first_wins": first_wins}, flag)


def _preferred(reply: Any) -> int:
    """Which answer a pairwise reply prefers: 1, 2, or 0 for a tie (a weighted judge that
    puts the same probability on both answers; its argmax would say 1 by default)."""
    return 0 if math.isclose(reply.score, 1.5, abs_tol=1e-9) else int(reply.grade)


def _percent(value: float) -> str:
    return "-" if math.isnan(value) else f"{value:.0%}"


# -- rubric order and wording ---------------------------------------------------------------------

def rubric(options: JudgeOptions, texts: Sequence[str],
           sources: Sequence[str | None] | None = None,
           references: Sequence[Sequence[str]] | None = None,
           tolerance: float | None = None) -> AuditResult:
    """The rubric audit: the judge's scores of ``texts`` with its rubric shown three ways."""
    spec = AUDITS.get("rubric")
    tol = spec.tolerance if tolerance is None else tolerance
    scored = {variant: score_rows(_judge(options, rubric=variant), list(texts),
                                  references=references, sources=sources, cache=None)
              for variant in ("as_written", "reversed", "reworded")}
    base = np.array(scored["as_written"]["score"], dtype=float)
    change = {v: float(np.mean(np.abs(np.array(s["score"], dtype=float) - base)))
              for v, s in scored.items() if v != "as_written"}
    exact = {v: agreement(scored["as_written"]["grade"], s["grade"]).exact
             for v, s in scored.items() if v != "as_written"}
    worst = max(change, key=lambda v: change[v])
    sensitivity = change[worst]
    # the rule reads the scores (a weighted judge's vary where its most probable grade does not)
    flag = _uninformative([x for s in scored.values() for x in s["score"]], "score")
    passed, why = _flagged(flag, sensitivity <= tol, (
        f"the {worst} rubric moves a row's score by {sensitivity:.3f} grade points on "
        f"average ({'at most' if sensitivity <= tol else 'above'} the tolerance {tol}); the "
        "grades agree " + ", ".join(f"{exact[v]:.0%} with the {v} rubric" for v in exact)))
    return AuditResult("rubric", spec.rule, tol, passed, why,
                       {"rows": len(base), "sensitivity": sensitivity, "mean_abs_change": change,
                        "exact_agreement": exact}, flag)


# -- panels ---------------------------------------------------------------------------------------

def judge_panel(judges: Mapping[str, JudgeOptions], texts: Sequence[str],
                sources: Sequence[str | None] | None = None,
                references: Sequence[Sequence[str]] | None = None,
                tolerance: float | None = None) -> AuditResult:
    """Several judges (name -> options) on the same rows: each row's panel score (mean, median,
    min of the judges' scores) and every judge's agreement with every other (the N x N
    matrix)."""
    spec = AUDITS.get("panel")
    tol = spec.tolerance if tolerance is None else tolerance
    if len(judges) < 2:
        raise ValueError(f"a panel needs two or more judges, got {len(judges)}")
    scored = {name: score_rows(_judge(opts), list(texts), references=references,
                               sources=sources, cache=None) for name, opts in judges.items()}
    scores = panel({name: s["score"] for name, s in scored.items()})
    matrix = agreement_matrix({name: s["grade"] for name, s in scored.items()})
    pairs = [(a, b) for i, a in enumerate(scored) for b in list(scored)[i + 1:]]
    a, b = min(pairs, key=lambda pair: matrix[pair[0]][pair[1]].exact)
    worst = matrix[a][b]
    kappa = "undefined" if math.isnan(worst.kappa) else f"{worst.kappa:.2f}"
    flag = _uninformative([g for s in scored.values() for g in s["grade"]])
    passed, why = _flagged(flag, worst.exact >= 1 - tol, (
        f"{b} and {a} give the same grade on {worst.exact:.0%} of {len(texts)} rows (kappa "
        f"{kappa}), the least of the {len(pairs)} pairs; the rule asks at least {1 - tol:.0%} "
        "of every pair"))
    return AuditResult("panel", spec.rule, tol, passed, why,
                       {"rows": len(texts), "judges": list(scored),
                        "panel": {"mean": scores.mean, "median": scores.median,
                                  "min": scores.min},
                        "agreement": {x: {y: {"exact": m.exact, "within_1": m.within,
                                              "kappa": m.kappa} for y, m in row.items()}
                                      for x, row in matrix.items()}}, flag)


# -- flakiness ------------------------------------------------------------------------------------

def flakiness(options: JudgeOptions, golds: Sequence[str], test: str, level: Any,
              repeats: int = 5, sources: Sequence[str | None] | None = None,
              task: str = "summarization") -> AuditResult:
    """The flakiness audit: ``test`` at ``level`` judged once per sampled repeat."""
    if repeats < 2:
        raise ValueError(f"the flakiness audit needs 2 or more repeats, got {repeats}")
    spec = AUDITS.get("flakiness")
    perturbation = REGISTRY.get(test)(task=task)
    out = perturbation.apply_rows(list(golds), list(range(len(golds))), level, 0)
    kept = [i for i, ok in enumerate(out["applied"]) if ok]
    gold_rows = [golds[i] for i in kept]
    noised = [out["perturbed"][i] for i in kept]
    srcs = [sources[i] for i in kept] if sources is not None else None
    noise = float(np.mean([out["noise_ratio"][i] for i in kept]))
    verdicts: list[bool | None] = []
    grades: list[list[float]] = []
    no_grade = 0
    for seed in range(repeats):
        scorer = _judge(options, mode="sample", seed=seed)
        try:
            scores = score_rows(scorer, gold_rows + noised,
                                sources=srcs + srcs if srcs else None, cache=None)
        except NoGradeError:  # a sampled reply with no grade: this repeat gives no verdict
            no_grade += 1
            verdicts.append(None)
            continue
        gold, pert = scores["score"][:len(kept)], scores["score"][len(kept):]
        ruling = judge_curve([(level, noise, [float(np.mean(pert))])], float(np.mean(gold)),
                             rule=perturbation.verdict_rule)
        verdicts.append(ruling["passed"])
        grades.append(scores["grade"])
    graded = [v for v in verdicts if v is not None]
    majority = max(dict.fromkeys(graded), key=graded.count) if graded else None
    # the share of repeats with the majority's verdict: a repeat with no grade gives none (it
    # never agrees), and no graded repeat at all is no stability (never "100%")
    stability = _share([v is not None and v == majority for v in verdicts]) if graded \
        else math.nan
    same_grade = _share([len({g[row] for g in grades}) == 1 for row in range(len(grades[0]))]) \
        if len(grades) > 1 else math.nan
    passes = sum(v is True for v in verdicts)
    test_verdict = ("no verdict" if not graded else "pass" if passes == repeats
                    else "fail" if passes == 0 else "flaky")
    flag = _uninformative([g for repeat in grades for g in repeat]) if len(grades) > 1 else None
    kept_grade = (f"{same_grade:.0%} of the rows keep their grade on every graded repeat"
                  if len(grades) > 1 else f"{len(grades)} repeat(s) graded every row, too few "
                  "to compare grades")
    shown = "none: no repeat gave a verdict" if not graded else f"{stability:.0%}"
    passed, why = _flagged(flag, stability == 1.0, (
        f"{test} at level {level} passes on {passes} of {repeats} sampled repeats "
        f"(stability {shown}, the test's verdict: {test_verdict}); {kept_grade}"
        + (f"; {no_grade} of the repeats had a reply with no grade, which gives no verdict"
           if no_grade else "")
        + ("; a pass that some repeats do not repeat is no pass"
           if test_verdict == "flaky" else "")))
    return AuditResult("flakiness", spec.rule, spec.tolerance, passed, why,
                       {"test": test, "level": level, "repeats": repeats, "rows": len(kept),
                        "verdicts": verdicts, "no_grade_repeats": no_grade,
                        "test_verdict": test_verdict,
                        "stability": stability, "grade_stability": same_grade}, flag)
