"""BLEU-1 to BLEU-4 as named outputs (``bleu1``..``bleu4``), the columns of Sai et al. (2021).

BLEU-n is BLEU with n-grams up to order n: the geometric mean of the clipped 1..n-gram
precisions times the brevity penalty. Each output is sacreBLEU's sentence BLEU with
``max_ngram_order=n`` (exponential smoothing, effective order, 13a tokens, 0-100 like ``bleu``,
whose ``bleu`` equals ``bleu4`` here); the corpus scores pool the counts per order.
"""

from __future__ import annotations

from collections.abc import Sequence
from types import MappingProxyType
from typing import Any

from blindspot.scorers.ngram_overlap import _reference_streams
from blindspot.scoring.card import ModuleCard
from blindspot.scoring.scorer import Reference, ScoreInput, Scorer, register_scorer

ORDERS = (1, 2, 3, 4)


_BLEU_N_CARD = ModuleCard(
    title="BLEU-1..4", emoji="🔤",
    summary="BLEU-1 to BLEU-4 as named outputs (sacreBLEU) on blindspot's cached scoring layer.",
    description="""\
BLEU-1 to BLEU-4 (Papineni et al., 2002) as named outputs, through sacreBLEU.

``bleu1``..``bleu4``: BLEU with n-grams up to order 1..4 (the columns Sai et al., 2021, report),
each sacreBLEU's BLEU with ``max_ngram_order=n`` on a 0-100 scale. By default the corpus score of
each order (counts pooled over rows, as ``sacrebleu``); ``use_aggregator=False`` gives per-row
sentence BLEU-n (exponential smoothing, effective order; deduplicated and cached), what
``blindspot run --metrics bleu_n.bleu1`` judges (``bleu_n`` alone judges ``bleu4``).""",
    examples="""\
>>> import evaluate
>>> bleu_n = evaluate.load("blindspot/bleu_n")
>>> out = bleu_n.compute(predictions=["The cat sat on the mat."],
...                      references=[["The cat is on the mat."]])
>>> {key: round(value, 2) for key, value in out.items()}
{'bleu1': 85.71, 'bleu2': 75.59, 'bleu3': 61.14, 'bleu4': 48.89}
>>> out = bleu_n.compute(predictions=["The cat sat on the mat.", "Hello there"],
...                      references=["The cat is on the mat.", "Hello there"],
...                      use_aggregator=False)
>>> [round(v, 2) for v in out["bleu2"]]
[75.59, 100.0]
""",
    inputs="""\
Args:
    predictions (list of str): hypotheses.
    references (list of str or list of list of str): one or several references per hypothesis
        (the same number for every hypothesis, unless use_aggregator=False).
    lowercase (bool): case-insensitive, default False.
    use_aggregator (bool): True (default): corpus BLEU-n; False: per-row sentence BLEU-n.
Returns:
    bleu1, bleu2, bleu3, bleu4: in [0, 100], higher is better.
""",
    citation="""\
@inproceedings{papineni-etal-2002-bleu,
    title = "{B}leu: a Method for Automatic Evaluation of Machine Translation",
    author = "Papineni, Kishore and Roukos, Salim and Ward, Todd and Zhu, Wei-Jing",
    booktitle = "Proceedings of the 40th Annual Meeting of the Association for Computational Linguistics",
    year = "2002",
    pages = "311--318",
}
""",
    sections="""\
## Metric description
BLEU-1 to BLEU-4 (Papineni et al., 2002) as named outputs, through sacreBLEU.

``bleu1``..``bleu4``: BLEU with n-grams up to order 1..4 (the columns Sai et al., 2021, report),
each sacreBLEU's BLEU with ``max_ngram_order=n`` on a 0-100 scale. By default the corpus score of
each order (counts pooled over rows, as ``sacrebleu``); ``use_aggregator=False`` gives per-row
sentence BLEU-n (exponential smoothing, effective order; deduplicated and cached), what
``blindspot run --metrics bleu_n.bleu1`` judges (``bleu_n`` alone judges ``bleu4``).

Offline after `make env`: `evaluate.load("blindspot/bleu_n")`; `blindspot run --data demo --metrics bleu_n` judges the
per-row scores. The full list of metrics the papers examine, with what is left out and why:
`docs/metrics.md`.
""",  # noqa: E501
    aggregate="corpus",
)


@register_scorer
class BleuOrders(Scorer):
    """Sentence BLEU-1..4 in [0, 100] per row."""

    name = "bleu_n"
    card = _BLEU_N_CARD
    outputs = tuple(f"bleu{n}" for n in ORDERS)
    default_output = "bleu4"
    model_option = None
    kind = "lexical"
    uses_references = "required"
    natural_ranges = MappingProxyType({None: (0.0, 100.0)})
    default_batch_size = 512
    reference = Reference(
        "sacrebleu 2.6.0 (BLEU, max_ngram_order=n)", max_abs_diff=0.0, rows=200,
        differs="Sai et al.'s BLEU-n come from nlg-eval, COCO's BLEU (PTB tokens, 0-1, no "
                "smoothing): another number, not this one")
    def __init__(self, lowercase: bool = False) -> None:
        if not isinstance(lowercase, bool):
            raise ValueError(f"bleu_n option lowercase must be True or False, got {lowercase!r}")
        super().__init__(lowercase=lowercase)
        self._metrics: dict[int, Any] = {}

    def _metric(self, order: int, sentence: bool) -> Any:
        import sacrebleu  # lazy: ~0.2 s

        key = order if sentence else -order
        if key not in self._metrics:
            self._metrics[key] = sacrebleu.metrics.BLEU(max_ngram_order=order,
                                                        effective_order=sentence, **self.config)
        return self._metrics[key]

    def score_batch(self, batch: Sequence[ScoreInput]) -> list[dict[str, float]]:
        return [{f"bleu{n}": float(self._metric(n, True).sentence_score(
            item.hypothesis, list(item.references)).score) for n in ORDERS} for item in batch]

    def score_corpus(self, inputs: Sequence[ScoreInput]) -> dict[str, float]:
        hyps, refs = [i.hypothesis for i in inputs], _reference_streams(inputs)
        return {f"bleu{n}": float(self._metric(n, False).corpus_score(hyps, refs).score)
                for n in ORDERS}

    def model_revision(self) -> str:
        import sacrebleu

        return f"sacrebleu-{sacrebleu.__version__}"
