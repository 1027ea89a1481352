"""The base of every blindspot ``evaluate`` module: ``compute`` goes through the scoring layer.

A module generated from a scorer's card (``metrics/<name>/``, :mod:`blindspot.evaluate_modules`)
subclasses :class:`CardMetric` and names its scorer; its text and any compute of its own come from
the card. A hand-written module over a scorer (``sacrebleu``, ``perplexity``...) subclasses
:class:`ScorerMetric` and writes its own. Features, input checks, caching and aggregation come
from here. Import this module (``import blindspot.scoring.module as base``), not the class, so
that ``evaluate.load`` finds the script's own class first.
"""

from __future__ import annotations

from statistics import fmean
from typing import Any, ClassVar

import datasets
import evaluate

from blindspot.scorers._encoders import with_idf_corpus
from blindspot.scoring.card import ModuleCard
from blindspot.scoring.engine import build_inputs, score_corpus, score_rows
from blindspot.scoring.facts import module_card, scorer_facts
from blindspot.scoring.scorer import Scorer, get_scorer

_MISSING_KEY = "_blindspot_missing_inputs"


class ScorerMetric(evaluate.Metric):
    """An evaluate metric backed by a registered :class:`~blindspot.scoring.scorer.Scorer`."""

    scorer_name: ClassVar[str]
    module_description: ClassVar[str] = ""
    module_citation: ClassVar[str] = ""
    module_inputs: ClassVar[str] = ""

    def _scorer_class(self) -> type[Scorer]:
        return scorer_facts(self.scorer_name)

    def _texts(self) -> tuple[str, str, str]:
        """evaluate's description, citation and inputs description of this module."""
        return self.module_description, self.module_citation, self.module_inputs

    def _info(self) -> evaluate.MetricInfo:
        cls = self._scorer_class()
        description, citation, inputs = self._texts()
        base = {"predictions": datasets.Value("string")}
        if cls.uses_source != "none":
            base["sources"] = datasets.Value("string")
        if cls.uses_references == "none":
            features: list[datasets.Features] = [datasets.Features(base)]
        else:
            features = [
                datasets.Features({**base, "references": datasets.Sequence(datasets.Value("string"))}),
                datasets.Features({**base, "references": datasets.Value("string")}),
            ]
        return evaluate.MetricInfo(description=description, citation=citation,
                                   inputs_description=inputs, features=features)

    def compute(self, *, predictions: Any = None, references: Any = None,
                **kwargs: Any) -> dict[str, Any] | None:
        """Check the inputs with the scoring layer's clear errors before evaluate converts them
        (evaluate would fail with a TypeError on missing references, or stringify a dict).

        Optional references or sources (MENLI: ref->hyp or src->hyp; BARTScore; UniEval) may be
        left out: evaluate cannot encode a missing column, so it gets placeholders, and the
        scorer gets ``None``, whose own checks say which argument a configuration needs."""
        cls = self._scorer_class()
        rows = predictions if isinstance(predictions, (list, tuple)) else None
        if rows is not None and not rows:  # evaluate itself fails (IndexError) on no rows
            raise ValueError(f"{self.scorer_name}: predictions is empty; give at least one "
                             "prediction (and as many references)")
        if predictions is not None and cls.uses_references != "none":
            build_inputs(cls, predictions, references, kwargs.get("sources"))
        if cls.uses_references == "none":
            return super().compute(predictions=predictions, **kwargs)
        missing: list[str] = []
        if rows is not None and references is None:
            references, missing = [[] for _ in rows], missing + ["references"]
        if rows is not None and cls.uses_source != "none" and kwargs.get("sources") is None:
            kwargs["sources"], missing = ["" for _ in rows], missing + ["sources"]
        if missing:
            kwargs[_MISSING_KEY] = tuple(missing)
        return super().compute(predictions=predictions, references=references, **kwargs)

    def _compute(self, predictions: list[str], references: list[Any] | None = None,
                 **arguments: Any) -> dict[str, Any]:
        """evaluate's hook (a hand-written module may override it with its own keywords): the
        placeholders :meth:`compute` gave for left-out columns become ``None`` again, then
        :meth:`_module_compute` runs."""
        missing = arguments.pop(_MISSING_KEY, ())
        if "references" in missing:
            references = None
        if "sources" in missing:
            arguments["sources"] = None
        return self._module_compute(predictions, references, **arguments)

    def _module_compute(self, predictions: list[str], references: list[Any] | None,
                        **arguments: Any) -> dict[str, Any]:
        """What ``compute`` returns: :meth:`default_compute`."""
        return self.default_compute(predictions, references, **arguments)

    def default_compute(self, predictions: list[str], references: list[Any] | None = None,
               sources: list[str] | None = None, use_aggregator: bool = True,
               level: str = "sentence", **options: Any) -> dict[str, Any]:
        """The scorer's per-row scores (their means with ``use_aggregator``), or its corpus
        score (``level="corpus"``, or a corpus-level scorer); a scorer weighting by idf gets the
        call's references as its idf corpus (unless ``idf=False``)."""
        if level not in ("sentence", "corpus"):
            raise ValueError(f"level must be 'sentence' or 'corpus', got {level!r}")
        cls = self._scorer_class()
        if cls.supports_idf:
            options = with_idf_corpus(options, references, cls.idf_default())
        scorer = get_scorer(self.scorer_name, **options)
        result: dict[str, Any]
        if scorer.corpus_level or level == "corpus":
            result = score_corpus(scorer, predictions, references, sources)
        else:
            rows = score_rows(scorer, predictions, references, sources)
            result = aggregate(rows) if use_aggregator else rows
        return {**result, **truncation_report(scorer, predictions, references)}

    def aggregate(self, rows: dict[str, list[float]]) -> dict[str, float]:
        """The mean of each output over rows (:func:`aggregate`), for a card's compute."""
        return aggregate(rows)

    def truncation_report(self, scorer: Any, predictions: list[str],
                          references: list[Any] | None) -> dict[str, Any]:
        """:func:`truncation_report`, for a card's compute."""
        return truncation_report(scorer, predictions, references)

    def scorer_rows(self, predictions: list[str], references: list[Any] | None,
                    sources: list[str] | None = None, **options: Any) -> dict[str, list[float]]:
        """Per-row scores of this module's scorer with ``options`` (deduplicated and cached): what
        a blind-spot run judges, for the modules whose own default is a corpus score."""
        return score_rows(get_scorer(self.scorer_name, **options), predictions, references,
                          sources)


