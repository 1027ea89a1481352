"""BLEURT (Sellam et al., 2020) through bleurt-pytorch: a drop-in for evaluate's canonical
``bleurt``.

The same configuration, arguments and output as ``evaluate.load("bleurt")``: the configuration
names the checkpoint (``"default"`` is ``bleurt-base-128``; ``bleurt-tiny-128`` ...
``BLEURT-20``, in any case), ``compute(predictions=..., references=...)`` returns ``scores``, one
per row. The checkpoints are the official ones converted to PyTorch by bleurt-pytorch
(``lucadiliello/<name>`` on the Hub), read with the checkpoint's own maximum length (128 for the
``-128`` ones, else 512); the canonical module runs the TensorFlow originals, which this machine
cannot (Google's ``bleurt`` is not on PyPI), so equality with them holds as far as the ports'.

Added: ``model=`` a bleurt-pytorch folder or Hub id instead of the configuration's; several
references per row (the mean of the per-reference scores); each distinct pair is scored once and
cached on disk.

A blind-spot run scores the same per-row BLEURT (``blindspot run --metrics bleurt``, the
``bleurt_score`` module) with the paper's checkpoint, BLEURT-20.

Examples:
    >>> import evaluate, tempfile
    >>> from blindspot.tiny_models import tiny_bleurt
    >>> folder = tiny_bleurt(tempfile.mkdtemp())  # random weights: the numbers mean nothing
    >>> bleurt = evaluate.load("metrics/bleurt")
    >>> out = bleurt.compute(predictions=["hello there", "general kenobi"],
    ...                      references=["hello there", "general kenobi"], model=folder)
    >>> list(out), len(out["scores"])
    (['scores'], 2)
"""

from typing import Any

import blindspot.scoring.module as base
from blindspot.scorers.bleurt_score import CITATION as bleurt_citation

_INPUTS = """
Args:
    predictions (list of str): candidates.
    references (list of str or list of list of str): references (several are averaged).
    model (str): a bleurt-pytorch folder or Hub id instead of the configuration's checkpoint.
Returns:
    scores: BLEURT per row, higher is better (about 0 to 1 for BLEURT-20).
"""

#: the canonical module's checkpoints -> their maximum sequence length
CHECKPOINTS = {"bleurt-tiny-128": 128, "bleurt-tiny-512": 512, "bleurt-base-128": 128,
               "bleurt-base-512": 512, "bleurt-large-128": 128, "bleurt-large-512": 512,
               "BLEURT-20-D3": 512, "BLEURT-20-D6": 512, "BLEURT-20-D12": 512, "BLEURT-20": 512}
#: the checkpoint of the "default" configuration
DEFAULT_CHECKPOINT = "bleurt-base-128"
#: where bleurt-pytorch publishes its conversions
PORT_NAMESPACE = "lucadiliello"


def checkpoint(config_name: str) -> tuple[str, int]:
    """(model id, maximum length) of a configuration; a clear error lists the valid names."""
    name = DEFAULT_CHECKPOINT if config_name == "default" else config_name
    canonical = {key.lower(): key for key in CHECKPOINTS}.get(name.lower())
    if canonical is None:
        raise KeyError(f"{config_name} model not found. You should supply the name of a model "
                       f"checkpoint for bleurt in {list(CHECKPOINTS)} (or model=...)")
    return f"{PORT_NAMESPACE}/{canonical}", CHECKPOINTS[canonical]


class Bleurt(base.ScorerMetric):
    """BLEURT: evaluate's ``bleurt`` on bleurt-pytorch, on the blindspot scoring layer."""

    scorer_name = "bleurt"
    module_description = __doc__
    module_citation = bleurt_citation
    module_inputs = _INPUTS

    def _compute(self, predictions: list[str], references: list[Any],
                 model: str | None = None) -> dict[str, Any]:
        if model is None:
            model, max_length = checkpoint(self.config_name)
        else:
            max_length = 512
        rows = self.scorer_rows(predictions, references, model=model, max_length=max_length)
        return {"scores": rows["bleurt"]}
