"""BLEURT (Sellam et al., 2020) through ``bleurt-pytorch``, the PyTorch port of the official
checkpoints (paper default BLEURT-20: ``lucadiliello/BLEURT-20``; smaller ``-D12``, ``-D6``, ``-D3``).

The model reads ``[CLS] reference [SEP] candidate [SEP]`` and regresses a quality score (the
regression head's single logit). A row with several references gets the mean of its
per-reference scores. Pairs longer than ``max_length`` (BLEURT-20: 512) are truncated.

``precision`` and ``token_budget``: on a GPU, or whenever a precision is asked, the pairs go in
token batches on the device with one host synchronisation per batch
(:func:`blindspot.scorers._device.encoded_rows_on_device`, ``docs/gpu.md``); a CPU run with no
precision asked computes as before.
"""

from __future__ import annotations

from collections.abc import Sequence
from statistics import fmean
from typing import Any

from blindspot.models import load_bleurt
from blindspot.scorers import _device
from blindspot.scorers import _lm_utils as lm
from blindspot.scorers._lm_utils import length_chunks
from blindspot.scoring.card import ModuleCard
from blindspot.scoring.scorer import ScoreInput, register_scorer

#: the citation of both BLEURT evaluate modules (bleurt_score, bleurt)
CITATION = """\
@inproceedings{sellam-etal-2020-bleurt,
    title = "{BLEURT}: Learning Robust Metrics for Text Generation",
    author = "Sellam, Thibault and Das, Dipanjan and Parikh, Ankur",
    booktitle = "Proceedings of the 58th Annual Meeting of the Association for Computational Linguistics",
    year = "2020",
    pages = "7881--7892",
}
"""

DEFAULT_MODEL = "lucadiliello/BLEURT-20"


def bleurt_scores(model: Any, tokenizer: Any, pairs: Sequence[tuple[str, str]], *,
                  max_length: int = 512, batch_size: int = 16) -> list[float]:
    """BLEURT scores of (reference, candidate) pairs, longest pairs batched together."""
    import torch

    out = [0.0] * len(pairs)
    for chunk in length_chunks([len(a) + len(b) for a, b in pairs], batch_size):
        enc = tokenizer([pairs[i][0] for i in chunk], [pairs[i][1] for i in chunk],
                        padding="longest", truncation=True, max_length=max_length,
                        padding_side="right", return_tensors="pt")
        with torch.inference_mode():
            logits = model(**enc).logits.float().reshape(-1).tolist()
        for i, value in zip(chunk, logits, strict=True):
            out[i] = value
    return out


def bleurt_scores_on_device(model: Any, tokenizer: Any, pairs: Sequence[tuple[str, str]], *,
                            max_length: int, budget: int, precision: str) -> list[float]:
    """:func:`bleurt_scores` in token batches on the model's device, one host synchronisation
    per batch (:func:`blindspot.scorers._device.encoded_rows_on_device`)."""
    return _device.encoded_rows_on_device(
        model, lambda inputs: model(**inputs).logits.float().reshape(-1),
        _device.pair_encodings(tokenizer, pairs, max_length), lm.pad_id(tokenizer), budget,
        precision, "bleurt")


#: evaluate's canonical ``bleurt`` module's checkpoints -> their maximum sequence length
CHECKPOINTS = {"bleurt-tiny-128": 128, "bleurt-tiny-512": 512, "bleurt-base-128": 128,
               "bleurt-base-512": 512, "bleurt-large-128": 128, "bleurt-large-512": 512,
               "BLEURT-20-D3": 512, "BLEURT-20-D6": 512, "BLEURT-20-D12": 512, "BLEURT-20": 512}
#: the checkpoint of the canonical module's "default" configuration
CANONICAL_CHECKPOINT = "bleurt-base-128"
#: where bleurt-pytorch publishes its conversions
PORT_NAMESPACE = "lucadiliello"


