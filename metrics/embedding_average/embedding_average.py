"""Embedding Average on blindspot's cached scoring layer.

Embedding Average (Landauer & Dumais, 1997), as Sharma et al.'s nlg-eval computes it and Sai et al.
(2021) ran it: each text is the mean of its word vectors, and the score is the cosine of the two
means.

Runs offline on MiniLM (``model_type="minilm"``, its input embeddings as word vectors). Several
references per hypothesis are averaged. See ``blindspot/scorers/`` for every choice and why.

Examples:
    >>> import evaluate
    >>> metric = evaluate.load("metrics/embedding_average")
    >>> out = metric.compute(predictions=["The cat chased the dog.", "Stocks fell sharply."],
    ...                      references=["The dog chased the cat.", "Markets dropped today."],
    ...                      model_type="minilm", use_aggregator=False)
    >>> [round(s, 2) for s in out["embedding_average"]]
    [1.0, 0.4]
"""

import blindspot.scorers._word_vectors as words
import blindspot.scoring.module as base

_CITATION = """\
@article{landauer1997solution,
    title = "A solution to {P}lato's problem: The latent semantic analysis theory of acquisition, induction, and representation of knowledge",
    author = "Landauer, Thomas K. and Dumais, Susan T.",
    journal = "Psychological Review",
    volume = "104",
    number = "2",
    pages = "211--240",
    year = "1997",
}
"""  # noqa: E501 (published BibTeX, kept verbatim)

_INPUTS = words.module_inputs(
    """    embedding_average: cosine in [-1, 1], higher is better; 1 for identical texts.""")


class EmbeddingAverage(base.ScorerMetric):
    """Embedding Average on the blindspot scoring layer."""

    scorer_name = "embedding_average"
    module_description = __doc__
    module_citation = _CITATION
    module_inputs = _INPUTS
