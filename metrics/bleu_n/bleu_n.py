"""BLEU-1 to BLEU-4 (Papineni et al., 2002) as named outputs, through sacreBLEU.

``bleu1``..``bleu4``: BLEU with n-grams up to order 1..4 (the columns Sai et al., 2021, report),
each sacreBLEU's BLEU with ``max_ngram_order=n`` on a 0-100 scale. By default the corpus score of
each order (counts pooled over rows, as ``sacrebleu``); ``use_aggregator=False`` gives per-row
sentence BLEU-n (exponential smoothing, effective order; deduplicated and cached), what
``blindspot run --metrics bleu_n.bleu1`` judges (``bleu_n`` alone judges ``bleu4``).

Examples:
    >>> import evaluate
    >>> bleu_n = evaluate.load("metrics/bleu_n")
    >>> out = bleu_n.compute(predictions=["The cat sat on the mat."],
    ...                      references=[["The cat is on the mat."]])
    >>> {key: round(value, 2) for key, value in out.items()}
    {'bleu1': 85.71, 'bleu2': 75.59, 'bleu3': 61.14, 'bleu4': 48.89}
    >>> out = bleu_n.compute(predictions=["The cat sat on the mat.", "Hello there"],
    ...                      references=["The cat is on the mat.", "Hello there"],
    ...                      use_aggregator=False)
    >>> [round(v, 2) for v in out["bleu2"]]
    [75.59, 100.0]
"""

from typing import Any

import blindspot.scoring.module as base

_CITATION = """\
@inproceedings{papineni-etal-2002-bleu,
    title = "{B}leu: a Method for Automatic Evaluation of Machine Translation",
    author = "Papineni, Kishore and Roukos, Salim and Ward, Todd and Zhu, Wei-Jing",
    booktitle = "Proceedings of the 40th Annual Meeting of the Association for Computational Linguistics",
    year = "2002",
    pages = "311--318",
}
"""  # noqa: E501 (published BibTeX, kept verbatim)

_INPUTS = """
Args:
    predictions (list of str): hypotheses.
    references (list of str or list of list of str): one or several references per hypothesis
        (the same number for every hypothesis, unless use_aggregator=False).
    lowercase (bool): case-insensitive, default False.
    use_aggregator (bool): True (default): corpus BLEU-n; False: per-row sentence BLEU-n.
Returns:
    bleu1, bleu2, bleu3, bleu4: in [0, 100], higher is better.
"""


class BleuN(base.ScorerMetric):
    """BLEU-1..4 on the blindspot scoring layer."""

    scorer_name = "bleu_n"
    module_description = __doc__
    module_citation = _CITATION
    module_inputs = _INPUTS

    def _compute(self, predictions: list[str], references: list[Any], lowercase: bool = False,
                 use_aggregator: bool = True) -> dict[str, Any]:
        return self._score(predictions, references, use_aggregator=use_aggregator,
                           level="corpus" if use_aggregator else "sentence", lowercase=lowercase)