def checkpoint(config_name: str) -> tuple[str, int]:
    """(model id, maximum length) of a configuration of the canonical module; a clear error lists
    the valid names."""
    name = CANONICAL_CHECKPOINT if config_name == "default" else config_name
    canonical = {key.lower(): key for key in CHECKPOINTS}.get(name.lower())
    if canonical is None:
        raise KeyError(f"{config_name} model not found. You should supply the name of a model "
                       f"checkpoint for bleurt in {list(CHECKPOINTS)} (or model=...)")
    return f"{PORT_NAMESPACE}/{canonical}", CHECKPOINTS[canonical]


def bleurt_module(module: Any, predictions: list[str], references: list[Any],
                  model: str | None = None) -> dict[str, Any]:
    """The ``bleurt`` module's compute: evaluate's canonical ``bleurt`` (the configuration names
    the checkpoint; ``scores`` per row), on bleurt-pytorch and the cached scoring layer."""
    if model is None:
        model, max_length = checkpoint(module.config_name)
    else:
        max_length = 512
    rows = module.scorer_rows(predictions, references, model=model, max_length=max_length)
    return {"scores": rows["bleurt"]}


_BLEURT_CARD = ModuleCard(
    title="BLEURT drop-in", emoji="🐦",
    summary=("BLEURT (bleurt-pytorch ports of the official checkpoints): a drop-in for evaluate's "
             "bleurt (same configurations, arguments and output), on blindspot's cached scoring "
             "layer."),
    description="""\
BLEURT (Sellam et al., 2020) through bleurt-pytorch: a drop-in for evaluate's canonical
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
``bleurt_score`` module) with the paper's checkpoint, BLEURT-20.""",
    examples="""\
>>> import evaluate, tempfile
>>> from blindspot.tiny_models import tiny_bleurt
>>> folder = tiny_bleurt(tempfile.mkdtemp())  # random weights: the numbers mean nothing
>>> bleurt = evaluate.load("blindspot/bleurt")
>>> out = bleurt.compute(predictions=["hello there", "general kenobi"],
...                      references=["hello there", "general kenobi"], model=folder)
>>> list(out), len(out["scores"])
(['scores'], 2)
""",
    inputs="""\
Args:
    predictions (list of str): candidates.
    references (list of str or list of list of str): references (several are averaged).
    model (str): a bleurt-pytorch folder or Hub id instead of the configuration's checkpoint.
Returns:
    scores: BLEURT per row, higher is better (about 0 to 1 for BLEURT-20).
""",
    citation=CITATION,
    sections="""\
## Metric description
BLEURT (Sellam et al., 2020) is a BERT-style model (BLEURT-20: RemBERT) pre-trained on synthetic
pairs and fine-tuned on human ratings; it reads `[CLS] reference [SEP] candidate [SEP]` and
regresses one quality score. Google's implementation is TensorFlow-only and not on PyPI; this
module uses `bleurt-pytorch` (PyPI, 0.0.1), whose Hub checkpoints are the official ones converted
to PyTorch, with our torch/transformers pins. Distinct inputs are scored once and cached.

## Drop-in for evaluate's `bleurt`
Offline after `make env`, from any directory: `evaluate.load("blindspot/bleurt")`. `evaluate.load("bleurt")` is evaluate's canonical
module (online, or from your own module cache), which installing blindspot never touches.

```python
import evaluate
bleurt = evaluate.load("blindspot/bleurt")                  # bleurt-base-128, as the canonical
bleurt = evaluate.load("blindspot/bleurt", "BLEURT-20")      # the configuration names it
bleurt.compute(predictions=hyps, references=refs)            # {'scores': [...]}
bleurt.compute(predictions=hyps, references=refs, model="path/to/bleurt-pytorch-folder")
```
The configurations and arguments are the canonical module's: the configuration names the
checkpoint (`"default"` is `bleurt-base-128`; `bleurt-tiny-128`, `bleurt-tiny-512`,
`bleurt-base-128`, `bleurt-base-512`, `bleurt-large-128`, `bleurt-large-512`, `BLEURT-20-D3`,
`BLEURT-20-D6`, `BLEURT-20-D12`, `BLEURT-20`, in any case; another name is a `KeyError` listing
them), each read with its own maximum length (128 for the `-128` ones, else 512).

One difference cannot be closed here: the canonical module runs Google's TensorFlow checkpoints
(Google's `bleurt` is not on PyPI and TensorFlow is not installed); this module runs their
PyTorch conversions by bleurt-pytorch (`lucadiliello/<name>` on the Hub), so its scores are the
canonical ones as far as the conversions reproduce them.

Added: `model=` a bleurt-pytorch folder or Hub id instead of the configuration's; several
references per row (the mean of the per-reference scores); each distinct pair is scored once and
cached on disk.

## Output
`scores`: BLEURT per row, higher is better (about 0 to 1 for BLEURT-20).

## Canonical default and the blind-spot protocol
A blind-spot run (`blindspot run --metrics bleurt`, the `bleurt_score` module) scores the same
per-row BLEURT with the paper's checkpoint, BLEURT-20 (`lucadiliello/BLEURT-20`).

## Paper default and variants
The blind-spots paper (He et al., 2023) uses BLEURT(-20) for translation only. MENLI reports
BLEURT + 0.2 × NLI-R as the best reference-based MT combination.

## Blind spots the papers found
- Word swap, word drop and repetition (the BERTScore/BLEURT/NUBIA impairment study): BLEURT keeps
  scores above 0.4 even when all words are shuffled, and converges to about 0.76 under growing
  repetition instead of dropping.
- MENLI's adversarial set: BLEURT is strong on omission, addition and jumbling but, like other
  standard metrics, weak on name, number and pronoun errors.
- Repetition (He et al., App. E): appending 10 copies of the last 4-gram lowers BLEURT on WMT
  (0.716 -> 0.666), but more copies raise it again (0.689 at 30); the paper does not count this
  as a failure.

## Offline use and tests
No BLEURT weights exist offline; the tests build a tiny random `BleurtForSequenceClassification`
with MiniLM's tokenizer (`blindspot.tiny_models.tiny_bleurt`) and check parity with a direct
bleurt-pytorch call and the multi-reference mean.
""",  # noqa: E501
    requirements=("bleurt-pytorch==0.0.1", "torch", "transformers"),
    compute=bleurt_module,
)


