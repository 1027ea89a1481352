"""BLEU (Papineni et al., 2002) through sacrebleu, on blindspot's cached scoring layer.

Sentence level by default: one score per row with sacrebleu's ``sentence_bleu`` settings
(exponential smoothing, effective order), the mean over rows with ``use_aggregator=True``.
``level="corpus"`` gives sacrebleu's ``corpus_bleu`` (n-gram statistics pooled over all rows, its
defaults). Several references per row are passed to sacrebleu as such; at corpus level a row with
fewer references than the others gets "" in the missing positions. Options are sacrebleu's
``BLEU`` arguments (``tokenize``, ``lowercase``, ``smooth_method``, ``smooth_value``,
``max_ngram_order``, ``effective_order``...).

Examples:
    >>> import evaluate
    >>> bleu = evaluate.load("metrics/bleu")
    >>> out = bleu.compute(predictions=["The cat sat on the mat."],
    ...                    references=[["The cat is on the mat."]], use_aggregator=False)
    >>> round(out["bleu"][0], 2)
    48.89
    >>> round(bleu.compute(predictions=["The cat sat on the mat.", "Hello world"],
    ...                    references=["The cat is on the mat.", "Hello there world"],
    ...                    level="corpus")["bleu"], 2)
    42.48
"""

import blindspot.scoring.module as base

_CITATION = """\
@inproceedings{papineni-etal-2002-bleu,
    title = "{B}leu: a Method for Automatic Evaluation of Machine Translation",
    author = "Papineni, Kishore and Roukos, Salim and Ward, Todd and Zhu, Wei-Jing",
    booktitle = "Proceedings of the 40th Annual Meeting of the Association for Computational Linguistics",
    year = "2002",
    pages = "311--318",
}
@inproceedings{post-2018-call,
    title = "A Call for Clarity in Reporting {BLEU} Scores",
    author = "Post, Matt",
    booktitle = "Proceedings of the Third Conference on Machine Translation: Research Papers",
    year = "2018",
    pages = "186--191",
}
"""

_INPUTS = """
Args:
    predictions (list of str): hypotheses.
    references (list of str or list of list of str): one or several references per hypothesis.
    use_aggregator (bool): mean over rows (default) or per-row lists.
    level (str): "sentence" (default, sentence_bleu per row) or "corpus" (corpus_bleu).
    Other keyword arguments: sacrebleu BLEU options (tokenize, lowercase, smooth_method...).
Returns:
    bleu: score in [0, 100], higher is better (a list per row when use_aggregator=False).
"""


class Bleu(base.ScorerMetric):
    """BLEU on the blindspot scoring layer."""

    scorer_name = "bleu"
    module_description = __doc__
    module_citation = _CITATION
    module_inputs = _INPUTS