class CardMetric(ScorerMetric):
    """The module generated from a scorer's :class:`~blindspot.scoring.card.ModuleCard`: its
    description, citation and inputs are the card's, and so is its compute when the card
    declares one."""

    def _card(self) -> ModuleCard:
        return module_card(self.scorer_name)

    def _texts(self) -> tuple[str, str, str]:
        card = self._card()
        return card.description, card.citation, card.inputs

    def _module_compute(self, predictions: list[str], references: list[Any] | None,
                        **arguments: Any) -> dict[str, Any]:
        card = self._card()
        if card.aggregate == "corpus" and "level" not in arguments:
            arguments["level"] = "corpus" if arguments.get("use_aggregator", True) else "sentence"
        if card.compute is None:
            return self.default_compute(predictions, references, **arguments)
        return card.compute(self, predictions, references, **arguments)


def truncation_report(scorer: Any, predictions: list[str],
                      references: list[Any] | None) -> dict[str, Any]:
    """``truncated_inputs`` and ``max_length`` for a scorer whose model cuts long inputs (with
    one warning when any was cut), else nothing."""
    texts = list(predictions)
    for refs in references or ():
        texts.extend([refs] if isinstance(refs, str) else refs)
    truncation = scorer.truncated(texts)
    return {} if truncation is None else truncation.report(scorer.name)


def aggregate(rows: dict[str, list[float]]) -> dict[str, float]:
    """The mean of each output over rows (0.0 for no rows)."""
    return {key: (fmean(values) if values else 0.0) for key, values in rows.items()}
