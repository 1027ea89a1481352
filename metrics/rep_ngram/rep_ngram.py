"""Negated rep-n (Welleck et al., 2020's seq-rep-n), on blindspot's cached scoring layer.

Reference-free degeneration score of one text: the fraction of its n-gram occurrences that
repeat an n-gram seen earlier in the same text, ``rep-n = 1 - |unique n-grams| / |n-grams|``,
NEGATED so that higher is better: ``rep_ngram = -rep-n`` in [-1, 0]; 0 means no repeated n-gram.
n = 4 by default (the blind-spots paper's "n-rep-4gram"). A text with fewer than n tokens has no
n-grams and scores 0. Tokens are whitespace-separated words (no lower-casing); ``tokenizer=``
a Hugging Face tokenizer name or folder counts subword tokens instead (Welleck et al. used GPT-2
BPE: ``tokenizer="gpt2"`` where the Hub is reachable). ``level="corpus"`` is the mean over texts,
the aggregate Welleck et al. report. Diversity of several texts together is ``ngram_entropy``
at corpus level.

Examples:
    >>> import evaluate
    >>> rep = evaluate.load("metrics/rep_ngram")
    >>> text = "the cat sat on the mat and the cat sat on the hat"
    >>> out = rep.compute(predictions=[text, "no repeats in here at all"], use_aggregator=False)
    >>> [round(v, 4) for v in out["rep_ngram"]]  # 10 4-grams, 8 distinct: -(1 - 8/10)
    [-0.2, 0.0]
    >>> round(rep.compute(predictions=[text], n=2)["rep_ngram"], 4)  # 12 bigrams, 8 distinct
    -0.3333
"""

import blindspot.scoring.module as base

_CITATION = """\
@inproceedings{welleck-etal-2020-neural,
    title = "Neural Text Generation With Unlikelihood Training",
    author = "Welleck, Sean and Kulikov, Ilia and Roller, Stephen and Dinan, Emily and Cho, Kyunghyun and Weston, Jason",
    booktitle = "International Conference on Learning Representations",
    year = "2020",
}
"""  # noqa: E501 (published BibTeX / exact doctest output, kept verbatim)

_INPUTS = """
Args:
    predictions (list of str): texts (no references).
    n (int): n-gram order, default 4.
    tokenizer (str): "whitespace" (default) or a Hugging Face tokenizer name / folder.
    use_aggregator (bool): mean over rows (default) or per-row lists.
    level (str): "sentence" (default) or "corpus" (the mean over texts).
Returns:
    rep_ngram: -(1 - unique/total n-grams) in [-1, 0], higher is better (less repetition).
"""


class RepNgram(base.ScorerMetric):
    """Negated rep-n on the blindspot scoring layer."""

    scorer_name = "rep_ngram"
    module_description = __doc__
    module_citation = _CITATION
    module_inputs = _INPUTS
