"""MoverScore (Zhao et al., 2019), unigram with idf weights, on blindspot's cached scoring layer.

Each text is a cloud of its tokens' contextual embeddings (L2-normalised, last layer of the
encoder by default), weighted by reference idf; the score is ``1 - EMD`` between the hypothesis'
and the reference's clouds, solved exactly (POT's network simplex). Identical texts score 1.

Options: ``model_type`` (Hub id, local folder or offline short name ``"minilm"``; default
``distilbert-base-uncased``, the authors' current default; the paper's best was BERT fine-tuned on
MNLI), ``num_layers`` (default: the last layer), ``idf`` (default True; weights from all references
of the call), ``distance`` (``"euclidean"`` as in the paper, or ``"cosine"``), ``remove_subwords``
(only a word's first piece carries mass), ``remove_punctuation``, ``stop_words``, ``batch_size``,
``device``. Several references per hypothesis are averaged.

Examples:
    >>> import evaluate
    >>> moverscore = evaluate.load("metrics/moverscore")
    >>> out = moverscore.compute(predictions=["The cat sat on the mat."],
    ...                          references=["The cat sat on the mat."], model_type="minilm",
    ...                          idf=False)
    >>> round(out["moverscore"], 4)
    1.0
    >>> out = moverscore.compute(
    ...     predictions=["A cat is sitting on a mat.", "Stocks fell sharply.", "Dogs bark."],
    ...     references=["The cat sat on the mat.", "Markets dropped today.", "Dogs bark loudly."],
    ...     model_type="minilm", use_aggregator=False)
    >>> [round(s, 2) for s in out["moverscore"]]
    [0.43, -0.01, 0.4]
"""

import blindspot.scorers._idf_metric as idf_base

_CITATION = """\
@inproceedings{zhao-etal-2019-moverscore,
    title = "{M}over{S}core: Text Generation Evaluating with Contextualized Embeddings and Earth Mover Distance",
    author = "Zhao, Wei and Peyrard, Maxime and Liu, Fei and Gao, Yang and Meyer, Christian M. and Eger, Steffen",
    booktitle = "Proceedings of EMNLP-IJCNLP 2019",
    year = "2019",
    pages = "563--578",
}
"""  # noqa: E501 (published BibTeX / exact doctest output, kept verbatim)

_INPUTS = """
Args:
    predictions (list of str): hypotheses.
    references (list of str or list of list of str): one or several references per hypothesis
        (several are averaged).
    model_type (str): Hub id, local folder or offline short name ("minilm");
        default distilbert-base-uncased.
    num_layers (int): layer whose output is used (default: the last).
    idf (bool): idf weights from all references of the call (default True).
    distance (str): "euclidean" (default, on normalised embeddings) or "cosine".
    remove_subwords, remove_punctuation (bool, default True); stop_words (list of str).
    batch_size (int): model batch size (default 64). device (str): default cuda if available.
    use_aggregator (bool): mean over rows (default) or per-row lists.
Returns:
    moverscore: 1 - EMD, at most 1 (identical texts), higher is better; below 0 for very
        unrelated texts (the Euclidean distance of unit vectors reaches 2).
    truncated_inputs, max_length: how many distinct texts were longer than the encoder's
        max_length (tokens) and cut to it (the call warns once when any was).
"""


class MoverScore(idf_base.IdfCorpusMetric):
    """Unigram MoverScore on the blindspot scoring layer."""

    scorer_name = "moverscore"
    module_description = __doc__
    module_citation = _CITATION
    module_inputs = _INPUTS
