"""SacreBLEU (Post, 2018): a drop-in for evaluate's canonical ``sacrebleu`` module.

The same arguments, defaults and outputs as ``evaluate.load("sacrebleu")``: sacrebleu's
``corpus_bleu`` on a 0-100 scale with its sufficient statistics (``score``, ``counts``,
``totals``, ``precisions``, ``bp``, ``sys_len``, ``ref_len``), and the arguments
``smooth_method`` ("exp"), ``smooth_value``, ``force``, ``lowercase``, ``tokenize`` (sacrebleu's
default, "13a") and ``use_effective_order`` (False). Every prediction needs the same number of
references, as there.

Added: ``use_aggregator=False`` gives per-row SENTENCE BLEU (``score`` is then a list, one value
per row, deduplicated and cached), with ``sentence_bleu``'s settings (exponential smoothing,
effective order unless ``use_effective_order=False``): what the blind-spot protocol judges
(``blindspot run --metrics bleu``: the runner's ``bleu`` is this sentence BLEU, 0-100). For
evaluate's classic 0-1 corpus BLEU use the ``bleu`` module.

Examples:
    >>> import evaluate
    >>> sacrebleu = evaluate.load("blindspot/sacrebleu")
    >>> predictions = ["hello there general kenobi", "on our way to ankh morpork"]
    >>> references = [["hello there general kenobi", "hello there !"],
    ...               ["goodbye ankh morpork", "ankh morpork"]]
    >>> results = sacrebleu.compute(predictions=predictions, references=references)
    >>> print(list(results.keys()))
    ['score', 'counts', 'totals', 'precisions', 'bp', 'sys_len', 'ref_len']
    >>> print(round(results["score"], 1))
    39.8
    >>> out = sacrebleu.compute(predictions=["The cat sat on the mat."],
    ...                         references=[["The cat is on the mat."]], use_aggregator=False)
    >>> [round(v, 2) for v in out["score"]]
    [48.89]
"""

from typing import Any

from sacrebleu.metrics import BLEU

import blindspot.scoring.module as base
from blindspot.scoring.canonical import SACREBLEU_ARGUMENTS, reference_streams, renamed

_CITATION = """\
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
    predictions (list of str): hypotheses (detokenized text).
    references (list of str or list of list of str): one or several references per hypothesis
        (the same number for every hypothesis, unless use_aggregator=False).
    smooth_method (str): "exp" (default), "none", "floor" or "add-k".
    smooth_value (float): for "floor" (default 0.1) and "add-k" (default 1).
    tokenize (str): sacrebleu tokenizer ("13a" by default, "intl", "zh", "char", "none"...).
    lowercase (bool): case-insensitive, default False.
    force (bool): accept tokenized input without complaint, default False.
    use_effective_order (bool): leave out n-gram orders without any match; default False for
        the corpus score, True for per-row sentence scores.
    use_aggregator (bool): True (default): corpus BLEU, as evaluate's ``sacrebleu``; False:
        per-row sentence BLEU (a list), what the blind-spot protocol judges.
Returns:
    score: BLEU in [0, 100], higher is better; counts, totals, precisions: n-gram matches,
    n-gram totals and precisions (percent) per order; bp: brevity penalty; sys_len, ref_len:
    hypothesis and reference lengths. With use_aggregator=False: score, a list per row, only.
"""


class Sacrebleu(base.ScorerMetric):
    """sacreBLEU: evaluate's ``sacrebleu`` plus per-row sentence scores on the scoring layer."""

    scorer_name = "bleu"
    module_description = __doc__
    module_citation = _CITATION
    module_inputs = _INPUTS

    # evaluate's canonical module's own keywords: the contract this drop-in keeps
    def _compute(self, predictions: list[str], references: list[Any],  # type: ignore[override]
                 smooth_method: str = "exp", smooth_value: float | None = None,
                 force: bool = False, lowercase: bool = False, tokenize: str | None = None,
                 use_effective_order: bool | None = None,
                 use_aggregator: bool = True) -> dict[str, Any]:
        options = renamed({"smooth_method": smooth_method, "smooth_value": smooth_value,
                           "force": force, "lowercase": lowercase, "tokenize": tokenize,
                           "use_effective_order": use_effective_order}, SACREBLEU_ARGUMENTS)
        if not use_aggregator:
            return {"score": self.scorer_rows(predictions, references, **options)["bleu"]}
        out = BLEU(**options).corpus_score(predictions, reference_streams(references))
        return {"score": out.score, "counts": out.counts, "totals": out.totals,
                "precisions": out.precisions, "bp": out.bp, "sys_len": out.sys_len,
                "ref_len": out.ref_len}
