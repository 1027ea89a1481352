"""MLM-PPL: negated pseudo-perplexity under a masked LM, on blindspot's scoring layer.

Each token of the hypothesis in turn is masked and predicted from all the others (Salazar et al.,
2020); ``mlm_ppl = -exp(mean negative log-probability of the true tokens)``, higher is better.
The tokenizer's special tokens (``<s>``, ``</s>``, ``[CLS]``...) are context, never masked.
Masking is batched: all masked copies of a batch of texts go through the model together,
``mask_batch_size`` copies per pass, and only the masked positions reach the LM head. Options:
``model`` (a Hub id or a local folder; paper default ``roberta-large``), ``max_length``,
``mask_batch_size``, ``device``. No masked LM with its head exists offline here: the example builds
a tiny random one (its scores mean nothing, the code path is the real one).

Examples:
    >>> import math, tempfile
    >>> import evaluate, torch
    >>> from transformers import AutoTokenizer, BertConfig, BertForMaskedLM
    >>> from blindspot.models import resolve_model
    >>> folder = tempfile.mkdtemp()
    >>> tokenizer = AutoTokenizer.from_pretrained(resolve_model("minilm"))
    >>> _ = torch.manual_seed(0)
    >>> tiny = BertForMaskedLM(BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=32,
    ...                                   num_hidden_layers=2, num_attention_heads=2,
    ...                                   intermediate_size=64))
    >>> tiny.save_pretrained(folder); _ = tokenizer.save_pretrained(folder)
    >>> mlm_ppl = evaluate.load("metrics/mlm_ppl")
    >>> out = mlm_ppl.compute(predictions=["The cat sat on the mat.", ""], model=folder,
    ...                       use_aggregator=False)
    >>> out["mlm_ppl"][0] <= -1.0, math.isnan(out["mlm_ppl"][1])
    (True, True)
"""

import blindspot.scoring.module as base

_CITATION = """\
@inproceedings{salazar-etal-2020-masked,
    title = "Masked Language Model Scoring",
    author = "Salazar, Julian and Liang, Davis and Nguyen, Toan Q. and Kirchhoff, Katrin",
    booktitle = "Proceedings of the 58th Annual Meeting of the Association for Computational
                 Linguistics",
    year = "2020",
    pages = "2699--2712",
}
@inproceedings{he-etal-2023-blind,
    title = "On the Blind Spots of Model-Based Evaluation Metrics for Text Generation",
    author = "He, Tianxing and Zhang, Jingyu and Wang, Tianle and Kumar, Sachin and Cho, Kyunghyun
              and Glass, James and Tsvetkov, Yulia",
    booktitle = "Proceedings of the 61st Annual Meeting of the Association for Computational
                 Linguistics (Volume 1: Long Papers)",
    year = "2023",
}
"""

_INPUTS = """
Args:
    predictions (list of str): the texts to score.
    model (str): masked LM: Hub id or local folder (default "roberta-large").
    max_length (int): cut texts to this many tokens, special tokens included (default: the
        model's window).
    mask_batch_size (int): masked copies per forward pass (default 64; scores do not depend on it).
    device (str): "cpu", "cuda"... (default: CUDA when available).
    use_aggregator (bool): mean over rows (default) or per-row lists.
Returns:
    mlm_ppl: negated pseudo-perplexity, <= -1, higher is better (a list per row when
        use_aggregator=False; NaN for an empty text).
"""


class MlmPpl(base.ScorerMetric):
    """MLM-PPL on the blindspot scoring layer."""

    scorer_name = "mlm_ppl"
    module_description = __doc__
    module_citation = _CITATION
    module_inputs = _INPUTS
