"""BERTScore (Zhang et al., 2020) through bert_score: a drop-in for evaluate's canonical
``bertscore`` module.

Greedy cosine matching of contextual token embeddings: precision matches each hypothesis token
to its most similar reference token, recall the other way round, F1 is their harmonic mean.

The same arguments, defaults and outputs as ``evaluate.load("bertscore")``: ``lang`` or
``model_type`` (one is required; ``lang`` picks bert_score's model for the language),
``num_layers`` (bert_score's tuned layer), ``idf`` (weights from all references of the call),
``rescale_with_baseline`` (with ``lang``; ``baseline_path`` for a custom LAYER,P,R,F file),
``batch_size``, ``device``, ``use_fast_tokenizer``; per-row lists ``precision``, ``recall``,
``f1`` and bert_score's ``hashcode``. Several references per row: the best of each of P, R and F,
as ``bert_score.score``. ``verbose`` and ``nthreads`` are accepted and change nothing.

Added: ``model_type`` may be an offline short name (``"minilm"``) or a local folder, and any
encoder outside bert_score's table (its last layer by default); ``use_aggregator=True`` gives the
means; ``references_reduce="mean"`` averages several references (the blind-spot runner's
setting, as Zhang et al.); the model loads once per process and every distinct text is encoded
once and cached. Inputs longer than the encoder's maximum length are cut by bert_score: the call
warns once with their number, and the result says it (``truncated_inputs``, the number of
distinct texts cut; ``max_length``, the limit in tokens).

Examples:
    >>> import evaluate
    >>> bertscore = evaluate.load("metrics/bertscore")
    >>> out = bertscore.compute(predictions=["hello there", "general kenobi"],
    ...                         references=["hello there", "general kenobi"], model_type="minilm")
    >>> print([round(v, 2) for v in out["f1"]])
    [1.0, 1.0]
    >>> out["truncated_inputs"], out["max_length"]
    (0, 512)
    >>> out = bertscore.compute(predictions=["A cat is sitting on a mat.", "Dogs bark."],
    ...                         references=["The cat sat on the mat.", "Dogs bark loudly."],
    ...                         model_type="minilm")
    >>> [round(f, 2) for f in out["f1"]]
    [0.89, 0.85]
"""

from typing import Any

from bert_score.utils import get_hash, lang2model

import blindspot.scoring.module as base
from blindspot.scorers._encoders import with_idf_corpus
from blindspot.scoring.engine import score_rows
from blindspot.scoring.scorer import get_scorer

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
    references (list of str or list of list of str): one or several references per hypothesis.
    lang (str): language of the texts (e.g. "en"); picks the model when model_type is not given.
    model_type (str): Hub id, local folder or offline short name ("minilm").
    num_layers (int): layer whose output is used; default bert_score's tuned layer (17 for
        roberta-large), else the model's last layer.
    idf (bool): idf weighting from all references of the call (default False).
    rescale_with_baseline (bool): rescale with bert_score's baseline of the model and lang, or
        with the LAYER,P,R,F file of baseline_path: (s - b) / (1 - b).
    baseline_path (str): a custom baseline file (used with rescale_with_baseline=True).
    batch_size (int): model batch size (default 64). device (str): default cuda if available.
    use_fast_tokenizer (bool): the tokenizer's fast version (default False).
    verbose (bool), nthreads (int): accepted, change nothing.
    use_aggregator (bool): False (default): per-row lists; True: their means.
    references_reduce (str): "max" (default, bert_score's) or "mean" over several references.
Returns:
    precision, recall, f1: BERTScore per row (about [0, 1] unrescaled), higher is better;
    hashcode: bert_score's description of the setting; truncated_inputs: how many distinct
    texts were longer than the encoder's max_length (tokens) and cut to it.
"""


class BertScore(base.ScorerMetric):
    """BERTScore P/R/F: evaluate's ``bertscore`` on the blindspot scoring layer."""

    scorer_name = "bertscore"
    module_description = __doc__
    module_citation = _CITATION
    module_inputs = _INPUTS

    def _compute(self, predictions: list[str], references: list[Any], lang: str | None = None,
                 model_type: str | None = None, num_layers: int | None = None,
                 verbose: bool = False, idf: bool = False, device: str | None = None,
                 batch_size: int = 64, nthreads: int = 4, all_layers: bool = False,
                 rescale_with_baseline: bool = False, baseline_path: str | None = None,
                 use_fast_tokenizer: bool = False, use_aggregator: bool = False,
                 references_reduce: str = "max") -> dict[str, Any]:
        if model_type is None:
            if lang is None:
                raise ValueError("Either 'lang' (e.g. 'en') or 'model_type' (e.g. "
                                 "'microsoft/deberta-xlarge-mnli') must be specified")
            model_type = lang2model[lang.lower()]
        if all_layers:
            raise ValueError("all_layers=True (scores of every layer) is not supported; pick a "
                             "layer with num_layers=")
        options = with_idf_corpus(
            {"model_type": model_type, "num_layers": num_layers, "idf": idf, "lang": lang,
             "rescale_with_baseline": rescale_with_baseline,
             "baseline_path": baseline_path if rescale_with_baseline else None,
             "use_fast_tokenizer": use_fast_tokenizer, "batch_size": batch_size,
             "device": device, "references_reduce": references_reduce}, references, False)
        scorer = get_scorer(self.scorer_name, **options)
        rows = score_rows(scorer, predictions, references)
        hashcode = get_hash(model_type, scorer.config["num_layers"], idf, rescale_with_baseline,
                            baseline_path is not None, use_fast_tokenizer)
        return {**(base.aggregate(rows) if use_aggregator else rows), "hashcode": hashcode,
                **base.truncation_report(scorer, predictions, references)}
