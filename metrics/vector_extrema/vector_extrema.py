"""Vector Extrema on blindspot's cached scoring layer.

Vector Extrema (Forgues et al., 2014), as nlg-eval computes it: each text is the vector whose every
dimension is the word value of largest magnitude in that dimension (the maximum, or the minimum
when its absolute value is larger); the score is the cosine of the two.

Runs offline on MiniLM (``model_type="minilm"``, its input embeddings as word vectors). Several
references per hypothesis are averaged. See ``blindspot/scorers/`` for every choice and why.

Examples:
    >>> import evaluate
    >>> metric = evaluate.load("metrics/vector_extrema")
    >>> out = metric.compute(predictions=["A man plays the guitar.", "It is raining."],
    ...                      references=["A person plays an instrument.",
    ...                                  "The sun is shining."],
    ...                      model_type="minilm", use_aggregator=False)
    >>> [round(s, 2) for s in out["vector_extrema"]]
    [0.61, 0.45]
"""

import blindspot.scorers._word_vectors as words
import blindspot.scoring.module as base

_CITATION = """\
@inproceedings{forgues2014bootstrapping,
    title = "Bootstrapping Dialog Systems with Word Embeddings",
    author = "Forgues, Gabriel and Pineau, Joelle and Larchev{\\^e}que, Jean-Marie and Tremblay, R{\\'e}al",
    booktitle = "NIPS Workshop on Modern Machine Learning and Natural Language Processing",
    year = "2014",
}
"""  # noqa: E501 (published BibTeX, kept verbatim)

_INPUTS = words.module_inputs(
    """    vector_extrema: cosine in [-1, 1], higher is better; 1 for identical texts.""")


class VectorExtrema(base.ScorerMetric):
    """Vector Extrema on the blindspot scoring layer."""

    scorer_name = "vector_extrema"
    module_description = __doc__
    module_citation = _CITATION
    module_inputs = _INPUTS
