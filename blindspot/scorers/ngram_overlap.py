"""BLEU, chrF and TER through sacrebleu, at sentence and corpus level.

Sentence scores use sacrebleu's sentence-level metrics (BLEU with exponential smoothing, as
sacrebleu's ``sentence_bleu``); corpus scores use its corpus-level statistics over all rows.
Multiple references are passed to sacrebleu as such (it takes the best n-gram matches).
"""

from __future__ import annotations

from collections.abc import Sequence
from types import MappingProxyType
from typing import Any, ClassVar

from blindspot.scoring.scorer import (
    Reference,
    ScoreInput,
    Scorer,
    declared_options,
    register_scorer,
)

#: what BLEU, chrF and TER are measured against: the library they wrap, on 200 WMT21 rows
SACREBLEU = Reference("sacrebleu 2.6.0", max_abs_diff=0.0, rows=200)


def _reference_streams(inputs: Sequence[ScoreInput]) -> list[list[str]]:
    """sacrebleu's corpus layout: one stream per reference position ("" where a row has fewer)."""
    width = max((len(i.references) for i in inputs), default=0)
    return [[i.references[k] if k < len(i.references) else "" for i in inputs]
            for k in range(width)]


class _SacrebleuScorer(Scorer):
    """Shared by BLEU, chrF and TER: one sacrebleu metric object, built once per scorer."""

    metric_class: ClassVar[str]
    default_batch_size = 512
    model_option = None
    kind = "lexical"
    library = "sacrebleu"
    reference = SACREBLEU

    @classmethod
    def option_names(cls) -> list[str] | None:
        """sacrebleu's own arguments of the metric class (``char_order``, ``lowercase``...)."""
        import sacrebleu  # lazy here and below: ~0.2 s, paid only by runs that use sacrebleu

        return declared_options(getattr(sacrebleu.metrics, cls.metric_class).__init__)

    def __init__(self, **config: Any) -> None:
        super().__init__(**config)
        import sacrebleu

        self._metric = getattr(sacrebleu.metrics, self.metric_class)(**self._options())

    def _options(self) -> dict[str, Any]:
        return dict(self.config)

    def score_batch(self, batch: Sequence[ScoreInput]) -> list[dict[str, float]]:
        return [{self.outputs[0]: float(self._metric.sentence_score(
            item.hypothesis, list(item.references)).score)} for item in batch]

    def score_corpus(self, inputs: Sequence[ScoreInput]) -> dict[str, float]:
        result = self._metric.corpus_score([i.hypothesis for i in inputs],
                                           _reference_streams(inputs))
        return {self.outputs[0]: float(result.score)}

    def model_revision(self) -> str:
        import sacrebleu

        return f"sacrebleu-{sacrebleu.__version__}"


@register_scorer
class Bleu(_SacrebleuScorer):
    name = "bleu"
    outputs = ("bleu",)
    metric_class = "BLEU"
    natural_ranges = MappingProxyType({"bleu": (0.0, 100.0)})
    search_panel = (1, "bleu")

    def _options(self) -> dict[str, Any]:
        # sentence_bleu's default: exponential smoothing, effective order
        return {"effective_order": True, **self.config}

    def score_corpus(self, inputs: Sequence[ScoreInput]) -> dict[str, float]:
        import sacrebleu

        corpus = sacrebleu.metrics.BLEU(**self.config)  # corpus_bleu's defaults
        result = corpus.corpus_score([i.hypothesis for i in inputs], _reference_streams(inputs))
        return {"bleu": float(result.score)}


@register_scorer
class Chrf(_SacrebleuScorer):
    name = "chrf"
    outputs = ("chrf",)
    metric_class = "CHRF"
    natural_ranges = MappingProxyType({"chrf": (0.0, 100.0)})
    search_panel = (0, "chrf")


@register_scorer
class Ter(_SacrebleuScorer):
    name = "ter"
    outputs = ("ter",)
    metric_class = "TER"
    lower_is_better = frozenset({"ter"})  # an edit rate
