"""n-gram entropy Ent-n (Zhang et al., 2018), on blindspot's cached scoring layer.

Reference-free diversity: the entropy ``-sum_g p(g) log p(g)`` of the empirical distribution of
n-grams, ``p(g) = count(g) / number of n-grams``; n = 4 by default, natural log by default
(``log_base=2`` gives bits). Per row (default) it is the entropy of that text's own n-grams;
``level="corpus"`` pools the n-gram counts of all texts, as Zhang et al. compute it over all
generated responses (so corpus entropy is not the mean of row entropies). Higher is more diverse;
a text with fewer than n tokens has no n-grams and scores 0. Tokens are whitespace-separated words
(no lower-casing); ``tokenizer=`` a Hugging Face tokenizer name or folder counts subword tokens.

Examples:
    >>> import evaluate
    >>> ent = evaluate.load("metrics/ngram_entropy")
    >>> out = ent.compute(predictions=["a b c d", "a a b c"], n=1, log_base=2, use_aggregator=False)
    >>> out["ngram_entropy"]  # uniform over 4 words: 2 bits; p = (1/2, 1/4, 1/4): 1.5 bits
    [2.0, 1.5]
    >>> ent.compute(predictions=["a b", "a b"], n=1, log_base=2, level="corpus")
    {'ngram_entropy': 1.0}
"""

import blindspot.scoring.module as base

_CITATION = """\
@inproceedings{zhang-etal-2018-generating,
    title = "Generating Informative and Diverse Conversational Responses via Adversarial Information Maximization",
    author = "Zhang, Yizhe and Galley, Michel and Gao, Jianfeng and Gan, Zhe and Li, Xiujun and Brockett, Chris and Dolan, Bill",
    booktitle = "Advances in Neural Information Processing Systems",
    year = "2018",
}
"""  # noqa: E501 (published BibTeX / exact doctest output, kept verbatim)

_INPUTS = """
Args:
    predictions (list of str): texts (no references).
    n (int): n-gram order, default 4.
    tokenizer (str): "whitespace" (default) or a Hugging Face tokenizer name / folder.
    log_base (float): base of the logarithm, default e.
    use_aggregator (bool): mean over rows (default) or per-row lists.
    level (str): "sentence" (default, per text) or "corpus" (counts pooled over all texts).
Returns:
    ngram_entropy: entropy >= 0, higher is more diverse (a list per row when use_aggregator=False).
"""


class NgramEntropy(base.ScorerMetric):
    """n-gram entropy on the blindspot scoring layer."""

    scorer_name = "ngram_entropy"
    module_description = __doc__
    module_citation = _CITATION
    module_inputs = _INPUTS
