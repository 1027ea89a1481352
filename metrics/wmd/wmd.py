"""Word Mover's Distance on blindspot's cached scoring layer.

Word Mover's Distance (Kusner et al., 2015): each text is a normalised bag of words (each distinct
word weighs its count over the word count); WMD is the earth mover's distance between the two bags
with the Euclidean distance of the word vectors as the cost, solved exactly (POT's `ot.emd2`).
`wms` is the similarity `exp(-wmd)` (Clark et al., 2019), the form Fabbri et al.'s SummEval code,
which Sai et al. ran, reports.

Runs offline on MiniLM (``model_type="minilm"``, its input embeddings as word vectors). Several
references per hypothesis are averaged. See ``blindspot/scorers/`` for every choice and why.

Examples:
    >>> import evaluate
    >>> metric = evaluate.load("metrics/wmd")
    >>> out = metric.compute(predictions=["The cat sat on the mat.", "Stocks fell sharply.",
    ...                                   "A dog barks. It is loud."],
    ...                      references=["The cat sat on the mat.", "Markets dropped today.",
    ...                                  "The dog barks loudly. Neighbours woke up."],
    ...                      model_type="minilm", use_aggregator=False)
    >>> [round(s, 2) for s in out["wms"]]
    [1.0, 0.32, 0.49]
"""

import blindspot.scorers._word_vectors as words
import blindspot.scoring.module as base

_CITATION = """\
@inproceedings{kusner2015wmd,
    title = "From Word Embeddings To Document Distances",
    author = "Kusner, Matt and Sun, Yu and Kolkin, Nicholas and Weinberger, Kilian",
    booktitle = "Proceedings of ICML 2015",
    year = "2015",
}
"""  # noqa: E501 (published BibTeX, kept verbatim)

_INPUTS = words.module_inputs(
    """    wms: exp(-wmd) in (0, 1], higher is better (judged by blindspot); wmd: the distance, >= 0,
        lower is better (NaN when exactly one of the texts has no word).""")


class WordMoversDistance(base.ScorerMetric):
    """Word Mover's Distance on the blindspot scoring layer."""

    scorer_name = "wmd"
    module_description = __doc__
    module_citation = _CITATION
    module_inputs = _INPUTS
