"""GPT-PPL: negated perplexity of the hypothesis under a causal LM, on blindspot's scoring layer.

``gpt_ppl = -exp(mean token negative log-likelihood)``, so that higher is better (the blind-spots
paper reports it negated). Reference-free: only ``predictions`` are read. The first token is scored
too, after the tokenizer's BOS token (or EOS where there is no BOS, as for GPT-2's
``<|endoftext|>``); texts longer than the model's window keep their beginning; the empty string
scores NaN. Options: ``model`` (a Hub id, a local folder or an offline short name; paper default
``gpt2-large``, offline ``"smollm2"``), ``max_length``, ``device``. Distinct texts are scored once,
in length-sorted padded batches, and cached on disk.

Examples:
    >>> import evaluate
    >>> gpt_ppl = evaluate.load("metrics/gpt_ppl")
    >>> out = gpt_ppl.compute(predictions=["The cat sat on the mat.", "mat the on sat cat The."],
    ...                       model="smollm2", use_aggregator=False)
    >>> fluent, scrambled = out["gpt_ppl"]
    >>> round(fluent, -1), fluent > scrambled
    (-440.0, True)
    >>> round(gpt_ppl.compute(predictions=["The cat sat on the mat."], model="smollm2")["gpt_ppl"], -1)
    -440.0
"""

import blindspot.scoring.module as base

_CITATION = """\
@inproceedings{he-etal-2023-blind,
    title = "On the Blind Spots of Model-Based Evaluation Metrics for Text Generation",
    author = "He, Tianxing and Zhang, Jingyu and Wang, Tianle and Kumar, Sachin and Cho, Kyunghyun
              and Glass, James and Tsvetkov, Yulia",
    booktitle = "Proceedings of the 61st Annual Meeting of the Association for Computational
                 Linguistics (Volume 1: Long Papers)",
    year = "2023",
}
@article{radford2019language,
    title = "Language Models are Unsupervised Multitask Learners",
    author = "Radford, Alec and Wu, Jeffrey and Child, Rewon and Luan, David and Amodei, Dario
              and Sutskever, Ilya",
    year = "2019",
}
"""

_INPUTS = """
Args:
    predictions (list of str): the texts to score.
    model (str): causal LM: Hub id, local folder, or "smollm2" offline (default "gpt2-large").
    max_length (int): cut texts to this many tokens (default: the model's window).
    device (str): "cpu", "cuda"... (default: CUDA when available).
    use_aggregator (bool): mean over rows (default) or per-row lists.
Returns:
    gpt_ppl: negated perplexity, <= -1, higher is better (a list per row when
        use_aggregator=False; NaN for an empty text).
"""


class GptPpl(base.ScorerMetric):
    """GPT-PPL on the blindspot scoring layer."""

    scorer_name = "gpt_ppl"
    module_description = __doc__
    module_citation = _CITATION
    module_inputs = _INPUTS
