"""The base of every blindspot ``evaluate`` module: ``compute`` goes through the scoring layer.

A module script under ``metrics/<name>/`` subclasses :class:`ScorerMetric`, names its scorer and
writes its card text; features, input checks, caching and aggregation come from here. Import this
module (``import blindspot.scoring.module as base``), not the class, so that ``evaluate.load``
finds the script's own class first.
"""

from __future__ import annotations

from statistics import fmean
from typing import Any, ClassVar

import datasets
import evaluate

from blindspot.scoring.engine import build_inputs, score_corpus, score_rows
from blindspot.scoring.facts import scorer_facts
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

    def _info(self) -> evaluate.MetricInfo:
        cls = self._scorer_class()
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
        return evaluate.MetricInfo(description=self.module_description,
                                   citation=self.module_citation,
                                   inputs_description=self.module_inputs, features=features)

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

    def _compute(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        """evaluate's hook: each module script overrides it with its own keywords (so the base
        takes any); the default work is :meth:`_score`."""
        return self._score(*args, **kwargs)

    def _score(self, predictions: list[str], references: list[Any] | None = None,
               sources: list[str] | None = None, use_aggregator: bool = True,
               level: str = "sentence", **options: Any) -> dict[str, Any]:
        missing = options.pop(_MISSING_KEY, ())
        references = None if "references" in missing else references
        sources = None if "sources" in missing else sources
        if level not in ("sentence", "corpus"):
            raise ValueError(f"level must be 'sentence' or 'corpus', got {level!r}")
        scorer = get_scorer(self.scorer_name, **options)
        result: dict[str, Any]
        if scorer.corpus_level or level == "corpus":
            result = score_corpus(scorer, predictions, references, sources)
        else:
            rows = score_rows(scorer, predictions, references, sources)
            result = aggregate(rows) if use_aggregator else rows
        return {**result, **truncation_report(scorer, predictions, references)}

    def scorer_rows(self, predictions: list[str], references: list[Any] | None,
                    sources: list[str] | None = None, **options: Any) -> dict[str, list[float]]:
        """Per-row scores of this module's scorer with ``options`` (deduplicated and cached): what
        a blind-spot run judges, for the modules whose own default is a corpus score."""
        return score_rows(get_scorer(self.scorer_name, **options), predictions, references,
                          sources)


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
