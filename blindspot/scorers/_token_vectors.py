"""Contextual token vectors of several layers, one encoder pass per distinct text: what
Mark-Evaluate and BaryScore compare (DiscoScore builds its own input from words).

The encoder and its tokenizer are the shared ones of BERTScore and MoverScore
(:func:`blindspot.scorers._encoders.encoder_on_device`, bert_score's fast tokenizer), and the
texts of a batch are encoded once each, longest first, ``batch_size`` at a time, as MoverScore
encodes them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from blindspot.models import load_bertscore_tokenizer, model_revision, resolve_model
from blindspot.scorers._encoders import Truncation, encoder_on_device, layer_count, truncation_of
from blindspot.scorers.moverscore import max_input_length
from blindspot.scoring.scorer import Scorer


class LayerVectorScorer(Scorer):
    """Base of the scorers that read token vectors of the encoder's last ``layers`` layers.

    Subclasses set ``self._path``, ``self._layers`` (how many of the top hidden states, 1 = the
    last layer), ``self._keep_special`` and ``batch_size``/``device`` in their ``__init__``.
    """

    model_option = "model_type"
    uses_references = "required"
    version = "1"
    default_batch_size = 64
    #: whether a text is encoded with the tokenizer's special tokens ([CLS] ... [SEP]); without
    #: them a text without a token has no vector (and is not encoded)
    special_tokens_encoded: ClassVar[bool] = True
    _path: str
    _layers: int
    _keep_special: bool
    batch_size: int
    device: str | None

    def setup(self, model_type: str, layers: int, keep_special: bool, batch_size: int,
              device: str | None) -> str:
        """Resolve the model, check the layer count; returns the path for the configuration."""
        path = resolve_model(model_type)
        total = layer_count(model_type)
        self._path, self.batch_size, self.device = path, int(batch_size), device
        if not isinstance(layers, int) or not 1 <= layers <= total + 1:
            raise ValueError(f"layers must be an integer between 1 and {total + 1} for model "
                             f"{model_type!r}, got {layers!r}")
        self._layers, self._keep_special = layers, keep_special
        return path

    def model_revision(self) -> str:
        return model_revision(self._path)

    def model(self) -> Any:
        model, self.device = encoder_on_device(self._path, layer_count(self._path), self.device)
        return model

    def tokenizer(self) -> Any:
        return load_bertscore_tokenizer(self._path, use_fast=True)

    def max_length(self) -> int:
        return max_input_length(self.tokenizer(), self._path)

    def truncated(self, texts: Sequence[str]) -> Truncation:
        return truncation_of(self.tokenizer(), texts, self.max_length())

    def token_vectors(self, texts: Sequence[str]) -> dict[str, tuple[Any, list[int]]]:
        """Each distinct text's (layers, tokens, dim) float64 array of its top ``layers``
        hidden states, and its token ids (special tokens left out unless kept)."""
        import numpy as np

        tokenizer = self.tokenizer()
        unique = sorted(set(texts), key=len, reverse=True)
        out: dict[str, tuple[Any, list[int]]] = {}
        if not self.special_tokens_encoded:
            empty = [text for text in unique if not tokenizer.tokenize(text)]
            dim = self.model().config.hidden_size
            out.update((text, (np.zeros((self._layers, 0, dim)), [])) for text in empty)
            unique = [text for text in unique if text not in out]
        for start in range(0, len(unique), self.batch_size):
            chunk = unique[start: start + self.batch_size]
            out.update(zip(chunk, self._encode(chunk, tokenizer), strict=True))
        return out

    def _encode(self, texts: list[str], tokenizer: Any) -> list[tuple[Any, list[int]]]:
        import torch

        model = self.model()
        encoded = tokenizer(texts, padding=True, truncation=True, max_length=self.max_length(),
                            add_special_tokens=self.special_tokens_encoded, return_tensors="pt",
                            return_special_tokens_mask=True)
        with torch.no_grad():
            hidden = model(encoded["input_ids"].to(self.device),
                           attention_mask=encoded["attention_mask"].to(self.device),
                           output_hidden_states=True).hidden_states
        stacked = torch.stack(hidden[-self._layers:]).cpu().double()  # (L, batch, tokens, dim)
        rows = []
        for row in range(len(texts)):
            attended = encoded["attention_mask"][row].bool()
            if not self._keep_special:
                attended &= ~encoded["special_tokens_mask"][row].bool()
            positions = attended.nonzero().flatten()
            rows.append((stacked[:, row, positions].numpy(),
                         encoded["input_ids"][row, positions].tolist()))
        return rows


def module_inputs(options: str, returns: str) -> str:
    """The ``Args``/``Returns`` text of a layer-vector metric's evaluate module: ``options`` its
    own options after ``model_type`` (as they appear under ``Args:``), ``returns`` its outputs."""
    return f"""
Args:
    predictions (list of str): hypotheses.
    references (list of str or list of list of str): one or several references per hypothesis
        (several are averaged).
    {options}
    batch_size (int): texts per encoder pass (default 64). device (str): default cuda if available.
    use_aggregator (bool): mean over rows (default) or per-row lists.
Returns:
{returns}
"""
