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

``precision``, ``token_budget`` and ``device`` (``docs/gpu.md``): on a GPU, or whenever a
precision is asked, the samples skip ``predict`` (PyTorch Lightning's Trainer) and go in token
batches, longest first, through COMET's own ``prepare_for_inference`` and ``predict_step`` on the
model's device, in the precision asked, with one host synchronisation per batch and a batch that
runs out of memory split and retried; the scores come back in the samples' order. A CPU run with
no precision asked still calls ``predict``, byte for byte as before.
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from statistics import fmean
from typing import Any, ClassVar

from blindspot.models import comet_checkpoint, load_comet, model_revision
from blindspot.scorers import _device
from blindspot.scorers._lm_utils import ModelScorer, place
from blindspot.scoring.card import ModuleCard
from blindspot.scoring.scorer import ScoreInput, register_scorer

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


def sample_lengths(model: Any, samples: Sequence[dict[str, str]]) -> list[int]:
    """Each sample's tokens, its segments together, as COMET's encoder cuts them (the token
    budget's measure: COMET encodes the segments apart, each padded to its batch's longest)."""
    if not samples:
        return []
    encoder = model.encoder
    lengths = [0] * len(samples)
    for field in samples[0]:
        ids = encoder.tokenizer([str(s[field]) for s in samples], truncation=True,
                                max_length=encoder.max_positions - 2)["input_ids"]
        lengths = [total + len(row) for total, row in zip(lengths, ids, strict=True)]
    return lengths


def comet_scores_on_device(model: Any, samples: Sequence[dict[str, str]], *, budget: int,
                           precision: str, metric: str) -> list[float]:
    """COMET segment scores of ``samples`` in token batches on the model's device: each batch
    prepared by COMET (``prepare_for_inference``: its tokenization and padding) and scored by
    its ``predict_step`` (what ``predict``'s Trainer calls), split on running out of memory,
    one host synchronisation per batch (:func:`blindspot.scorers._device.values_by_batch`),
    the scores in the samples' order."""
    import torch
    from lightning_utilities.core.apply_func import apply_to_collection

    device = next(model.parameters()).device

    def launch(rows: list[int]) -> Any:
        batch = model.prepare_for_inference([samples[k] for k in rows])
        batch = apply_to_collection(batch, torch.Tensor,
                                    lambda tensor: _device.pinned_to(tensor, device))
        with torch.inference_mode(), _device.matmul_precision(precision):
            return model.predict_step(batch)["scores"].float()

    values = _device.values_by_batch(launch, sample_lengths(model, samples), budget, metric)
    return [float(v) for v in values]


class _CometScorer(ModelScorer):
    """Shared by ``comet`` and ``comet_qe``: options ``model`` (name, folder or checkpoint),
    ``gpus`` (1: the device is CUDA), ``device``, ``precision``, ``token_budget``."""

    mode: ClassVar[str]
    default_model: ClassVar[str]
    uses_source = "required"
    default_batch_size = 16
    library = "unbabel-comet"

    def __init__(self, model: str | None = None, gpus: int = 0, device: str | None = None,
                 precision: str | None = None, token_budget: int | None = None) -> None:
        super().__init__(device or ("cuda" if int(gpus) else None), precision, token_budget,
                         model=str(model or self.default_model), gpus=int(gpus))

    def loaded_model(self) -> Any:
        """The COMET model in the precision asked, loaded once per process and checked to
        support this scorer's mode."""
        import_comet()
        model = load_comet(self.config["model"], self.weight_dtype())
        if self.mode not in model_modes(model):
            other = "comet_qe" if self.mode == "ref" else "comet"
            raise ValueError(
                f"model {self.config['model']!r} ({type(model).__name__}) cannot score "
                f"{self.name!r} ({'with' if self.mode == 'ref' else 'without'} references); "
                f"use {other!r} with it, or another checkpoint")
        return model

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
        """Segment scores of COMET ``samples``: on the device path (:meth:`on_device_path`) by
        :func:`comet_scores_on_device`, each distinct sample once; else by COMET's ``predict``
        on the CPU, 16 to a forward pass (COMET's own default)."""
        model = self.loaded_model()
        if self.on_device_path():
            keys = [tuple(sample.items()) for sample in samples]
            unique = list(dict.fromkeys(keys))
            scored = dict(zip(unique, comet_scores_on_device(
                place(model, self._device), [dict(k) for k in unique],
                budget=self.token_budget(), precision=self.precision(), metric=self.name),
                strict=True))
            return [scored[k] for k in keys]
        with quiet_lightning():
            result = model.predict(samples, batch_size=min(max(1, len(samples)), 16), gpus=0,
                                   progress_bar=False)
        return [float(s) for s in result.scores]


#: the checkpoint of evaluate's canonical ``comet`` module's "default" configuration (with
#: unbabel-comet 2.x); a blind-spot run's default is the paper's, :data:`DEFAULT_REFERENCE_MODEL`
CANONICAL_MODEL = "Unbabel/wmt22-comet-da"


def comet_module(module: Any, predictions: list[str], references: list[Any], sources: list[str],
                 gpus: int | None = None, progress_bar: bool = False,
                 model: str | None = None) -> dict[str, Any]:
    """The ``comet`` module's compute: evaluate's canonical ``comet`` (the configuration names the
    checkpoint; ``scores`` per row and their mean), on the cached scoring layer."""
    import torch  # the heavy edge

    checkpoint = model or (CANONICAL_MODEL if module.config_name == "default"
                           else module.config_name)
    if gpus is None:
        gpus = 1 if torch.cuda.is_available() else 0
    rows = module.scorer_rows(predictions, references, sources=sources, model=checkpoint,
                              gpus=gpus)
    scores = rows["comet"]
    return {"mean_score": sum(scores) / len(scores), "scores": scores}


_COMET_CARD = ModuleCard(
    title="COMET drop-in", emoji="☄️",
    summary=("COMET (unbabel-comet): a drop-in for evaluate's comet (same configuration, "
             "arguments, defaults and outputs), from any checkpoint, on blindspot's cached scoring"
             " layer."),
    description="""\
COMET (Rei et al., 2020) through unbabel-comet: a drop-in for evaluate's canonical ``comet``.

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
``comet_score`` module), with the blind-spots paper's checkpoint ``wmt20-comet-da`` by default.""",
    examples="""\
>>> import evaluate, tempfile
>>> from blindspot.tiny_models import tiny_comet
>>> folder = tiny_comet(tempfile.mkdtemp())  # random weights: the numbers mean nothing
>>> comet = evaluate.load("blindspot/comet")
>>> out = comet.compute(sources=["Die Katze saß auf der Matte.", "Ein Hund."],
...                     predictions=["The cat sat on the mat.", "A dog."],
...                     references=["The cat was on the mat.", "A dog."], model=folder)
>>> sorted(out), len(out["scores"])
(['mean_score', 'scores'], 2)
""",
    inputs="""\
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
""",
    citation=CITATION,
    sections="""\
## Metric description
COMET (Rei et al., 2020) is a trained regression metric: a cross-lingual encoder (XLM-RoBERTa
for the WMT20–22 models) embeds the source, the hypothesis and the reference, and a feed-forward
head predicts a human quality judgement (DA z-scores or MQM). COMET-QE is the reference-free
variant trained on (source, hypothesis) only. This module runs the released models through the
`unbabel-comet` package (`comet.load_from_checkpoint`, `model.predict`), loading each checkpoint
once per process; distinct inputs are scored once and cached on disk.

## Drop-in for evaluate's `comet`
Offline after `make env`, from any directory: `evaluate.load("blindspot/comet")`. `evaluate.load("comet")` is evaluate's canonical
module (online, or from your own module cache), which installing blindspot never touches; ours
gives the same results for the same call.

```python
import evaluate
comet = evaluate.load("blindspot/comet")                          # Unbabel/wmt22-comet-da
comet = evaluate.load("blindspot/comet", "Unbabel/XCOMET-XL")     # the configuration names it
comet.compute(sources=sources, predictions=hyps, references=refs)
# {'mean_score': ..., 'scores': [...]}
comet.compute(sources=sources, predictions=hyps, references=refs, model="path/to/checkpoint")
```
The configuration and arguments are the canonical module's: the configuration names the
checkpoint (`"default"` is `Unbabel/wmt22-comet-da`, as the canonical module with unbabel-comet
2.x; any other name goes to unbabel-comet), `gpus` (default 1 when CUDA is available, else 0),
`progress_bar` (accepted; no bar is shown).

Added: `model=` a checkpoint file, model folder, Hub id or legacy name instead of the
configuration's; several references per row (the mean of the per-reference scores); the model
loads once per process; each distinct row is scored once and cached on disk.

## Output
`scores`: COMET per row, higher is better (the range depends on the checkpoint); `mean_score`:
their mean (unbabel-comet's system score).

## Canonical default and the blind-spot protocol
A blind-spot run (`blindspot run --metrics comet`, the `comet_score` module) scores the same
per-row COMET, with the blind-spots paper's checkpoint `wmt20-comet-da` as the default.

## Paper default and variants
- The blind-spots paper (He et al., 2023) tests COMET and COMET-QE on WMT21 de-en, TED-MT and
  CNN/DM; defaults here: `wmt20-comet-da` (reference-based) and `wmt21-comet-qe-mqm` (QE), both
  legacy names `comet.download_model` fetches. Newer checkpoints: `Unbabel/wmt22-comet-da`,
  `Unbabel/wmt22-cometkiwi-da` (QE; gated on the Hub, its encoder `microsoft/infoxlm-large` must
  be reachable too).
- MENLI (Chen & Eger, 2023) compares against reference-based and reference-free COMET and finds
  COMET + 0.3 × XNLI-D the best reference-free MT combination.

## Blind spots the papers found
- Copy-source (He et al., App. D): COMET-QE scores a hypothesis that is a copy of the *source*
  higher than the gold translation (it does not check the hypothesis' language); reference-based
  COMET gives the copy a score very close to the gold one.
- BERT-diverge: COMET-QE's scores do not drop when a masked-LM rewrite changes the meaning — the
  only failure the paper found on WMT.
- Truncation: COMET-QE fails (a truncated hypothesis is not penalised as it should be).
- Article removal on summarization: COMET-QE fails; reference-based COMET is more robust.
- MENLI's adversarial set: standard metrics including COMET are weak on name, number and pronoun
  errors while strong on omission, addition and jumbling.

## Offline use and tests
No COMET weights exist without the Hub or Unbabel's servers; a name that cannot be fetched fails
at once with `ModelNotAvailableError`. The tests build tiny random COMET models in COMET's own
checkpoint layout (`blindspot.tiny_models.tiny_comet`: a tiny BERT encoder saved as a local folder
and named as `pretrained_model`, so nothing is downloaded) and check parity with a direct
`load_from_checkpoint(...).predict(...)` call on WMT21 rows.
""",  # noqa: E501
    requirements=("unbabel-comet==2.2.7",),
    compute=comet_module,
)


@register_scorer
class Comet(_CometScorer):
    """Reference-based COMET: (source, hypothesis, reference)."""

    name = "comet"
    card = _COMET_CARD
    outputs = ("comet",)
    uses_references = "required"
    mode = "ref"
    default_model = DEFAULT_REFERENCE_MODEL


@register_scorer
class CometQE(_CometScorer):
    """COMET-QE: (source, hypothesis), no reference."""

    name = "comet_qe"
    outputs = ("comet_qe",)
    #: served by the comet_score module's "qe" configuration, beside reference-based COMET
    card = None
    uses_references = "none"
    mode = "qe"
    default_model = DEFAULT_QE_MODEL
