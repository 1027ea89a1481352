"""Preference accuracy: does a metric score the paraphrase above the attack? (MENLI, TACL 2023)

Chen and Eger's preference protocol: each pair holds a metric's score of a paraphrase of the
anchor text (``para_scores``: ``m(ref, hyp_para)`` ref-based, ``m(source, ref)`` ref-free) and its
score of an adversarial candidate with one key error (``adv_scores``: ``m(ref, hyp_adv_based)``
or ``m(source, hyp_adv_free)``). A pair is a hit when ``para > adv`` strictly: a tie fails, and so
does a pair with a NaN score. Per error type (``error_types``, MENLI's 12: add, drop, name, neg,
num, pron, word_JJ, word_NN, word_VB, typo, jumble, subject_verb_dis) the accuracy is hits / n;
``mean`` is the unweighted mean over the error types, ``adequacy`` and ``fluency`` the means over
the 9 adequacy and the 3 fluency types (typo, jumble, subject_verb_dis) present, and
``kendall_like`` is ``(hits - misses) / (hits + misses)`` with ties excluded.

With ``other_para_scores`` / ``other_adv_scores`` (a second metric N, e.g. an NLI metric) and
``weight`` w, ``combined`` holds the same figures for ``w * minmax(N) + (1 - w) * minmax(M)``,
each metric min-max normalised over all the pairs' scores (paraphrase and adversarial pooled).

The scores come from any metric; ``blindspot run --protocol preference`` computes them from a
MENLI-style set and reports these figures too.

Examples:
    >>> import evaluate
    >>> judge = evaluate.load("preference_accuracy")
    >>> out = judge.compute(para_scores=[0.9, 0.5, 0.4, 0.7],
    ...                     adv_scores=[0.2, 0.5, 0.6, 0.1],
    ...                     error_types=["neg", "neg", "typo", "typo"])
    >>> out["accuracy"]
    {'neg': 0.5, 'typo': 0.5}
    >>> out["mean"], out["adequacy"], out["fluency"]
    (0.5, 0.5, 0.5)
    >>> out["ties"], out["kendall_like"]
    (1, 0.3333333333333333)
    >>> combined = judge.compute(para_scores=[0.9, 0.5, 0.4, 0.7], adv_scores=[0.2, 0.5, 0.6, 0.1],
    ...                          error_types=["neg", "neg", "typo", "typo"],
    ...                          other_para_scores=[1.0, 1.0, 1.0, 0.0],
    ...                          other_adv_scores=[0.0, 0.0, 0.0, 1.0], weight=0.8)
    >>> combined["combined"]["accuracy"]
    {'neg': 1.0, 'typo': 0.5}
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import datasets
import evaluate

from blindspot.protocols.preference import combine_pairs, preference_accuracy
from blindspot.scorers.menli import MENLI_CITATION

_CITATION = MENLI_CITATION

_INPUTS = """
Args:
    para_scores (list of float): the metric's score of each pair's paraphrase candidate.
    adv_scores (list of float): its score of the pair's adversarial candidate.
    error_types (list of str): each pair's error type (one of MENLI's 12).
    include (list of str, optional): judge only these error types.
    other_para_scores, other_adv_scores (list of float, optional): a second metric N's scores
        of the same pairs, to report the combination w * minmax(N) + (1 - w) * minmax(M) too.
    weight (float): w in [0, 1] (default 0.2) for the combination.
Returns:
    accuracy ({error type: hits / n}), mean, adequacy, fluency, kendall_like, n, hits, misses,
    ties, n_nan, error_types (how many), per_type ({type: n, hits, misses, ties, n_nan,
    accuracy, kendall_like}) and, with a second metric, combined (the same for the combination).
"""


def _figures(para: Sequence[float], adv: Sequence[float], types: Sequence[str],
             include: Sequence[str] | None) -> dict[str, Any]:
    figures = preference_accuracy(para, adv, types, include)
    return {"accuracy": {t: e["accuracy"] for t, e in figures["per_type"].items()}, **figures}


class PreferenceAccuracy(evaluate.Metric):
    """MENLI's preference accuracy of a metric, per error type, from its paired scores."""

    def _info(self) -> evaluate.MetricInfo:
        return evaluate.MetricInfo(
            description=__doc__, citation=_CITATION, inputs_description=_INPUTS,
            features=datasets.Features({"para_scores": datasets.Value("float64"),
                                        "adv_scores": datasets.Value("float64"),
                                        "error_types": datasets.Value("string")}))

    def _compute(self, para_scores: list[float], adv_scores: list[float],
                 error_types: list[str], include: Sequence[str] | None = None,
                 other_para_scores: Sequence[float] | None = None,
                 other_adv_scores: Sequence[float] | None = None,
                 weight: float = 0.2) -> dict[str, Any]:
        out = _figures(para_scores, adv_scores, error_types, include)
        if (other_para_scores is None) != (other_adv_scores is None):
            raise ValueError("give both other_para_scores and other_adv_scores (the second "
                             "metric's scores of the same pairs) or neither")
        if other_para_scores is not None and other_adv_scores is not None:  # both, as checked
            for name, values in (("other_para_scores", other_para_scores),
                                 ("other_adv_scores", other_adv_scores)):
                if len(values) != len(para_scores):
                    raise ValueError(f"{name} has {len(values)} scores for "
                                     f"{len(para_scores)} pairs")
            para, adv = combine_pairs(other_para_scores, other_adv_scores, para_scores,
                                      adv_scores, weight)
            out["combined"] = _figures(para, adv, error_types, include)
        return out
