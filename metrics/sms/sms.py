"""Sentence Mover's Similarity on blindspot's cached scoring layer.

Sentence Mover's Similarity (Clark et al., 2019): a text is a bag of sentences (NLTK punkt's), each
the mean of its word vectors and weighing its share of the text's words; the score is `exp(-EMD)`
between the two bags, Euclidean distance as the cost. `s_wms` is the paper's S+WMS: words and
sentences in one bag, each kind carrying half of the mass. The words are those of the authors'
code (eaclark07/sms): spaCy's alphabetic tokens that are not NLTK stop words, lower-cased
(`tokens="all"` keeps every word).

Runs offline on MiniLM (``model_type="minilm"``, its input embeddings as word vectors). Several
references per hypothesis are averaged. See ``blindspot/scorers/`` for every choice and why.

Examples:
    >>> import evaluate
    >>> metric = evaluate.load("metrics/sms")
    >>> out = metric.compute(predictions=["The storm hit the coast. Thousands lost power.",
    ...                                   "Prices rose."],
    ...                      references=["Thousands lost power. The storm hit the coast.",
    ...                                  "Inflation climbed in May."],
    ...                      model_type="minilm", use_aggregator=False)
    >>> [round(s, 2) for s in out["sms"]]
    [1.0, 0.36]
"""

import blindspot.scorers._word_vectors as words
import blindspot.scoring.module as base

_CITATION = """\
@inproceedings{clark-etal-2019-sentence,
    title = "Sentence Mover{'}s Similarity: Automatic Evaluation for Multi-Sentence Texts",
    author = "Clark, Elizabeth and Celikyilmaz, Asli and Smith, Noah A.",
    booktitle = "Proceedings of ACL 2019",
    year = "2019",
}
"""  # noqa: E501 (published BibTeX, kept verbatim)

_INPUTS = words.module_inputs(
    """    sms: in (0, 1], higher is better (judged by blindspot); s_wms: S+WMS, in (0, 1].""")


class SentenceMoversSimilarity(base.ScorerMetric):
    """Sentence Mover's Similarity on the blindspot scoring layer."""

    scorer_name = "sms"
    module_description = __doc__
    module_citation = _CITATION
    module_inputs = _INPUTS
