"""BARTScore: mean token log-likelihood of one text given another, on blindspot's scoring layer.

Variants (Yuan et al., 2021), one output each: ``precision`` (reference -> hypothesis), ``recall``
(hypothesis -> reference), ``f`` (their mean) and ``faithfulness`` (source -> hypothesis). Give
``references`` for the first three, ``sources`` for faithfulness, or both; a variant without its
input is NaN. With several references per row, each variant is the mean over references
(``multi_ref="mean"``, BARTScore's ``multi_ref_score`` default) or the best one (``"max"``), and
``f`` is the mean of the aggregated precision and recall. Options: ``model`` (paper default
``facebook/bart-large-cnn``; BARTScore-para is the same model fine-tuned on ParaBank2, from a local
folder), ``model_kind`` ("seq2seq", or "causal": mean log p(text | prompt + other text) under a
causal LM, e.g. the offline ``"smollm2"``), ``prompt`` (causal only, default
``"{context}\\nIn other words:\\n"``), ``multi_ref``, ``max_length``, ``device``. Scores are
log-probabilities: <= 0, higher is better.

Examples:
    >>> import evaluate
    >>> bartscore = evaluate.load("metrics/bartscore")
    >>> out = bartscore.compute(predictions=["The cat sat on the mat."],
    ...                         references=[["A cat was sitting on the mat."]],
    ...                         sources=["A cat sat on a mat all day long."],
    ...                         model_kind="causal", model="smollm2", use_aggregator=False)
    >>> sorted(out)
    ['f', 'faithfulness', 'precision', 'recall']
    >>> out["f"][0] == (out["precision"][0] + out["recall"][0]) / 2
    True
    >>> all(values[0] < 0 for values in out.values())
    True
    >>> only_source = bartscore.compute(predictions=["The cat sat on the mat."],
    ...                                 sources=["A cat sat on a mat all day long."],
    ...                                 model_kind="causal", model="smollm2")
    >>> only_source["faithfulness"] == out["faithfulness"][0], str(only_source["f"])
    (True, 'nan')
    >>> bartscore.compute(predictions=["The cat sat on the mat."], model_kind="causal",
    ...                   model="smollm2")
    Traceback (most recent call last):
    ...
    ValueError: bartscore needs references=[...] (precision, recall, f) or sources=[...] (faithfulness) for every prediction
"""  # noqa: E501 (published BibTeX / exact doctest output, kept verbatim)

import blindspot.scoring.module as base

_CITATION = """\
@inproceedings{yuan2021bartscore,
    title = "{BARTS}core: Evaluating Generated Text as Text Generation",
    author = "Yuan, Weizhe and Neubig, Graham and Liu, Pengfei",
    booktitle = "Advances in Neural Information Processing Systems",
    volume = "34",
    pages = "27263--27277",
    year = "2021",
}
"""

_INPUTS = """
Args:
    predictions (list of str): hypotheses.
    references (list of str or list of list of str, optional): one or several references per
        hypothesis (precision, recall, f).
    sources (list of str, optional): the source texts (faithfulness).
    model (str): Hub id or local folder (default "facebook/bart-large-cnn"; "gpt2-large" for
        model_kind="causal"; "smollm2" offline).
    model_kind (str): "seq2seq" (default) or "causal".
    prompt (str): causal only; must contain "{context}" once.
    multi_ref (str): "mean" (default) or "max" over references.
    max_length (int): token window (default: the model's).
    device (str): "cpu", "cuda"... (default: CUDA when available).
    use_aggregator (bool): mean over rows (default) or per-row lists.
Returns:
    precision, recall, f, faithfulness: mean log-likelihoods (<= 0, higher is better; NaN where
        the variant's input was not given).
"""


class BartScore(base.ScorerMetric):
    """BARTScore on the blindspot scoring layer; references and sources are each optional."""

    scorer_name = "bartscore"
    module_description = __doc__
    module_citation = _CITATION
    module_inputs = _INPUTS
