"""BLEU (Papineni et al., 2002): a drop-in for evaluate's canonical ``bleu`` module.

The same arguments, defaults and outputs as ``evaluate.load("bleu")``: corpus BLEU on a 0-1
scale, computed as the classic TensorFlow NMT script does (clipped n-gram matches pooled over all
rows, geometric mean of the n-gram precisions, brevity penalty against the sum of each row's
SHORTEST reference), on text tokenized by mteval-v13a (``tokenizer``, any str -> list of tokens
callable), with ``max_order`` (4) and ``smooth`` (False; True = add-one smoothing, Lin & Och
2004). Outputs ``bleu``, ``precisions``, ``brevity_penalty``, ``length_ratio``,
``translation_length``, ``reference_length``.

This is not sacreBLEU: for sacrebleu's 0-100 BLEU (closest reference length, exponential
smoothing) use the ``sacrebleu`` module. A blind-spot run judges BLEU per row with sacreBLEU's
sentence BLEU (``blindspot run --metrics bleu``, and this module passed to the runner, score the
``sacrebleu`` module's ``use_aggregator=False`` rows), since classic BLEU without smoothing is 0
for most single sentences.

Examples:
    >>> import evaluate
    >>> bleu = evaluate.load("metrics/bleu")
    >>> predictions = ["hello there general kenobi", "foo bar foobar"]
    >>> references = [["hello there general kenobi", "hello there!"], ["foo bar foobar"]]
    >>> results = bleu.compute(predictions=predictions, references=references)
    >>> print(results["bleu"])
    1.0
    >>> out = bleu.compute(predictions=["The cat sat on the mat."],
    ...                    references=["The cat is on the mat."])
    >>> round(out["bleu"], 4), out["precisions"][0], out["brevity_penalty"]
    (0.4889, 0.8571428571428571, 1.0)
"""

from collections.abc import Callable
from dataclasses import asdict
from typing import Any

import blindspot.scoring.module as base
from blindspot.scoring.canonical import bleu_of_texts, tokenize_13a

_CITATION = """\
@inproceedings{papineni-etal-2002-bleu,
    title = "{B}leu: a Method for Automatic Evaluation of Machine Translation",
    author = "Papineni, Kishore and Roukos, Salim and Ward, Todd and Zhu, Wei-Jing",
    booktitle = "Proceedings of the 40th Annual Meeting of the Association for Computational Linguistics",
    year = "2002",
    pages = "311--318",
}
@inproceedings{lin-och-2004-orange,
    title = "{ORANGE}: a Method for Evaluating Automatic Evaluation Metrics for Machine Translation",
    author = "Lin, Chin-Yew and Och, Franz Josef",
    booktitle = "{COLING} 2004: Proceedings of the 20th International Conference on Computational Linguistics",
    year = "2004",
    pages = "501--507",
}
"""  # noqa: E501 (published BibTeX / exact doctest output, kept verbatim)

_INPUTS = """
Args:
    predictions (list of str): hypotheses.
    references (list of str or list of list of str): one or several references per hypothesis.
    tokenizer (callable): str -> list of tokens; default mteval-v13a (as WMT).
    max_order (int): highest n-gram order, default 4.
    smooth (bool): add-one smoothing of the precisions (Lin & Och, 2004), default False.
Returns:
    bleu: corpus BLEU in [0, 1], higher is better; precisions: per n-gram order;
    brevity_penalty; length_ratio: translation_length / reference_length; translation_length,
    reference_length: token counts (reference: each row's shortest reference).
"""


class Bleu(base.ScorerMetric):
    """Classic corpus BLEU, as evaluate's ``bleu``; the runner judges sentence sacreBLEU."""

    scorer_name = "bleu"
    module_description = __doc__
    module_citation = _CITATION
    module_inputs = _INPUTS

    def _compute(self, predictions: list[str], references: list[Any],
                 tokenizer: Callable[[str], list[str]] = tokenize_13a, max_order: int = 4,
                 smooth: bool = False) -> dict[str, Any]:
        return asdict(bleu_of_texts(predictions, references, tokenizer=tokenizer,
                                    max_order=max_order, smooth=smooth))
