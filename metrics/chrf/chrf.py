"""chrF (Popović, 2015) through sacrebleu: a drop-in for evaluate's canonical ``chrf`` module.

The same arguments, defaults and outputs as ``evaluate.load("chrf")``: sacrebleu's corpus chrF
(``score`` in [0, 100]) with ``char_order``, ``word_order`` (2 = chrF++), ``beta``,
``lowercase``, ``whitespace``, ``eps_smoothing``, and those settings echoed back. Every
prediction needs the same number of references, as there.

Added: ``use_aggregator=False`` gives per-row SENTENCE chrF (``score`` is then a list, one value
per row, deduplicated and cached): what the blind-spot protocol judges (``blindspot run
--metrics chrf``). Rows may then have different numbers of references.

Examples:
    >>> import evaluate
    >>> chrf = evaluate.load("metrics/chrf")
    >>> prediction = ["The relationship between cats and dogs is not exactly friendly.",
    ...               "a good bookshop is just a genteel black hole that knows how to read."]
    >>> reference = [["The relationship between dogs and cats is not exactly friendly."],
    ...              ["A good bookshop is just a genteel Black Hole that knows how to read."]]
    >>> chrf.compute(predictions=prediction, references=reference)
    {'score': 84.64214891738334, 'char_order': 6, 'word_order': 0, 'beta': 2}
    >>> out = chrf.compute(predictions=["The cat sat on the mat."],
    ...                    references=[["The cat is on the mat."]], use_aggregator=False)
    >>> [round(v, 2) for v in out["score"]]
    [67.17]
"""

from typing import Any

from sacrebleu.metrics import CHRF

import blindspot.scoring.module as base
from blindspot.scoring.canonical import reference_streams

_CITATION = """\
@inproceedings{popovic-2015-chrf,
    title = "chr{F}: character n-gram {F}-score for automatic {MT} evaluation",
    author = "Popovi{\\'c}, Maja",
    booktitle = "Proceedings of the Tenth Workshop on Statistical Machine Translation",
    year = "2015",
    pages = "392--395",
}
"""

_INPUTS = """
Args:
    predictions (list of str): hypotheses.
    references (list of str or list of list of str): one or several references per hypothesis
        (the same number for every hypothesis, unless use_aggregator=False).
    char_order (int): character n-gram order, default 6.
    word_order (int): word n-gram order, default 0 (2 = chrF++).
    beta (int): weight of recall against precision, default 2.
    lowercase (bool): case-insensitive, default False.
    whitespace (bool): keep whitespace in character n-grams, default False.
    eps_smoothing (bool): epsilon smoothing (chrF++.py, NLTK, Moses), default False.
    use_aggregator (bool): True (default): corpus chrF, as evaluate's ``chrf``; False: per-row
        sentence chrF (a list), what the blind-spot protocol judges.
Returns:
    score: chrF in [0, 100], higher is better; char_order, word_order, beta: the settings.
"""


class Chrf(base.ScorerMetric):
    """chrF: evaluate's ``chrf`` plus per-row sentence scores on the blindspot scoring layer."""

    scorer_name = "chrf"
    module_description = __doc__
    module_citation = _CITATION
    module_inputs = _INPUTS

    def _compute(self, predictions: list[str], references: list[Any],
                 char_order: int = CHRF.CHAR_ORDER, word_order: int = CHRF.WORD_ORDER,
                 beta: int = CHRF.BETA, lowercase: bool = False, whitespace: bool = False,
                 eps_smoothing: bool = False, use_aggregator: bool = True) -> dict[str, Any]:
        options: dict[str, Any] = {"char_order": char_order, "word_order": word_order, "beta": beta,
                   "lowercase": lowercase, "whitespace": whitespace,
                   "eps_smoothing": eps_smoothing}
        if use_aggregator:
            score = CHRF(**options).corpus_score(predictions, reference_streams(references)).score
        else:
            score = self.scorer_rows(predictions, references, **options)["chrf"]
        return {"score": score, "char_order": char_order, "word_order": word_order, "beta": beta}
