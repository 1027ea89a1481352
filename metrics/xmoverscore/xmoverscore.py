"""XMoverScore (Zhao et al., 2020) on blindspot's scoring layer.

Reference-free MT evaluation: the source (``sources``) and the translation (``predictions``) are
encoded by a multilingual encoder (layer ``layer``), the source's vectors optionally remapped
(``mapping="CLP"``: times the released projection; ``"UMD"``: less the released bias direction;
give the file with ``remapping=``), each text becomes its ``ngram`` means, and ``xmover`` = 1 -
the earth mover's cost after the smallest ``dropout_rate`` of the flows are dropped. ``lm`` is
the translation's mean token log-probability under ``lm_model``, and ``xmoverscore = xmover +
lm_weight * lm``. Paper defaults: ``model="bert-base-multilingual-cased"``, ``layer=8``,
``ngram=2``, ``dropout_rate=0.3``, ``lm_model="gpt2"``, ``lm_weight=0.1``, CLP remapping (its
matrix per language pair is released by the authors; ``mapping="none"`` is the default here).
``lm_model=None`` leaves the LM term out (``lm`` = 0).

Examples:
    >>> import evaluate
    >>> xmover = evaluate.load("metrics/xmoverscore")
    >>> out = xmover.compute(predictions=["The cat sat on the mat.", "Stocks fell."],
    ...                      sources=["The cat sat on the mat.", "Die Katze schlief."],
    ...                      model="minilm", layer=6, lm_model=None, use_aggregator=False)
    >>> round(out["xmover"][0], 6), out["lm"]  # identical texts: no transport cost
    (1.0, [0.0, 0.0])
    >>> out["xmoverscore"] == out["xmover"]
    True
"""

import blindspot.scoring.module as base
from blindspot.scorers.xmoverscore import XMOVERSCORE_CITATION

_INPUTS = """
Args:
    predictions (list of str): translations.
    sources (list of str): their sources.
    model, layer, ngram, mapping, remapping, dropout_rate, lm_model, lm_weight, batch_size,
    device: see the description.
    use_aggregator (bool): mean over rows (default) or per-row lists.
Returns:
    xmoverscore: xmover + lm_weight * lm; xmover: at most 1; lm: a mean log-probability (<= 0).
    Higher is better.
"""


class XMoverScore(base.ScorerMetric):
    """XMoverScore on the blindspot scoring layer."""

    scorer_name = "xmoverscore"
    module_description = __doc__
    module_citation = XMOVERSCORE_CITATION
    module_inputs = _INPUTS
