"""The judge's own blind spots that no text perturbation shows: position, rubric, flakiness,
panels.

The ``judge`` category's text tests (``judge_verbosity``) perturb the text the judge reads, like
every other test. These audits vary the *judge* instead, on the same rows, and each is
declared here (:data:`AUDITS`: its name, what it asks, its verdict rule and its tolerance):

* ``position``: a pairwise judge (a template naming ``{second}``, such as the shipped
  ``pairwise``) sees (gold, perturbed) and (perturbed, gold). It reports the **flip rate** (the
  share of pairs whose preferred text changes with the order) and the share of pairs that prefer
  the gold in both orders. Rule ``order_invariant``: the flip rate is at most the tolerance.
* ``rubric``: the same judge with its rubric as written, in reverse order and reworded (the
  template's ``reworded`` lines) grades the same rows. It reports the **rubric sensitivity** (the
  largest mean absolute change of a row's score from the rubric as written) and each variant's
  exact grade agreement. Rule ``rubric_invariant``: the sensitivity is at most the tolerance
  (in grade points).
* ``flakiness``: the judge samples (``mode=sample``) ``repeats`` times, one seed per repeat,
  and a text test (``judge_verbosity`` by default) is judged on each repeat's scores by that
  test's own verdict rule. It reports the **stability** (the share of repeats whose verdict is
  the majority's), the share of rows whose grade never changes, and the test's verdict over the
  repeats: ``pass`` only when every repeat passes, ``fail`` when none does, else ``flaky`` (a
  flaky judge's pass is no pass). Rule ``stable_verdict``: every repeat gives the same verdict.

* ``panel``: several judges (models, or variants of one) grade the same rows; each row's panel
  score (mean, median, min) and each judge's agreement with the first (exact, within one grade,
  Cohen's kappa). Rule ``panel_agrees``: every judge gives the first one's grade on at least
  ``1 - tolerance`` of the rows, so a verdict that depends on which judge was picked shows.

Each audit returns an :class:`AuditResult` (``passed``, the figures, one sentence saying why);
the judge's calls go through :class:`~blindspot.scorers.llm_judge.LlmJudge`, so the call budget
and both backends apply unchanged.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from blindspot.judges.agreement import agreement, panel
from blindspot.judges.grades import NoGradeError
from blindspot.registry import Registry

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
              "panel_agrees", "every judge gives the first judge's grade on all but the "
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


def _judge(options: JudgeOptions, **overrides: Any) -> Any:
    from blindspot.scoring.scorer import get_scorer

    return get_scorer("llm_judge", **{**options, **overrides})


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
    gold_first = [r.grade == 1 for r in judge.prefer(golds, perturbed, sources)]
    gold_second = [r.grade == 2 for r in judge.prefer(perturbed, golds, sources)]
    flips = [a != b for a, b in zip(gold_first, gold_second, strict=True)]
    both = [a and b for a, b in zip(gold_first, gold_second, strict=True)]
    first_wins = _share([*gold_first, *(not g for g in gold_second)])
    flip_rate, gold_both = _share(flips), _share(both)
    passed = flip_rate <= tol
    why = (f"{flip_rate:.0%} of {len(flips)} pairs flip with the order "
           f"({'at most' if passed else 'above'} the tolerance {tol:.0%}); {gold_both:.0%} prefer "
           f"the gold in both orders, and the first answer wins {first_wins:.0%} of the calls")
    return AuditResult("position", spec.rule, tol, passed, why,
                       {"pairs": len(flips), "flip_rate": flip_rate, "gold_both": gold_both,
                        "first_wins": first_wins})


# -- rubric order and wording ---------------------------------------------------------------------

def rubric(options: JudgeOptions, texts: Sequence[str],
           sources: Sequence[str | None] | None = None,
           references: Sequence[Sequence[str]] | None = None,
           tolerance: float | None = None) -> AuditResult:
    """The rubric audit: the judge's scores of ``texts`` with its rubric shown three ways."""
    from blindspot.scoring.engine import score_rows

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
    passed = sensitivity <= tol
    why = (f"the {worst} rubric moves a row's score by {sensitivity:.3f} grade points on "
           f"average ({'at most' if passed else 'above'} the tolerance {tol}); the grades agree "
           + ", ".join(f"{exact[v]:.0%} with the {v} rubric" for v in exact))
    return AuditResult("rubric", spec.rule, tol, passed, why,
                       {"rows": len(base), "sensitivity": sensitivity, "mean_abs_change": change,
                        "exact_agreement": exact})


