"""BERTScore (Zhang et al., 2020) through bert_score, on blindspot's cached scoring layer.

Greedy cosine matching of contextual token embeddings: precision matches each hypothesis token
to its most similar reference token, recall the other way round, F1 is their harmonic mean.
The computation is ``bert_score``'s own, so a row scores exactly what ``bert_score.score`` gives;
the model is loaded once per process and shared, distinct inputs are scored once and cached.

Options: ``model_type`` (Hub id, local folder, or offline short name ``"minilm"``; paper default
``roberta-large``), ``num_layers`` (bert_score's tuned layer for models in its table, else the
last layer), ``idf`` (weights from all references of the call), ``baseline_path`` (rescale with a
bert_score ``LAYER,P,R,F`` baseline file; or ``rescale_with_baseline=True`` with ``lang`` for
bert_score's packaged baselines), ``batch_size``, ``device``, ``use_fast_tokenizer``. Several
references per hypothesis are averaged (bert_score itself keeps the best).

Examples:
    >>> import evaluate
    >>> bertscore = evaluate.load("metrics/bertscore")
    >>> out = bertscore.compute(predictions=["The cat sat on the mat."],
    ...                         references=[["The cat sat on the mat."]], model_type="minilm")
    >>> [round(out[key], 4) for key in ("precision", "recall", "f1")]
    [1.0, 1.0, 1.0]
    >>> out = bertscore.compute(predictions=["A cat is sitting on a mat.", "Dogs bark."],
    ...                         references=["The cat sat on the mat.", "Dogs bark loudly."],
    ...                         model_type="minilm", use_aggregator=False)
    >>> [round(f, 2) for f in out["f1"]]
    [0.89, 0.85]
"""

import blindspot.scorers._idf_metric as idf_base

_CITATION = """\
@inproceedings{bert-score,
    title = {BERTScore: Evaluating Text Generation with BERT},
    author = {Tianyi Zhang and Varsha Kishore and Felix Wu and Kilian Q. Weinberger and Yoav Artzi},
    booktitle = {International Conference on Learning Representations},
    year = {2020},
    url = {https://openreview.net/forum?id=SkeHuCVFDr}
}
"""

_INPUTS = """
Args:
    predictions (list of str): hypotheses.
    references (list of str or list of list of str): one or several references per hypothesis
        (several are averaged).
    model_type (str): Hub id, local folder or offline short name ("minilm"); default roberta-large.
    num_layers (int): layer whose output is used; default bert_score's tuned layer (17 for
        roberta-large), else the model's last layer.
    idf (bool): idf weighting from all references of the call (default False).
    baseline_path (str): a bert_score baseline file (LAYER,P,R,F); rescales to (s - b) / (1 - b).
    rescale_with_baseline (bool), lang (str): rescale with bert_score's packaged baseline.
    batch_size (int): model batch size (default 64). device (str): default cuda if available.
    use_aggregator (bool): mean over rows (default) or per-row lists.
Returns:
    precision, recall, f1: BERTScore in [-1, 1] (about [0, 1] unrescaled), higher is better.
"""


class BertScore(idf_base.IdfCorpusMetric):
    """BERTScore P/R/F on the blindspot scoring layer."""

    scorer_name = "bertscore"
    module_description = __doc__
    module_citation = _CITATION
    module_inputs = _INPUTS
