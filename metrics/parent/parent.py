"""PARENT (Dhingra et al., 2019): Precision And Recall of Entailed N-grams from the Table, for
data-to-text generation.

Each row needs its TABLE as ``sources``: a JSON list of ``[attribute, value]`` pairs (or
``[head, relation, tail]`` triples), a JSON object ``{"attribute": "value"}``, or WikiBio-style
``attribute|||value`` (WebNLG-style ``head|||relation|||tail``) fields separated by tabs or
newlines; any other text is one record whose value is the whole text. An n-gram of the
generation counts as correct when the reference has it, or as far as the table entails it (the
share of its words among the values the table states); recall mixes recall of the
table-entailed reference n-grams with recall of the table's values (LCS), lambda 0.5; ``parent``
is their F-score. As the authors' ``table_text_eval.py`` (equal to its recorded outputs on 40
rows): texts are lower-cased and split on whitespace (tokenize first: "1990." is not "1990"),
with its smoothing. ``definition="paper"`` entails with attribute names too (the paper's T-bar).
``use_aggregator=False`` gives per-row scores, what ``blindspot run --metrics parent`` judges (the
run's sources are the tables).

Examples:
    >>> import evaluate
    >>> parent = evaluate.load("metrics/parent")
    >>> table = '[["name", "john"], ["born", "1990"]]'
    >>> out = parent.compute(predictions=["john born in 1990"],
    ...                      references=["john was born in 1990"], sources=[table])
    >>> {key: round(value, 4) for key, value in out.items()}
    {'parent': 0.3129, 'parent_precision': 0.726, 'parent_recall': 0.1994}
    >>> out = parent.compute(predictions=["john born in 1990"], references=["john was born in 1990"],
    ...                      sources=[table], definition="paper")
    >>> round(out["parent_precision"], 4)  # the attribute "born" entails too
    0.8891
    >>> out = parent.compute(predictions=["john was born in 1990", "mary was born in 1990"],
    ...                      references=["john was born in 1990"] * 2,
    ...                      sources=["name|||john\\tborn|||1990"] * 2, use_aggregator=False)
    >>> [round(v, 4) for v in out["parent"]]
    [1.0, 0.5722]
"""

from typing import Any

import blindspot.scoring.module as base

_CITATION = """\
@inproceedings{dhingra-etal-2019-handling,
    title = "Handling Divergent Reference Texts when Evaluating Table-to-Text Generation",
    author = "Dhingra, Bhuwan and Faruqui, Manaal and Parikh, Ankur and Chang, Ming-Wei and Das, Dipanjan and Cohen, William",
    booktitle = "Proceedings of the 57th Annual Meeting of the Association for Computational Linguistics",
    year = "2019",
    pages = "4884--4895",
}
"""  # noqa: E501 (published BibTeX, kept verbatim)

_INPUTS = """
Args:
    predictions (list of str): generated texts.
    references (list of str or list of list of str): references per prediction.
    sources (list of str): the table of each row (JSON pairs or object, or attribute|||value).
    lambda_weight (float): weight of table recall against reference recall, default 0.5.
    definition (str): "released" (default): the authors' script; "paper": the paper's T-bar.
    use_aggregator (bool): True (default): the mean over rows; False: one score per row.
Returns:
    parent, parent_precision, parent_recall: in [0, 1], higher is better.
"""


class Parent(base.ScorerMetric):
    """PARENT on the blindspot scoring layer; the tables come as ``sources``."""

    scorer_name = "parent"
    module_description = __doc__
    module_citation = _CITATION
    module_inputs = _INPUTS

    def _compute(self, predictions: list[str], references: list[Any],
                 sources: list[str] | None = None, lambda_weight: float = 0.5,
                 use_aggregator: bool = True, **options: Any) -> dict[str, Any]:
        return self._score(predictions, references, sources, use_aggregator=use_aggregator,
                           lambda_weight=lambda_weight, **options)
