"""Preference accuracy (MENLI, PROTOCOLS.md §2): does a metric prefer a paraphrase to an attack?

Chen and Eger, *MENLI: Robust Evaluation Metrics from Natural Language Inference* (TACL 2023),
§3 and Eq. (1): an anchor text, a paraphrase ``cand_para`` of it (meaning-equivalent but
surface-dissimilar) and an adversarial text ``cand_adv`` (maximally similar to the anchor but
with one key error). A good metric ``m`` prefers the paraphrase: a **hit** when
``m(anchor, cand_para) > m(anchor, cand_adv)``.

The two modes (:data:`MODES`), with the columns of a MENLI-style set:

* ``ref-based``: anchor ``ref``, ``cand_para`` = ``hyp_para``, ``cand_adv`` = ``hyp_adv_based``
  (the attack applied to ``ref``): ``m(ref, hyp_para) > m(ref, hyp_adv_based)``.
* ``ref-free``: anchor ``source``. The paper builds the ref-free attack on ``r``, a (more literal)
  machine translation of the source, and the candidate it must lose to is the human reference
  ``ref``, the translation of ``source`` that is meaning-equivalent but further from it on the
  surface: ``m(source, ref) > m(source, hyp_adv_free)`` (MENLI §3, Table 2; DATA.md).

Choices, stated (from the spec and the paper):

* The comparison is strict: a tie is a failure (accuracy = hits / n). A pair with a NaN score is
  a failure too, and is counted in ``n_nan``.
* The dataset figure is the unweighted mean of the per-error-type accuracies; ``adequacy`` is
  the mean over the 9 information-adequacy types present and ``fluency`` over the 3 fluency
  types present (typo, jumble, subject-verb disagreement: MENLI §3, "Fluency").
* Kendall-like tau: ``(hits - misses) / (hits + misses)``, ties (and NaN pairs) excluded; None
  when every pair is a tie.
* Combination (MENLI §5, "Combined Metrics"): ``w * minmax(N) + (1 - w) * minmax(M)``, each
  metric min-max normalised over the scored batch with paraphrase and adversarial scores pooled.
  A metric with one value over the whole batch normalises to 0 everywhere (its range is 0), so
  the combination then ranks by the other metric alone.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from blindspot.minmax import combine, minmax

#: The 12 error types of MENLI's adversarial sets, as the shipped CSV names them.
ADEQUACY_TYPES = ("add", "drop", "name", "neg", "num", "pron", "word_JJ", "word_NN", "word_VB")
FLUENCY_TYPES = ("typo", "jumble", "subject_verb_dis")
ERROR_TYPES = ADEQUACY_TYPES + FLUENCY_TYPES


@dataclass(frozen=True)
class Mode:
    """Which columns a mode compares: ``m(anchor, good) > m(anchor, bad)``."""

    name: str
    anchor: str
    good: str
    bad: str
    description: str

    @property
    def columns(self) -> tuple[str, ...]:
        return ("error", self.anchor, self.good, self.bad)


MODES: dict[str, Mode] = {
    "ref-based": Mode("ref-based", anchor="ref", good="hyp_para", bad="hyp_adv_based",
                      description="m(ref, hyp_para) > m(ref, hyp_adv_based)"),
    "ref-free": Mode("ref-free", anchor="source", good="ref", bad="hyp_adv_free",
                     description="m(source, ref) > m(source, hyp_adv_free)"),
}


def get_mode(name: str) -> Mode:
    """The mode called ``name``; a clear error lists the valid ones."""
    key = str(name).strip().lower().replace("_", "-")
    if key not in MODES:
        raise ValueError(f"unknown preference mode {name!r}; choose one of {sorted(MODES)}")
    return MODES[key]


def check_error_types(types: Iterable[str]) -> list[str]:
    """``types`` as a list, or a ValueError naming the unknown ones and the valid ones."""
    chosen = [str(t).strip() for t in types]
    unknown = [t for t in chosen if t not in ERROR_TYPES]
    if unknown:
        raise ValueError(f"unknown error type(s) {unknown}; the MENLI error types are "
                         f"{list(ERROR_TYPES)}")
    return chosen


def _float(value: Any) -> float:
    return math.nan if value is None else float(value)


def outcome(para: float, adv: float) -> str:
    """``"hit"`` when the paraphrase scores strictly higher, ``"tie"`` when equal, ``"nan"`` when
    a score is NaN, else ``"miss"``."""
    para, adv = _float(para), _float(adv)
    if math.isnan(para) or math.isnan(adv):
        return "nan"
    if para > adv:
        return "hit"
    return "tie" if para == adv else "miss"


def hits(para_scores: Sequence[float], adv_scores: Sequence[float]) -> list[bool]:
    """Per pair: True when ``para > adv`` strictly (a tie or a NaN is False)."""
    _check_pairs(para_scores, adv_scores)
    return [outcome(p, a) == "hit" for p, a in zip(para_scores, adv_scores, strict=True)]


def _check_pairs(para_scores: Sequence[Any], adv_scores: Sequence[Any]) -> None:
    if len(para_scores) != len(adv_scores):
        raise ValueError(f"para_scores and adv_scores must pair up: {len(para_scores)} "
                         f"paraphrase scores but {len(adv_scores)} adversarial scores")


def kendall_like(n_hits: int, n_misses: int) -> float | None:
    """``(hits - misses) / (hits + misses)`` (ties are not passed in); None with no pair left."""
    decided = n_hits + n_misses
    return (n_hits - n_misses) / decided if decided else None


def tally(para_scores: Sequence[float], adv_scores: Sequence[float]) -> dict[str, Any]:
    """Counts and figures of one group of pairs: n, hits, misses, ties, n_nan, accuracy,
    kendall_like (accuracy None for an empty group)."""
    _check_pairs(para_scores, adv_scores)
    counts = {"hit": 0, "miss": 0, "tie": 0, "nan": 0}
    for para, adv in zip(para_scores, adv_scores, strict=True):
        counts[outcome(para, adv)] += 1
    n = len(para_scores)
    return {"n": n, "hits": counts["hit"], "misses": counts["miss"], "ties": counts["tie"],
            "n_nan": counts["nan"], "accuracy": counts["hit"] / n if n else None,
            "kendall_like": kendall_like(counts["hit"], counts["miss"])}


def _mean(values: Iterable[float | None]) -> float | None:
    kept = [v for v in values if v is not None]
    return sum(kept) / len(kept) if kept else None


def accuracy_by_type(para_scores: Sequence[float], adv_scores: Sequence[float],
                     error_types: Sequence[str],
                     include: Sequence[str] | None = None) -> dict[str, dict[str, Any]]:
    """:func:`tally` per error type, in MENLI's order (adequacy types, then fluency types).

    ``include`` keeps only those error types (all present ones by default); an unknown error
    type in the data or in ``include`` is a ValueError naming it.
    """
    _check_pairs(para_scores, adv_scores)
    if len(error_types) != len(para_scores):
        raise ValueError(f"error_types must have one item per pair: {len(para_scores)} pairs "
                         f"but {len(error_types)} error types")
    check_error_types(set(error_types))
    wanted = set(check_error_types(include)) if include is not None else set(error_types)
    groups: dict[str, tuple[list[float], list[float]]] = {}
    for para, adv, kind in zip(para_scores, adv_scores, error_types, strict=True):
        if kind in wanted:
            group = groups.setdefault(kind, ([], []))
            group[0].append(para)
            group[1].append(adv)
    return {kind: tally(*groups[kind]) for kind in ERROR_TYPES if kind in groups}


def summarise(per_type: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """The dataset figures: unweighted means over error types (all, adequacy, fluency), the
    pooled counts and the Kendall-like tau of all pairs pooled (ties excluded)."""
    totals = {key: sum(entry[key] for entry in per_type.values())
              for key in ("n", "hits", "misses", "ties", "n_nan")}
    return {"mean": _mean(e["accuracy"] for e in per_type.values()),
            "adequacy": _mean(e["accuracy"] for k, e in per_type.items() if k in ADEQUACY_TYPES),
            "fluency": _mean(e["accuracy"] for k, e in per_type.items() if k in FLUENCY_TYPES),
            "kendall_like": kendall_like(totals["hits"], totals["misses"]),
            "error_types": len(per_type), **totals}


def preference_accuracy(para_scores: Sequence[float], adv_scores: Sequence[float],
                        error_types: Sequence[str],
                        include: Sequence[str] | None = None) -> dict[str, Any]:
    """Every figure of the protocol: :func:`summarise` plus ``per_type`` (:func:`accuracy_by_type`)."""
    per_type = accuracy_by_type(para_scores, adv_scores, error_types, include)
    return {**summarise(per_type), "per_type": per_type}


# -- combination with another metric -------------------------------------------------------------


def combine_pairs(other_para: Sequence[float], other_adv: Sequence[float],
                  metric_para: Sequence[float], metric_adv: Sequence[float],
                  weight: float) -> tuple[list[float], list[float]]:
    """The combined (para, adv) scores, min-max over paraphrase and adversarial scores pooled."""
    _check_pairs(other_para, other_adv)
    _check_pairs(metric_para, metric_adv)
    pooled = combine(list(other_para) + list(other_adv), list(metric_para) + list(metric_adv),
                     weight)
    return pooled[: len(other_para)], pooled[len(other_para):]


__all__ = ["ADEQUACY_TYPES", "ERROR_TYPES", "FLUENCY_TYPES", "MODES", "Mode", "accuracy_by_type",
           "check_error_types", "combine", "combine_pairs", "get_mode", "hits", "kendall_like",
           "minmax", "outcome", "preference_accuracy", "summarise", "tally"]
