"""METEOR (Banerjee & Lavie, 2005) through NLTK: a drop-in for evaluate's canonical ``meteor``.

The same arguments, defaults and output as ``evaluate.load("meteor")``: NLTK's ``meteor_score``
on ``nltk.word_tokenize`` tokens (exact, Porter-stem and WordNet-synonym unigram matches, an
F-mean weighted by ``alpha`` and a fragmentation penalty shaped by ``beta`` and ``gamma``), the
best over a row's references, and ``meteor`` the mean over rows. The WordNet and Punkt data NLTK
needs are installed offline by ``make env``; nothing is downloaded.

Added: ``use_aggregator=False`` gives one score per row (deduplicated and cached), what the
blind-spot protocol judges (``blindspot run --metrics meteor``).

Examples:
    >>> import evaluate
    >>> meteor = evaluate.load("metrics/meteor")
    >>> predictions = ["It is a guide to action which ensures that the military always obeys the commands of the party"]
    >>> references = ["It is a guide to action that ensures that the military will forever heed Party commands"]
    >>> results = meteor.compute(predictions=predictions, references=references)
    >>> print(round(results["meteor"], 4))
    0.6944
    >>> references = [["It is a guide to action that ensures that the military will forever heed Party commands",
    ...                "It is the guiding principle which guarantees the military forces always being under the command of the Party",
    ...                "It is the practical guide for the army always to heed the directions of the party"]]
    >>> results = meteor.compute(predictions=predictions, references=references)
    >>> print(round(results["meteor"], 4))
    0.6944
    >>> out = meteor.compute(predictions=["The cat sat on the mat.", "A dog barked."],
    ...                      references=["The cat sat on the mat.", "The bird sang."],
    ...                      use_aggregator=False)
    >>> [round(v, 4) for v in out["meteor"]]
    [0.9985, 0.125]
"""  # noqa: E501 (the canonical module's example sentences, kept whole)

from typing import Any

import blindspot.scoring.module as base

_CITATION = """\
@inproceedings{banarjee2005,
  title     = {{METEOR}: An Automatic Metric for {MT} Evaluation with Improved Correlation with Human Judgments},
  author    = {Banerjee, Satanjeev  and Lavie, Alon},
  booktitle = {Proceedings of the {ACL} Workshop on Intrinsic and Extrinsic Evaluation Measures for Machine Translation and/or Summarization},
  month     = jun,
  year      = {2005},
  address   = {Ann Arbor, Michigan},
  publisher = {Association for Computational Linguistics},
  pages     = {65--72},
}
"""  # noqa: E501 (published BibTeX, kept verbatim)

_INPUTS = """
Args:
    predictions (list of str): hypotheses.
    references (list of str or list of list of str): one or several references per hypothesis.
    alpha (float): weight of precision against recall, default 0.9.
    beta (float): shape of the fragmentation penalty, default 3.
    gamma (float): weight of the fragmentation penalty, default 0.5.
    use_aggregator (bool): True (default): the mean over rows; False: one score per row.
Returns:
    meteor: METEOR in [0, 1], higher is better (a list per row with use_aggregator=False).
"""


class Meteor(base.ScorerMetric):
    """METEOR: evaluate's ``meteor``, per-row scores on the blindspot scoring layer."""

    scorer_name = "meteor"
    module_description = __doc__
    module_citation = _CITATION
    module_inputs = _INPUTS

    def _compute(self, predictions: list[str], references: list[Any], alpha: float = 0.9,
                 beta: float = 3, gamma: float = 0.5,
                 use_aggregator: bool = True) -> dict[str, Any]:
        return self._score(predictions, references, use_aggregator=use_aggregator, alpha=alpha,
                           beta=beta, gamma=gamma)
