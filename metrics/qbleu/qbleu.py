"""Q-BLEU and Q-ROUGE (Nema & Khapra, 2018): question-generation metrics that mix an n-gram
metric with the answerability of the question.

Answerability compares the question words, named entities, relevant content words and function
words of the generated and reference questions (an F-score per type, weighted 0.2 / 0.6 / 0.1 /
0.1); ``qbleuN = delta * answerability + (1 - delta) * BLEU-N`` (delta 0.7) and ``qrougeL`` the
same with ROUGE-L. By default these are what the authors' ``answerability_score.py`` computes (its
2019 version; equal to its recorded outputs on 48 rows): types from the words as written, a
question word only as a whole word, only a leading question word kept out of the named entities,
COCO's tokens, BLEU-1 F per type and COCO's sentence BLEU and ROUGE-L. ``definition="paper"`` is
the paper's reading (plain unigram F per type, sacreBLEU's BLEU-N, rouge-score's ROUGE-L).
``use_aggregator=False`` gives per-row scores, what ``blindspot run --metrics qbleu`` judges
(``qbleu4``).

Examples:
    >>> import evaluate
    >>> qbleu = evaluate.load("metrics/qbleu")
    >>> out = qbleu.compute(predictions=["At what temperature does water boil?",
    ...                                  "When was Beethoven born?"],
    ...                     references=["What is the boiling point of water?",
    ...                                 "When was Beethoven born?"], use_aggregator=False)
    >>> [round(v, 4) for v in out["qbleu1"]], [round(v, 4) for v in out["answerability"]]
    ([0.1769, 1.0], [0.1318, 1.0])

    The paper's reading scores the first pair higher ("At" is a function word there, not an entity):

    >>> out = qbleu.compute(predictions=["At what temperature does water boil?"],
    ...                     references=["What is the boiling point of water?"],
    ...                     definition="paper", use_aggregator=False)
    >>> round(out["qbleu1"][0], 4)
    0.5923
"""

from typing import Any

import blindspot.scoring.module as base

_CITATION = """\
@inproceedings{nema-khapra-2018-towards,
    title = "Towards a Better Metric for Evaluating Question Generation Systems",
    author = "Nema, Preksha and Khapra, Mitesh M.",
    booktitle = "Proceedings of the 2018 Conference on Empirical Methods in Natural Language Processing",
    year = "2018",
    pages = "3950--3959",
}
"""  # noqa: E501 (published BibTeX, kept verbatim)

_INPUTS = """
Args:
    predictions (list of str): generated questions.
    references (list of str or list of list of str): reference questions.
    ner_weight, qt_weight, re_weight (float): weights of named entities (0.6), question words
        (0.2) and relevant content words (0.1); function words get the rest.
    delta (float): weight of answerability against the n-gram metric, default 0.7.
    definition (str): "released" (default): the authors' script; "paper": the paper's reading.
    use_aggregator (bool): True (default): the mean over rows; False: one score per row.
Returns:
    qbleu4, qbleu1, qbleu2, qbleu3, qrougeL, answerability: in [0, 1], higher is better.
"""


class QBleu(base.ScorerMetric):
    """Q-BLEU-1..4 and Q-ROUGE-L on the blindspot scoring layer."""

    scorer_name = "qbleu"
    module_description = __doc__
    module_citation = _CITATION
    module_inputs = _INPUTS

    def _compute(self, predictions: list[str], references: list[Any],
                 use_aggregator: bool = True, **options: Any) -> dict[str, Any]:
        return self._score(predictions, references, use_aggregator=use_aggregator, **options)