@register_scorer
class Bleurt(lm.ModelScorer):
    """BLEURT; options ``model`` (Hub id or folder of a bleurt-pytorch checkpoint), ``max_length``,
    ``precision``, ``token_budget``, ``device``."""

    name = "bleurt"
    card = _BLEURT_CARD
    outputs = ("bleurt",)
    uses_references = "required"
    default_batch_size = 32

    def __init__(self, model: str = DEFAULT_MODEL, max_length: int = 512,
                 device: str | None = None, precision: str | None = None,
                 token_budget: int | None = None) -> None:
        super().__init__(device, precision, token_budget, model=str(model),
                         max_length=int(max_length))

    def pair_scores(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        """The BLEURT score of each (reference, candidate) pair."""
        tokenizer, model = load_bleurt(self.config["model"], self.weight_dtype())
        if not self.on_device_path():
            return bleurt_scores(model, tokenizer, pairs, max_length=self.config["max_length"])
        return bleurt_scores_on_device(lm.place(model, self._device), tokenizer, pairs,
                                       max_length=self.config["max_length"],
                                       budget=self.token_budget(), precision=self.precision())

    def score_batch(self, batch: Sequence[ScoreInput]) -> list[dict[str, float]]:
        pairs = list(dict.fromkeys((ref, item.hypothesis) for item in batch
                                   for ref in item.references))
        scored = dict(zip(pairs, self.pair_scores(pairs), strict=True))
        return [{"bleurt": fmean(scored[(ref, item.hypothesis)] for ref in item.references)}
                for item in batch]
