"""TER (Snover et al., 2006) through sacrebleu, on blindspot's cached scoring layer.

Translation Edit Rate: the number of edits (insertions, deletions, substitutions and shifts of
word sequences) that turn the hypothesis into the closest reference, divided by the average
reference length, times 100. LOWER IS BETTER (it is an error rate; it can exceed 100).
Sentence level by default (sacrebleu's ``sentence_ter`` per row, the mean over rows with
``use_aggregator=True``); ``level="corpus"`` gives ``corpus_ter`` (edits and reference lengths
summed over all rows before dividing). Options are sacrebleu's ``TER`` arguments
(``normalized``, ``no_punct``, ``asian_support``, ``case_sensitive``).

Examples:
    >>> import evaluate
    >>> ter = evaluate.load("metrics/ter")
    >>> out = ter.compute(predictions=["The cat sat on the mat."],
    ...                   references=[["The cat is on the mat."]], use_aggregator=False)
    >>> round(out["ter"][0], 2)
    16.67
    >>> round(ter.compute(predictions=["The cat sat on the mat.", "Hello world"],
    ...                   references=["The cat is on the mat.", "Hello there world"],
    ...                   level="corpus")["ter"], 2)
    22.22
"""

import blindspot.scoring.module as base

_CITATION = """\
@inproceedings{snover-etal-2006-study,
    title = "A Study of Translation Edit Rate with Targeted Human Annotation",
    author = "Snover, Matthew and Dorr, Bonnie and Schwartz, Rich and Micciulla, Linnea and Makhoul, John",
    booktitle = "Proceedings of the 7th Conference of the Association for Machine Translation in the Americas",
    year = "2006",
    pages = "223--231",
}
"""

_INPUTS = """
Args:
    predictions (list of str): hypotheses.
    references (list of str or list of list of str): one or several references per hypothesis.
    use_aggregator (bool): mean over rows (default) or per-row lists.
    level (str): "sentence" (default, sentence_ter per row) or "corpus" (corpus_ter).
    Other keyword arguments: sacrebleu TER options (normalized, no_punct, asian_support,
    case_sensitive).
Returns:
    ter: edit rate >= 0, LOWER is better (a list per row when use_aggregator=False).
"""


class Ter(base.ScorerMetric):
    """TER on the blindspot scoring layer."""

    scorer_name = "ter"
    module_description = __doc__
    module_citation = _CITATION
    module_inputs = _INPUTS
