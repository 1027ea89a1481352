"""COMET and COMET-QE (Rei et al., 2020) through unbabel-comet, on blindspot's scoring layer.

COMET regresses a translation-quality score from a cross-lingual encoder's features of the source,
the hypothesis and (reference-based) the reference. Load ``evaluate.load("blindspot/comet_score")``
for reference-based COMET (inputs: predictions, references, sources; output ``comet``) or
``evaluate.load("blindspot/comet_score", "qe")`` for COMET-QE (predictions, sources; output
``comet_qe``). ``model`` is any COMET checkpoint: a ``.ckpt`` file, a model folder
(``hparams.yaml`` + ``checkpoints/``), a Hub id (``Unbabel/wmt22-comet-da``,
``Unbabel/wmt22-cometkiwi-da``) or a legacy name (``wmt20-comet-da``, ``wmt21-comet-qe-mqm``: the
defaults). Several references per row: the mean of the per-reference scores. The model loads once
per process and runs on a GPU when there is one (``gpus=1`` or ``device`` name it), in token
batches in the ``precision`` asked (``docs/gpu.md``), else on the CPU through COMET's ``predict``.

Examples:
    >>> import evaluate, tempfile
    >>> from blindspot.tiny_models import tiny_comet
    >>> folder = tiny_comet(tempfile.mkdtemp())  # random weights: the numbers mean nothing
    >>> comet = evaluate.load("blindspot/comet_score")
    >>> out = comet.compute(predictions=["The cat sat on the mat.", "A dog."],
    ...                     references=[["The cat was on the mat."], ["A dog.", "One dog."]],
    ...                     sources=["Die Katze saß auf der Matte.", "Ein Hund."],
    ...                     model=folder, use_aggregator=False)
    >>> sorted(out), len(out["comet"])
    (['comet'], 2)
    >>> qe = evaluate.load("blindspot/comet_score", "qe")
    >>> qe.compute(predictions=["A dog."], sources=["Ein Hund."], model=folder)
    Traceback (most recent call last):
    ...
    ValueError: model '...' (RegressionMetric) cannot score 'comet_qe' (without references); use 'comet' with it, or another checkpoint
"""  # noqa: E501 (published BibTeX / exact doctest output, kept verbatim)

import blindspot.scoring.module as base
from blindspot.scorers.comet_score import CITATION as comet_citation

_INPUTS = """
Args:
    predictions (list of str): hypotheses (translations).
    references (list of str or list of list of str): reference translations (not for "qe").
    sources (list of str): source sentences.
    model (str): COMET checkpoint file, model folder, Hub id or legacy name (defaults:
        "wmt20-comet-da"; "wmt21-comet-qe-mqm" for the "qe" configuration).
    gpus (int): 1: run on the CUDA device (default 0: a GPU when there is one, else the CPU).
    device (str): the torch device (default: CUDA when there is one, else the CPU).
    precision (str): "fp32", "tf32", "bf16", "fp16" or "auto" (default: float32 as before).
    token_budget (int): tokens per batch on the device path (default 65,536 on a GPU).
    use_aggregator (bool): mean over rows (default) or per-row lists.
Returns:
    comet (or comet_qe): the checkpoint's regression score (higher is better; the range depends
        on the checkpoint).
"""

_CONFIGS = {"default": "comet", "ref": "comet", "qe": "comet_qe"}


class CometScore(base.ScorerMetric):
    """COMET (configuration "default") or COMET-QE (configuration "qe")."""

    module_description = __doc__
    module_citation = comet_citation
    module_inputs = _INPUTS

    @property
    def scorer_name(self) -> str:  # type: ignore[override]
        """The scorer of the configuration this module was loaded with."""
        if self.config_name not in _CONFIGS:
            raise ValueError(f"unknown configuration {self.config_name!r} for comet_score; "
                             f"valid: {', '.join(_CONFIGS)}")
        return _CONFIGS[self.config_name]
