"""BLANC (Vasilyev et al., 2020), BLANC-help and BLANC-tune, on blindspot's scoring layer.

Every ``gap``-th token of each document sentence (``sources``) is masked, and a BERT masked LM
fills it in twice: after the summary (``predictions``) and after a filler of as many "."
tokens. BLANC = (tokens the summary made right - tokens it made wrong) / masked tokens
(``measure="relative"``; ``"improve"``: right / (masked - made wrong)). In [-1, 1], higher is
better. Options: ``model`` (default ``bert-base-uncased``), ``measure``, ``gap`` (2; the paper's
figures used 6), ``gap_mask`` (1), ``min_token_length_normal`` / ``_lead`` / ``_followup``
(4 / 2 / 100), ``filler_token`` ("."), ``help_sep`` (""), ``len_sent_allow_cut`` (100),
``inference_batch_size``, ``device``: the ``blanc`` package's defaults. ``mode="tune"`` is
BLANC-tune: a copy of the model is fine-tuned on the summary (``finetune_epochs`` 10,
``finetune_chunk_size`` 64, ``finetune_chunk_stride`` 32, ``finetune_top_fully``,
``p_token_replace`` / ``p_token_original`` 0.1, ``learning_rate`` 5e-5, ``warmup_steps`` 0,
``random_seed`` 0, seeded for every row) and compared with the original on the document alone.

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
    model, mode, measure, gap, gap_mask, min_token_length_normal, min_token_length_lead,
    min_token_length_followup, filler_token, help_sep, len_sent_allow_cut,
    finetune_epochs, finetune_chunk_size, finetune_chunk_stride, finetune_top_fully,
    p_token_replace, p_token_original, learning_rate, warmup_steps, random_seed,
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
