"""BLANC-help (Vasilyev et al., 2020) on blindspot's scoring layer.

Every ``gap``-th token of each document sentence (``sources``) is masked, and a BERT masked LM
fills it in twice: after the summary (``predictions``) and after a filler of as many "."
tokens. BLANC = (tokens the summary made right - tokens it made wrong) / masked tokens
(``measure="relative"``; ``"improve"``: right / (masked - made wrong)). In [-1, 1], higher is
better. Options: ``model`` (default ``bert-base-uncased``), ``measure``, ``gap`` (2; the paper's
figures used 6), ``gap_mask`` (1), ``min_token_length_normal`` / ``_lead`` / ``_followup``
(4 / 2 / 100), ``filler_token`` ("."), ``help_sep`` (""), ``len_sent_allow_cut`` (100),
``inference_batch_size``, ``device``: the ``blanc`` package's defaults. BLANC-tune is not offered.

Examples:
    >>> import evaluate, tempfile
    >>> from blindspot.tiny_models import tiny_masked_lm
    >>> folder = tiny_masked_lm(tempfile.mkdtemp())  # random weights: the numbers mean nothing
    >>> blanc = evaluate.load("metrics/blanc")
    >>> out = blanc.compute(predictions=["Fire crews evacuated the homes.", ""],
    ...                     sources=["A large fire forced the evacuation of several homes."] * 2,
    ...                     model=folder, use_aggregator=False)
    >>> -1 <= out["blanc"][0] <= 1, out["blanc"][1]  # an empty summary helps nothing: 0
    (True, 0.0)
"""

import blindspot.scoring.module as base
from blindspot.scorers.blanc import BLANC_CITATION

_INPUTS = """
Args:
    predictions (list of str): summaries.
    sources (list of str): their documents.
    model, measure, gap, gap_mask, min_token_length_normal, min_token_length_lead,
    min_token_length_followup, filler_token, help_sep, len_sent_allow_cut,
    inference_batch_size, device: see the description.
    use_aggregator (bool): mean over rows (default) or per-row lists.
Returns:
    blanc: in [-1, 1], higher is better.
"""


class Blanc(base.ScorerMetric):
    """BLANC-help on the blindspot scoring layer."""

    scorer_name = "blanc"
    module_description = __doc__
    module_citation = BLANC_CITATION
    module_inputs = _INPUTS
