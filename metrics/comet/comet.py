"""COMET (Rei et al., 2020) through unbabel-comet: a drop-in for evaluate's canonical ``comet``.

The same configuration, arguments, defaults and outputs as ``evaluate.load("comet")``: the
configuration names the checkpoint (``"default"`` is ``Unbabel/wmt22-comet-da``, any other name is
passed to ``comet.download_model``: ``evaluate.load("comet", "Unbabel/XCOMET-XL")``);
``compute(sources=..., predictions=..., references=..., gpus=None, progress_bar=False)`` returns
``scores`` (one per row) and ``mean_score`` (their mean, COMET's system score). ``gpus`` None
means 1 when CUDA is available.

Added: ``model=`` a checkpoint file, model folder, Hub id or legacy name, overriding the
configuration; several references per row (the mean of the per-reference scores); the model
loads once per process and each distinct row is scored once and cached on disk.

A blind-spot run scores the same per-row COMET (``blindspot run --metrics comet``, the
``comet_score`` module), with the blind-spots paper's checkpoint ``wmt20-comet-da`` by default.

Examples:
    >>> import evaluate, tempfile
    >>> from blindspot.tiny_models import tiny_comet
    >>> folder = tiny_comet(tempfile.mkdtemp())  # random weights: the numbers mean nothing
    >>> comet = evaluate.load("metrics/comet")
    >>> out = comet.compute(sources=["Die Katze saß auf der Matte.", "Ein Hund."],
    ...                     predictions=["The cat sat on the mat.", "A dog."],
    ...                     references=["The cat was on the mat.", "A dog."], model=folder)
    >>> sorted(out), len(out["scores"])
    (['mean_score', 'scores'], 2)
"""

from typing import Any

import torch

import blindspot.scoring.module as base
from blindspot.scorers.comet_score import CITATION as comet_citation

_INPUTS = """
Args:
    sources (list of str): source sentences.
    predictions (list of str): translations.
    references (list of str or list of list of str): reference translations.
    gpus (int): 0 (CPU) or 1; default 1 when CUDA is available.
    progress_bar (bool): accepted, changes nothing (no progress bar is shown).
    model (str): a checkpoint (file, folder, Hub id or legacy name) instead of the configuration's.
Returns:
    scores: COMET per row (higher is better; the range depends on the checkpoint);
    mean_score: their mean.
"""

#: the checkpoint of the "default" configuration (the canonical module's, with unbabel-comet 2.x)
DEFAULT_CHECKPOINT = "Unbabel/wmt22-comet-da"


class Comet(base.ScorerMetric):
    """COMET: evaluate's ``comet`` on the blindspot scoring layer."""

    scorer_name = "comet"
    module_description = __doc__
    module_citation = comet_citation
    module_inputs = _INPUTS

    def _compute(self, predictions: list[str], references: list[Any], sources: list[str],
                 gpus: int | None = None, progress_bar: bool = False,
                 model: str | None = None) -> dict[str, Any]:
        checkpoint = model or (DEFAULT_CHECKPOINT if self.config_name == "default"
                               else self.config_name)
        if gpus is None:
            gpus = 1 if torch.cuda.is_available() else 0
        rows = self.scorer_rows(predictions, references, sources=sources, model=checkpoint,
                                gpus=gpus)
        scores = rows["comet"]
        return {"mean_score": sum(scores) / len(scores), "scores": scores}
