"""TER (Snover et al., 2006) through sacrebleu: a drop-in for evaluate's canonical ``ter`` module.

Translation Edit Rate: the edits (insertions, deletions, substitutions and shifts of word
sequences) that turn the hypothesis into the closest reference, divided by the average
reference length, times 100. LOWER IS BETTER (it is an error rate; it can exceed 100).

The same arguments, defaults and outputs as ``evaluate.load("ter")``: sacrebleu's corpus TER
(``score``, ``num_edits``, ``ref_length``) with ``normalized``, ``ignore_punct``,
``support_zh_ja_chars`` and ``case_sensitive`` (default False: case is ignored). Every
prediction needs the same number of references, as there.

Added: ``use_aggregator=False`` gives per-row SENTENCE TER (``score`` is then a list, one value
per row, deduplicated and cached): what the blind-spot protocol judges (``blindspot run
--metrics ter``, which negates it so that higher is better).

Examples:
    >>> import evaluate
    >>> ter = evaluate.load("metrics/ter")
    >>> predictions = ["does this sentence match??", "what about this sentence?"]
    >>> references = [["does this sentence match", "does this sentence match!?!"],
    ...               ["wHaT aBoUt ThIs SeNtEnCe?", "wHaT aBoUt ThIs SeNtEnCe?"]]
    >>> ter.compute(predictions=predictions, references=references, case_sensitive=True)
    {'score': 62.5, 'num_edits': 5, 'ref_length': 8.0}
    >>> out = ter.compute(predictions=["The cat sat on the mat."],
    ...                   references=[["The cat is on the mat."]], use_aggregator=False)
    >>> [round(v, 2) for v in out["score"]]
    [16.67]
"""

from typing import Any

from sacrebleu.metrics import TER

import blindspot.scoring.module as base
from blindspot.scoring.canonical import TER_ARGUMENTS, reference_streams, renamed

_CITATION = """\
@inproceedings{snover-etal-2006-study,
    title = "A Study of Translation Edit Rate with Targeted Human Annotation",
    author = "Snover, Matthew and Dorr, Bonnie and Schwartz, Rich and Micciulla, Linnea and Makhoul, John",
    booktitle = "Proceedings of the 7th Conference of the Association for Machine Translation in the Americas",
    year = "2006",
    pages = "223--231",
}
"""  # noqa: E501 (published BibTeX / exact doctest output, kept verbatim)

_INPUTS = """
Args:
    predictions (list of str): hypotheses.
    references (list of str or list of list of str): one or several references per hypothesis
        (the same number for every hypothesis, unless use_aggregator=False).
    normalized (bool): basic tokenization and normalization, default False.
    ignore_punct (bool): remove punctuation, default False.
    support_zh_ja_chars (bool): with normalized=True, tokenize Chinese and Japanese characters,
        default False.
    case_sensitive (bool): default False (everything is lower-cased).
    use_aggregator (bool): True (default): corpus TER, as evaluate's ``ter``; False: per-row
        sentence TER (a list), what the blind-spot protocol judges.
Returns:
    score: edits / average reference length * 100, >= 0, LOWER is better; num_edits: the edits
    summed over rows; ref_length: the average reference lengths summed over rows. With
    use_aggregator=False: score, a list per row, only.
"""


class Ter(base.ScorerMetric):
    """TER: evaluate's ``ter`` plus per-row sentence scores on the blindspot scoring layer."""

    scorer_name = "ter"
    module_description = __doc__
    module_citation = _CITATION
    module_inputs = _INPUTS

    def _compute(self, predictions: list[str], references: list[Any], normalized: bool = False,
                 ignore_punct: bool = False, support_zh_ja_chars: bool = False,
                 case_sensitive: bool = False, use_aggregator: bool = True) -> dict[str, Any]:
        options = renamed({"normalized": normalized, "ignore_punct": ignore_punct,
                           "support_zh_ja_chars": support_zh_ja_chars,
                           "case_sensitive": case_sensitive}, TER_ARGUMENTS)
        if not use_aggregator:
            return {"score": self.scorer_rows(predictions, references, **options)["ter"]}
        out = TER(**options).corpus_score(predictions, reference_streams(references))
        return {"score": out.score, "num_edits": out.num_edits, "ref_length": out.ref_length}
