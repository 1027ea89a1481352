"""Perplexity under a causal language model: a drop-in for evaluate's canonical ``perplexity``.

The same arguments, defaults and outputs as ``evaluate.load("perplexity")``: ``model_id`` (a
causal LM; required), ``batch_size`` (16), ``add_start_token`` (True: the BOS token goes before
each text so that its first word is scored too; False: the first token is only context),
``device`` ("cuda" when available; "gpu" means "cuda"), ``max_length`` (None); returns
``perplexities`` (one per text, exp of the mean negative log-likelihood of its tokens) and
``mean_perplexity``.

Added: ``model_id`` may be a local folder or the offline short name ``"smollm2"``
(SmolLM2-135M); per-text scores are deduplicated and cached on disk; the model loads once per
process. Differences where the canonical module fails: a text longer than the model's window is
cut to its first window - 1 tokens (the canonical module, without ``max_length``, passes it
whole and the model fails); an empty text scores NaN (the canonical module stops with an
assertion); a model without a BOS token gets its EOS token in front (the canonical module then
puts none).

This is the ``gpt_ppl`` scorer: a blind-spot run judges its NEGATED perplexity (higher is
better), as the blind-spots paper reports it (``blindspot run --metrics gpt_ppl``).

Examples:
    >>> import evaluate
    >>> perplexity = evaluate.load("blindspot/perplexity")
    >>> results = perplexity.compute(model_id="smollm2", predictions=["lorem ipsum",
    ...                              "Happy Birthday!", "Bienvenue"], add_start_token=False)
    >>> print(list(results.keys()))
    ['perplexities', 'mean_perplexity']
    >>> round(results["perplexities"][0]), len(results["perplexities"])
    (415, 3)
    >>> bool(results["mean_perplexity"] == sum(results["perplexities"]) / 3)
    True
"""

from typing import Any

import numpy as np

import blindspot.scoring.module as base
from blindspot.scoring.engine import score_rows
from blindspot.scoring.scorer import get_scorer

_CITATION = """\
@article{jelinek1977perplexity,
    title = {Perplexity--a measure of the difficulty of speech recognition tasks},
    author = {Jelinek, Fred and Mercer, Robert L and Bahl, Lalit R and Baker, James K},
    journal = {The Journal of the Acoustical Society of America},
    volume = {62},
    number = {S1},
    pages = {S63--S63},
    year = {1977},
}
"""

_INPUTS = """
Args:
    predictions (list of str): the texts.
    model_id (str): a causal LM: Hub id, local folder or offline short name ("smollm2").
    batch_size (int): texts per model pass, default 16.
    add_start_token (bool): put the BOS token before each text (default True).
    device (str): "cpu", "cuda" or "gpu"; default "cuda" when available.
    max_length (int): cut texts to this many tokens, the start token included (default: the
        model's window).
Returns:
    perplexities: one per text, >= 1, LOWER is better; mean_perplexity: their mean.
"""

#: the canonical module's device names -> torch's
_DEVICES = {"cpu": "cpu", "cuda": "cuda", "gpu": "cuda"}


class Perplexity(base.ScorerMetric):
    """Perplexity: evaluate's ``perplexity`` on the blindspot scoring layer."""

    scorer_name = "gpt_ppl"
    module_description = __doc__
    module_citation = _CITATION
    module_inputs = _INPUTS

    # evaluate's canonical module's own keywords: the contract this drop-in keeps
    def _compute(self, predictions: list[str], model_id: str, batch_size: int = 16,  # type: ignore[override]
                 add_start_token: bool = True, device: str | None = None,
                 max_length: int | None = None) -> dict[str, Any]:
        if device is not None and device not in _DEVICES:
            raise ValueError(f"device should be one of {', '.join(_DEVICES)}, got {device!r}")
        scorer = get_scorer(self.scorer_name, model=model_id, max_length=max_length,
                            add_start_token=add_start_token,
                            device=_DEVICES[device] if device else None)
        negated = score_rows(scorer, predictions, batch_size=batch_size)["gpt_ppl"]
        perplexities = [-value for value in negated]
        return {"perplexities": perplexities, "mean_perplexity": np.mean(perplexities)}
