"""COMET and COMET-QE (Rei et al., 2020) through the ``unbabel-comet`` package.

``comet`` is reference-based: each sample is (source, hypothesis, reference). ``comet_qe`` is the
quality-estimation variant: (source, hypothesis), no reference. Both load any COMET checkpoint
(a ``.ckpt`` file, a model folder with ``hparams.yaml`` and ``checkpoints/``, a Hub id such as
``Unbabel/wmt22-comet-da`` or a legacy name such as ``wmt20-comet-da``) with
``comet.load_from_checkpoint``, once per process, and score with ``model.predict``.

A row with several references gets the mean of its per-reference COMET scores (COMET itself takes
one reference per sample). The checkpoint's kind is checked against the scorer: a reference-free
model (``ReferencelessRegression``, CometKiwi) cannot serve ``comet`` and a reference-only model
cannot serve ``comet_qe``.
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from statistics import fmean
from typing import Any, ClassVar

from blindspot.models import comet_checkpoint, load_comet, model_revision
from blindspot.scoring.base import ScoreInput, Scorer, register_scorer

#: paper defaults (blind-spots paper: COMET / COMET-QE of WMT20/21); newer: Unbabel/wmt22-comet-da,
#: Unbabel/wmt22-cometkiwi-da
#: the citation of both COMET evaluate modules (comet_score, comet)
CITATION = """\
@inproceedings{rei-etal-2020-comet,
    title = "{COMET}: A Neural Framework for {MT} Evaluation",
    author = "Rei, Ricardo and Stewart, Craig and Farinha, Ana C and Lavie, Alon",
    booktitle = "Proceedings of the 2020 Conference on Empirical Methods in Natural Language Processing (EMNLP)",
    year = "2020",
    pages = "2685--2702",
}
"""  # noqa: E501 (published BibTeX / exact doctest output, kept verbatim)

DEFAULT_REFERENCE_MODEL = "wmt20-comet-da"
DEFAULT_QE_MODEL = "wmt21-comet-qe-mqm"


def model_modes(model: Any) -> set[str]:
    """The modes a loaded COMET model can score: ``"ref"`` (src+mt+ref) and/or ``"qe"`` (src+mt)."""
    kind = type(model).__name__
    if kind == "ReferencelessRegression":
        return {"qe"}
    if kind in ("UnifiedMetric", "XCOMETMetric"):
        segments = list(model.hparams.get("input_segments", ["mt", "src", "ref"]))
        if kind == "XCOMETMetric":
            segments = ["mt", "src", "ref"]
        modes = {"ref"} if "ref" in segments else set()
        return modes | ({"qe"} if "src" in segments else set())
    return {"ref"}


def comet_samples(item: ScoreInput, mode: str) -> list[dict[str, str]]:
    """COMET's input dicts for one row: one per reference (ref mode) or a single one (QE)."""
    source = item.source or ""
    if mode == "qe":
        return [{"src": source, "mt": item.hypothesis}]
    return [{"src": source, "mt": item.hypothesis, "ref": ref} for ref in item.references]


def import_comet() -> Any:
    """``import comet`` without its side effect on the root logger (it calls
    ``logging.basicConfig(level=INFO)`` at import, which would make every library chatty)."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    import comet

    for handler in root.handlers[:]:
        if handler not in handlers:
            root.removeHandler(handler)
    root.setLevel(level)
    return comet


@contextmanager
def quiet_lightning() -> Iterator[None]:
    """Silence PyTorch Lightning's per-call banners (GPU/TPU available, tips) during predict."""
    loggers = [logging.getLogger(n) for n in ("lightning.pytorch", "pytorch_lightning",
                                               "lightning_fabric", "lightning")]
    levels = [lg.level for lg in loggers]
    for lg in loggers:
        lg.setLevel(logging.ERROR)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        for lg, level in zip(loggers, levels, strict=True):
            lg.setLevel(level)


class _CometScorer(Scorer):
    """Shared by ``comet`` and ``comet_qe``: options ``model`` (name, folder or checkpoint)."""

    mode: ClassVar[str]
    default_model: ClassVar[str]
    uses_source = "required"
    default_batch_size = 16
    library = "unbabel-comet"

    def __init__(self, model: str | None = None, gpus: int = 0) -> None:
        super().__init__(model=str(model or self.default_model), gpus=int(gpus))
        self._model: Any = None

    @property
    def model(self) -> Any:
        """The COMET model, loaded on first use and checked to support this scorer's mode."""
        if self._model is None:
            import_comet()
            model = load_comet(self.config["model"])
            if self.mode not in model_modes(model):
                other = "comet_qe" if self.mode == "ref" else "comet"
                raise ValueError(
                    f"model {self.config['model']!r} ({type(model).__name__}) cannot score "
                    f"{self.name!r} ({'with' if self.mode == 'ref' else 'without'} references); "
                    f"use {other!r} with it, or another checkpoint")
            self._model = model
        return self._model

    def model_revision(self) -> str:
        return f"comet-{import_comet().__version__}:" + model_revision(
            comet_checkpoint(self.config["model"]))

    def weights(self) -> str:
        return comet_checkpoint(self.config["model"])

    def device_kind(self) -> str:
        return "cuda" if self.config.get("gpus") else "cpu"

    def score_batch(self, batch: Sequence[ScoreInput]) -> list[dict[str, float]]:
        groups = [comet_samples(item, self.mode) for item in batch]
        samples = [sample for group in groups for sample in group]
        scores = self.predict(samples)
        out, start = [], 0
        for group in groups:
            out.append({self.outputs[0]: fmean(scores[start: start + len(group)])})
            start += len(group)
        return out

    def predict(self, samples: list[dict[str, str]]) -> list[float]:
        """Segment scores of COMET ``samples``, 16 to a forward pass (COMET's own default), on
        CPU unless the ``gpus`` option says otherwise."""
        with quiet_lightning():
            result = self.model.predict(samples, batch_size=min(max(1, len(samples)), 16),
                                        gpus=self.config["gpus"], progress_bar=False)
        return [float(s) for s in result.scores]


@register_scorer
class Comet(_CometScorer):
    """Reference-based COMET: (source, hypothesis, reference)."""

    name = "comet"
    outputs = ("comet",)
    uses_references = "required"
    mode = "ref"
    default_model = DEFAULT_REFERENCE_MODEL


@register_scorer
class CometQE(_CometScorer):
    """COMET-QE: (source, hypothesis), no reference."""

    name = "comet_qe"
    outputs = ("comet_qe",)
    uses_references = "none"
    mode = "qe"
    default_model = DEFAULT_QE_MODEL
