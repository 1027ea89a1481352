"""BLEURT (Sellam et al., 2020) through bleurt-pytorch, on blindspot's scoring layer.

BLEURT is a BERT-style (BLEURT-20: RemBERT-based) regression model fine-tuned on human ratings:
it reads the reference and the candidate together and outputs one quality score. The checkpoints
are the official ones converted to PyTorch by the ``bleurt-pytorch`` package (paper default
BLEURT-20: ``lucadiliello/BLEURT-20``; distilled ``lucadiliello/BLEURT-20-D12``, ``-D6``,
``-D3``). Several references per row: the mean of the per-reference scores. Options: ``model``,
``max_length`` (512).

Examples:
    >>> import evaluate, tempfile
    >>> from blindspot.tiny_models import tiny_bleurt
    >>> folder = tiny_bleurt(tempfile.mkdtemp())  # random weights: the numbers mean nothing
    >>> bleurt = evaluate.load("blindspot/bleurt_score")
    >>> out = bleurt.compute(predictions=["a bird chirps by the window", "a random sentence"],
    ...                      references=[["a bird sings at the window"], ["this is random", "x"]],
    ...                      model=folder, use_aggregator=False)
    >>> len(out["bleurt"])
    2
    >>> bleurt.compute(predictions=["a bird"], model=folder)
    Traceback (most recent call last):
    ...
    ValueError: metric 'bleurt' needs references; pass references=[...]
"""

import blindspot.scoring.module as base
from blindspot.scorers.bleurt_score import CITATION as bleurt_citation

_INPUTS = """
Args:
    predictions (list of str): candidates.
    references (list of str or list of list of str): one or several references per candidate.
    model (str): Hub id or local folder of a bleurt-pytorch checkpoint
        (default "lucadiliello/BLEURT-20").
    max_length (int): token limit of a (reference, candidate) pair (default 512).
    use_aggregator (bool): mean over rows (default) or per-row lists.
Returns:
    bleurt: the regression score (BLEURT-20: roughly 0 to 1, higher is better).
"""


class BleurtScore(base.ScorerMetric):
    """BLEURT on the blindspot scoring layer."""

    scorer_name = "bleurt"
    module_description = __doc__
    module_citation = bleurt_citation
    module_inputs = _INPUTS