# -- panels ---------------------------------------------------------------------------------------

def judge_panel(judges: Mapping[str, JudgeOptions], texts: Sequence[str],
                sources: Sequence[str | None] | None = None,
                references: Sequence[Sequence[str]] | None = None,
                tolerance: float | None = None) -> AuditResult:
    """Several judges (name -> options) on the same rows: each row's panel score (mean, median,
    min of the judges' scores) and each judge's agreement with the first one's grades."""
    from blindspot.scoring.engine import score_rows

    spec = AUDITS.get("panel")
    tol = spec.tolerance if tolerance is None else tolerance
    if len(judges) < 2:
        raise ValueError(f"a panel needs two or more judges, got {len(judges)}")
    scored = {name: score_rows(_judge(opts), list(texts), references=references,
                               sources=sources, cache=None) for name, opts in judges.items()}
    first, *others = scored
    scores = panel({name: s["score"] for name, s in scored.items()})
    agree = {name: agreement(scored[first]["grade"], scored[name]["grade"]) for name in others}
    worst = min(agree, key=lambda name: agree[name].exact)
    passed = agree[worst].exact >= 1 - tol
    why = (f"{worst} gives {first}'s grade on {agree[worst].exact:.0%} of {len(texts)} rows "
           f"(kappa {agree[worst].kappa:.2f}); the rule asks at least {1 - tol:.0%}")
    return AuditResult("panel", spec.rule, tol, passed, why,
                       {"rows": len(texts), "judges": list(scored),
                        "panel": {"mean": scores.mean, "median": scores.median,
                                  "min": scores.min},
                        "agreement": {name: {"exact": a.exact, "within_1": a.within,
                                             "kappa": a.kappa} for name, a in agree.items()}})


# -- flakiness ------------------------------------------------------------------------------------

def flakiness(options: JudgeOptions, golds: Sequence[str], test: str, level: Any,
              repeats: int = 5, sources: Sequence[str | None] | None = None,
              task: str = "summarization") -> AuditResult:
    """The flakiness audit: ``test`` at ``level`` judged once per sampled repeat."""
    from blindspot.judging import judge_curve
    from blindspot.perturbations.perturbation import REGISTRY
    from blindspot.scoring.engine import score_rows

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
    majority = max(dict.fromkeys(verdicts), key=verdicts.count)
    stability = _share([v == majority for v in verdicts])
    same_grade = _share([len({g[row] for g in grades}) == 1 for row in range(len(grades[0]))]) \
        if len(grades) > 1 else math.nan
    passes = sum(v is True for v in verdicts)
    test_verdict = "pass" if passes == repeats else "fail" if passes == 0 else "flaky"
    passed = stability == 1.0 and majority is not None
    kept_grade = (f"{same_grade:.0%} of the rows keep their grade on every graded repeat"
                  if len(grades) > 1 else f"{len(grades)} repeat(s) graded every row, too few "
                  "to compare grades")
    why = (f"{test} at level {level} passes on {passes} of {repeats} sampled repeats "
           f"(stability {stability:.0%}, the test's verdict: {test_verdict}); {kept_grade}"
           + (f"; {no_grade} of the repeats had a reply with no grade, which gives no verdict"
              if no_grade else "")
           + ("; a pass that some repeats do not repeat is no pass"
              if test_verdict == "flaky" else ""))
    return AuditResult("flakiness", spec.rule, spec.tolerance, passed, why,
                       {"test": test, "level": level, "repeats": repeats, "rows": len(kept),
                        "verdicts": verdicts, "no_grade_repeats": no_grade,
                        "test_verdict": test_verdict,
                        "stability": stability, "grade_stability": same_grade})
