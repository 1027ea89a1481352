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


@register_scorer
class Bleurt(lm.ModelScorer):
    """BLEURT; options ``model`` (Hub id or folder of a bleurt-pytorch checkpoint), ``max_length``,
    ``precision``, ``token_budget``, ``device``."""

    name = "bleurt"
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
