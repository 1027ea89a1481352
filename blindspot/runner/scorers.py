"""Building the scorer behind a :class:`MetricSpec`, with what the run's data provides.

Metrics whose idf weights come from a reference corpus (those whose scorer declares
``supports_idf``: BERTScore with idf, MoverScore) get the run's references, as their evaluate
modules give them the call's references.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from blindspot.scorers._encoders import reference_corpus
from blindspot.scoring.custom import custom_scorer
from blindspot.scoring.engine import score_rows
from blindspot.scoring.facts import registered_metrics, scorer_facts
from blindspot.scoring.scorer import Scorer, get_scorer

__all__ = ["make_scorer", "reference_corpus", "scorer_for", "signed_scores"]


def _idf_on(metric: str, options: Mapping[str, Any]) -> bool:
    """Whether the scorer would weight by idf and has no corpus yet: the option given, else its
    default."""
    facts = scorer_facts(metric)
    return (facts.supports_idf and bool(options.get("idf", facts.idf_default()))
            and options.get("idf_references") is None)


def _named_model(metric: str, options: Mapping[str, Any]) -> dict[str, Any]:
    """Options with a generic ``model`` renamed to the scorer's own model option
    (``model_type`` for BERTScore and MoverScore, ``feature_model`` for MAUVE...)."""
    chosen = dict(options)
    own = scorer_facts(metric).model_option
    if "model" in chosen and own not in (None, "model") and own not in chosen:
        chosen[own] = chosen.pop("model")
    return chosen


def make_scorer(metric: str, options: Mapping[str, Any],
                idf_references: Sequence[str] | None = None) -> Scorer:
    """The scorer of ``metric``; an idf corpus it needs comes from ``idf_references``, and a
    generic ``model`` option goes to the scorer's own model option.

    Without references (only the outputs are wanted), idf is switched off: the outputs are the same.
    """
    if metric not in registered_metrics():
        return get_scorer(metric, **options)  # raises, listing the valid metrics
    chosen = _named_model(metric, options)
    if _idf_on(metric, chosen):
        if idf_references is None:
            chosen["idf"] = False
        else:
            chosen["idf_references"] = list(idf_references)
    return get_scorer(metric, **chosen)


def scorer_for(spec: Any, references: Sequence[Any] | None = None) -> Scorer:
    """The scorer behind a :class:`~blindspot.runner.metric_spec.MetricSpec`: a user's metric (a
    loaded evaluate module or a function) wrapped as a scorer, else the registered scorer (idf
    corpus from ``references``)."""
    if spec.module is not None:
        return custom_scorer(spec.module, spec.output, **spec.options)
    idf = reference_corpus(references) if references is not None else None
    return make_scorer(spec.metric, spec.options, idf_references=idf)


def signed_scores(spec: Any, scorer: Scorer, texts: Sequence[str],
                  references: Sequence[Any] | None = None, sources: Sequence[Any] | None = None,
                  batch_size: int | None = None, progress: bool = False) -> list[float]:
    """Per-row scores of the spec's output, higher = better (lower-is-better metrics negated).

    References or sources the scorer does not use are not passed (nor checked). Every protocol
    that compares per-row scores (preference, deviation, correlation, search, streamed runs)
    scores through here.
    """
    values = score_rows(scorer, list(texts),
                        references if scorer.uses_references != "none" else None,
                        sources if scorer.uses_source != "none" else None,
                        batch_size=batch_size, progress=progress)[spec.output or scorer.outputs[0]]
    sign = 1.0 if spec.higher_is_better else -1.0
    return [sign * float(v) for v in values]
