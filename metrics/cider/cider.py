"""CIDEr-D (Vedantam et al., 2015): consensus-based image-description evaluation, the CIDEr of the
COCO caption evaluation, written from its definition and measured against ``pycocoevalcap`` 1.2's
``Cider`` with its PTB tokenizer (docs/metrics.md gives the figure).

Tf-idf weighted n-gram (1..4) cosine similarity between a caption and each of its references,
the caption's weights clipped at the reference's, a Gaussian penalty on the length difference
(sigma 6), averaged over references and orders and multiplied by 10. The idf corpus is the
references of the call (one document per row), as in the COCO evaluation; ``idf=False`` weighs
every n-gram 1. Tokens are COCO's: its PTB tokenizer's, lower-cased, punctuation dropped
("34-year-old" one token), computed in Python (no Java; 0.5% of texts tokenize otherwise than the
jar). ``cider`` is the mean over rows; ``use_aggregator=False`` gives one score per row
(deduplicated and cached), what ``blindspot run --metrics cider`` judges.

Examples:
    >>> import evaluate
    >>> cider = evaluate.load("metrics/cider")
    >>> predictions = ["a man rides a horse on the beach", "two dogs play in the snow"]
    >>> references = [["a man riding a horse on a beach", "a person on a horse at the beach"],
    ...               ["two dogs playing in the snow", "dogs run through snow"]]
    >>> out = cider.compute(predictions=predictions, references=references, use_aggregator=False)
    >>> [round(v, 4) for v in out["cider"]]
    [2.4879, 2.1723]
    >>> out = cider.compute(predictions=predictions, references=references, idf=False,
    ...                     use_aggregator=False)
    >>> [round(v, 4) for v in out["cider"]]
    [3.1576, 2.5869]
"""

from typing import Any

import blindspot.scorers._idf_metric as idf_base

_CITATION = """\
@inproceedings{vedantam2015cider,
  title={{CIDEr}: Consensus-based image description evaluation},
  author={Vedantam, Ramakrishna and Lawrence Zitnick, C and Parikh, Devi},
  booktitle={Proceedings of the IEEE Conference on Computer Vision and Pattern Recognition},
  pages={4566--4575},
  year={2015}
}
"""

_INPUTS = """
Args:
    predictions (list of str): candidate captions (or any hypotheses).
    references (list of str or list of list of str): references per prediction.
    idf (bool): weight n-grams by idf over the call's references (default True).
    sigma (float): width of the length penalty, default 6.
    use_aggregator (bool): True (default): the mean over rows; False: one score per row.
Returns:
    cider: CIDEr-D, >= 0 (10 when a caption equals each of its references), higher is better.
"""


class Cider(idf_base.IdfCorpusMetric):
    """CIDEr-D on the blindspot scoring layer, idf from the call's references."""

    scorer_name = "cider"
    module_description = __doc__
    module_citation = _CITATION
    module_inputs = _INPUTS

    def _compute(self, predictions: list[str], references: list[Any] | None = None,
                 **options: Any) -> dict[str, Any]:
        return super()._compute(predictions, references, **options)
