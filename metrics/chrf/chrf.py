"""chrF (Popović, 2015) through sacrebleu, on blindspot's cached scoring layer.

Character n-gram F-score between a hypothesis and one or more references. Sentence level by
default (one score per row, the mean with ``use_aggregator=True``); ``level="corpus"`` gives
sacrebleu's corpus chrF. Options (``char_order``, ``word_order``, ``beta``, ``lowercase``...) are
sacrebleu's ``CHRF`` arguments.

Examples:
    >>> import evaluate
    >>> chrf = evaluate.load("metrics/chrf")
    >>> out = chrf.compute(predictions=["The cat sat on the mat."],
    ...                    references=[["The cat is on the mat."]], use_aggregator=False)
    >>> round(out["chrf"][0], 2)
    67.17
    >>> round(chrf.compute(predictions=["The cat sat on the mat."],
    ...                    references=["The cat is on the mat."], level="corpus")["chrf"], 2)
    67.17
"""

import blindspot.scoring.module as base

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
    references (list of str or list of list of str): one or several references per hypothesis.
    use_aggregator (bool): mean over rows (default) or per-row lists.
    level (str): "sentence" (default) or "corpus".
Returns:
    chrf: score in [0, 100] (a list per row when use_aggregator=False).
"""


class Chrf(base.ScorerMetric):
    """chrF on the blindspot scoring layer."""

    scorer_name = "chrf"
    module_description = __doc__
    module_citation = _CITATION
    module_inputs = _INPUTS
