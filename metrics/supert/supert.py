"""SUPERT (Gao et al., 2020) on blindspot's scoring layer.

A pseudo-reference is built from the first ``pseudo_ref_sentences`` (15) sentences of the
document (``sources``); every sentence of it and of the summary (``predictions``) is encoded on
its own by a sentence-BERT encoder, special tokens and stop words are dropped, and SUPERT is the
F1 of greedy cosine matching between the two sets of token vectors (``sim_metric="recall"`` or
``"precision"`` instead). Higher is better. Options: ``model`` (default
``sentence-transformers/bert-large-nli-stsb-mean-tokens``; offline ``"minilm"``),
``pseudo_ref_sentences``, ``sim_metric``, ``stop_words`` ("nltk", the default: NLTK's English
list, as SUPERT's code; "spacy": spaCy's; or a list of words), ``batch_size``, ``device``.
Sentences are NLTK punkt's, as SUPERT's. A summary with no token left scores NaN.

Examples:
    >>> import evaluate
    >>> supert = evaluate.load("metrics/supert")
    >>> document = "A fire broke out at a factory. Two hundred homes were evacuated."
    >>> out = supert.compute(predictions=[document, "Prices of wheat rose in March."],
    ...                      sources=[document, document], model="minilm",
    ...                      use_aggregator=False)
    >>> round(out["supert"][0], 6)  # the summary is the whole pseudo-reference
    1.0
    >>> out["supert"][1] < out["supert"][0]
    True
"""

import blindspot.scoring.module as base
from blindspot.scorers.supert import SUPERT_CITATION

_INPUTS = """
Args:
    predictions (list of str): summaries.
    sources (list of str): their documents.
    model, pseudo_ref_sentences, sim_metric, stop_words, batch_size, device: see the description.
    use_aggregator (bool): mean over rows (default) or per-row lists.
Returns:
    supert: cosine-based F1 (recall or precision), at most 1, higher is better.
"""


class Supert(base.ScorerMetric):
    """SUPERT on the blindspot scoring layer."""

    scorer_name = "supert"
    module_description = __doc__
    module_citation = SUPERT_CITATION
    module_inputs = _INPUTS
