"""ROUGE-1/2/L/Lsum (Lin, 2004) through rouge-score, on blindspot's cached scoring layer.

Outputs the keys of evaluate's own ``rouge`` metric: ``rouge1``, ``rouge2``, ``rougeL``,
``rougeLsum`` (or those of ``rouge_types``), F-measure by default. Differences from evaluate's
``rouge``, on purpose:

* stemming is ON by default (``use_stemmer=True``, Porter stemmer on words of 4+ characters), the
  setting of the blind-spots paper;
* several references per row = rouge-score's ``score_multi``: for each ROUGE type separately the
  reference with the best F-measure is taken (with ``measure="precision"`` or ``"recall"`` the
  value reported is that reference's precision or recall);
* ``use_aggregator=True`` gives the plain MEAN over rows, not evaluate's bootstrap mid value;
  ``use_aggregator=False`` gives one list per key, one value per row.

``rougeLsum`` is summary-level LCS over sentences that are separated by NEWLINES ("\\n"), as
rouge-score expects: put each sentence on its own line first, otherwise Lsum equals rougeL.
Texts are lower-cased and split on non-alphanumeric characters by rouge-score's tokenizer, so
non-Latin scripts score 0. ``level="corpus"`` gives the same mean as ``use_aggregator=True``.

Examples:
    >>> import evaluate
    >>> rouge = evaluate.load("metrics/rouge")
    >>> out = rouge.compute(predictions=["The cats sat on the mat."],
    ...                     references=[["The cat sat on the mat.", "A cat was on a mat."]])
    >>> {key: round(value, 4) for key, value in out.items()}
    {'rouge1': 1.0, 'rouge2': 1.0, 'rougeL': 1.0, 'rougeLsum': 1.0}
    >>> out = rouge.compute(predictions=["The cats sat on the mat."],
    ...                     references=[["The cat sat on the mat.", "A cat was on a mat."]],
    ...                     use_stemmer=False, rouge_types=["rouge2"], use_aggregator=False)
    >>> [round(v, 4) for v in out["rouge2"]]
    [0.6]

    Sentences on separate lines: rougeLsum matches each sentence, rougeL the whole text.

    >>> out = rouge.compute(predictions=["The cat sat.\\nThe dog ran."],
    ...                     references=["The dog ran.\\nThe cat sat."])
    >>> round(out["rougeL"], 4), round(out["rougeLsum"], 4)
    (0.5, 1.0)
"""

import blindspot.scoring.module as base

_CITATION = """\
@inproceedings{lin-2004-rouge,
    title = "{ROUGE}: A Package for Automatic Evaluation of Summaries",
    author = "Lin, Chin-Yew",
    booktitle = "Text Summarization Branches Out",
    year = "2004",
    address = "Barcelona, Spain",
    publisher = "Association for Computational Linguistics",
    pages = "74--81",
}
"""

_INPUTS = """
Args:
    predictions (list of str): hypotheses (sentences separated by "\\n" for rougeLsum).
    references (list of str or list of list of str): one or several references per hypothesis.
    rouge_types (list of str): default ["rouge1", "rouge2", "rougeL", "rougeLsum"]; any
        "rouge<N>", "rougeL", "rougeLsum".
    use_stemmer (bool): Porter stemming, default True.
    measure (str): "fmeasure" (default), "precision" or "recall".
    use_aggregator (bool): mean over rows (default) or per-row lists.
Returns:
    one key per ROUGE type ("rouge1", "rouge2", "rougeL", "rougeLsum"), each in [0, 1], higher
    is better (a list per row when use_aggregator=False).
"""


class Rouge(base.ScorerMetric):
    """ROUGE on the blindspot scoring layer."""

    scorer_name = "rouge"
    module_description = __doc__
    module_citation = _CITATION
    module_inputs = _INPUTS
