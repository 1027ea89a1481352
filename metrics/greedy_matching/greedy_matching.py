"""Greedy Matching on blindspot's cached scoring layer.

Greedy Matching (Rus & Lintean, 2012), as nlg-eval computes it: every word of one text is matched to
the word of the other text with the highest cosine; the mean of those best cosines is taken in
both directions and the score is their average.

Runs offline on MiniLM (``model_type="minilm"``, its input embeddings as word vectors). Several
references per hypothesis are averaged. See ``blindspot/scorers/`` for every choice and why.

Examples:
    >>> import evaluate
    >>> metric = evaluate.load("metrics/greedy_matching")
    >>> out = metric.compute(predictions=["The movie was great fun.", "He left early."],
    ...                      references=["The film was very enjoyable.", "She stayed late."],
    ...                      model_type="minilm", use_aggregator=False)
    >>> [round(s, 2) for s in out["greedy_matching"]]
    [0.74, 0.55]
"""

import blindspot.scorers._word_vectors as words
import blindspot.scoring.module as base

_CITATION = """\
@inproceedings{rus-lintean-2012-comparison,
    title = "A Comparison of Greedy and Optimal Assessment of Natural Language Student Input Using Word-to-Word Similarity Metrics",
    author = "Rus, Vasile and Lintean, Mihai",
    booktitle = "Proceedings of the Seventh Workshop on Building Educational Applications Using {NLP}",
    pages = "157--162",
    year = "2012",
}
"""  # noqa: E501 (published BibTeX, kept verbatim)

_INPUTS = words.module_inputs(
    """    greedy_matching: in [-1, 1], higher is better; 1 for identical texts.""")


class GreedyMatching(base.ScorerMetric):
    """Greedy Matching on the blindspot scoring layer."""

    scorer_name = "greedy_matching"
    module_description = __doc__
    module_citation = _CITATION
    module_inputs = _INPUTS
