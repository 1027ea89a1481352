"""Shared pieces of the likelihood metrics (GPT-PPL, MLM-PPL, BARTScore).

Padding is always done here, on the right, whatever the tokenizer's ``padding_side``: a real
token then sits at the same position (and gets the same position embedding) as when the text is
scored alone, and under a causal mask no real token can see a pad. Pads are masked out of every
mean. Torch is imported inside the functions so that a warm score cache never imports it.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from blindspot.models import model_revision
from blindspot.scorers import _device
from blindspot.scoring.scorer import ScoreInput, Scorer

#: tokenizers report a huge ``model_max_length`` when they have no limit of their own
_NO_LIMIT = 1_000_000


class ModelScorer(Scorer):
    """Base of the likelihood scorers: the model named by ``config["model"]`` (part of the cache
    key through its revision), and a device that is not part of the cache key (it changes where,
    not what, is computed). The options are the subclass's ``__init__`` parameters.

    ``precision`` (:data:`blindspot.scorers._device.PRECISIONS`) is part of the configuration
    only when given, so that scores cached before it existed stay valid; ``token_budget`` (tokens
    per batch) is not: it changes how the work is cut, not what is computed."""

    default_batch_size = 8

    def __init__(self, device: str | None, precision: str | None = None,
                 token_budget: int | None = None, **config: Any) -> None:
        precision = _device.checked_precision(precision)
        super().__init__(**config, **({} if precision is None else {"precision": precision}))
        self._device = device
        self._token_budget = _device.checked_budget(token_budget)

    def model_revision(self) -> str:
        return model_revision(self.config["model"])

    def identity_config(self) -> Mapping[str, Any]:
        if self.config.get("precision") != "auto":
            return self.config
        return {**self.config, "precision": self.precision()}

    def precision(self) -> str:
        """The precision the scores are computed in (``auto`` resolved for the device)."""
        return _device.resolve_precision(self.config.get("precision"),
                                         _device.target_device(self._device))

    def on_device_path(self) -> bool:
        """Whether batches go by tokens with the device-side gather: when a precision is asked
        or the device is not a CPU (a CPU run with no precision computes as it always did)."""
        return ("precision" in self.config
                or _device.target_device(self._device).type != "cpu")

    def batch_rows(self) -> int:
        return _device.DEVICE_ROWS if self.on_device_path() else self.default_batch_size

    def token_budget(self) -> int:
        """Tokens per batch: the ``token_budget`` option, else the device type's default."""
        device = _device.target_device(self._device)
        return self._token_budget or _device.DEFAULT_TOKEN_BUDGET.get(device.type, 4_096)

    def causal_sums(self, model: Any, sequences: Sequence[Sequence[int]], starts: Sequence[int],
                    fill: int, batch_size: int) -> list[tuple[float, int]]:
        """:func:`causal_logprob_sums`, on the device path when :meth:`on_device_path`."""
        if not self.on_device_path():
            return causal_logprob_sums(model, sequences, starts, fill, batch_size)
        return _device.causal_sums_on_device(model, sequences, starts, fill, self.token_budget(),
                                             self.precision(), self.name)

    def weight_dtype(self) -> str | None:
        """The dtype of the model copy to load (None: float32)."""
        return _device.weight_dtype(self.precision()) if "precision" in self.config else None


class PreparedAhead(ModelScorer):
    """A model scorer whose scoring splits into a host part (:meth:`prepare_batch`: tokenizing)
    and a device part (:meth:`score_prepared`): on the device path the next batch is prepared
    while the device scores this one (:func:`blindspot.scoring.engine.scores_in_turn`)."""

    def prepares_ahead(self) -> bool:
        return self.on_device_path()

    def score_batch(self, batch: Sequence[ScoreInput]) -> list[dict[str, float]]:
        return self.score_prepared(batch, self.prepare_batch(batch))


def max_positions(tokenizer: Any, model: Any, explicit: int | None = None) -> int:
    """The longest token sequence the model takes: the smaller of the tokenizer's and the
    config's limits (RoBERTa's config says 514 for 512 usable positions), or ``explicit``."""
    limits = [explicit] if explicit else []
    if 0 < getattr(tokenizer, "model_max_length", _NO_LIMIT) < _NO_LIMIT:
        limits.append(int(tokenizer.model_max_length))
    config = model.config
    for attr in ("max_position_embeddings", "n_positions"):
        value = getattr(config, attr, None)
        if isinstance(value, int) and value > 0:
            limits.append(value)
            break
    return min(limits) if limits else 1024


def prefix_token_id(tokenizer: Any) -> int | None:
    """The token put before a text so that its first token is scored too.

    The tokenizer's BOS token, else its EOS token (GPT-2 uses ``<|endoftext|>`` as both, and
    as the document separator it was trained on), else none (the first token is then only
    context, as in the usual Hugging Face perplexity recipe).
    """
    for token_id in (tokenizer.bos_token_id, tokenizer.eos_token_id):
        if token_id is not None:
            return int(token_id)
    return None


def pad_id(tokenizer: Any) -> int:
    """A token id for padding (its value never matters: pads are masked)."""
    for token_id in (tokenizer.pad_token_id, tokenizer.eos_token_id, tokenizer.unk_token_id):
        if token_id is not None:
            return int(token_id)
    return 0


def token_ids(tokenizer: Any, texts: Sequence[str]) -> list[list[int]]:
    """Each text's token ids, without special tokens and without truncation."""
    if not texts:
        return []
    return [list(ids) for ids in tokenizer(list(texts), add_special_tokens=False)["input_ids"]]


#: (ids, attention mask) padded on the right: one definition, beside the device path that pins it
right_pad = _device.right_pad


def length_chunks(lengths: Sequence[int], size: int) -> Iterator[list[int]]:
    """Indices in chunks of ``size``, longest first, so that each chunk pads little."""
    order = sorted(range(len(lengths)), key=lambda i: -lengths[i])
    for start in range(0, len(order), size):
        yield order[start: start + size]


def model_device(model: Any) -> Any:
    return next(model.parameters()).device


def place(model: Any, device: str | None) -> Any:
    """The model on ``device`` (default: CUDA when there is one, else where it is)."""
    import torch

    target = torch.device(device or ("cuda" if torch.cuda.is_available() else "cpu"))
    if model_device(model) != target and not (target.type == "cuda" and target.index is None
                                                and model_device(model).type == "cuda"):
        model.to(target)
    return model


def causal_logprob_sums(model: Any, sequences: Sequence[Sequence[int]], starts: Sequence[int],
                        fill: int, batch_size: int) -> list[tuple[float, int]]:
    """(sum of log p(token | tokens before it), count) over ``seq[start:]`` for each sequence.

    Positions before ``start`` (a prefix token, a prompt) are context only; ``start`` is at
    least 1 because the first token of a sequence has nothing to be predicted from.
    """
    import torch

    results: list[tuple[float, int]] = [(0.0, 0)] * len(sequences)
    todo = [i for i, seq in enumerate(sequences) if len(seq) > max(starts[i], 1)]
    device = model_device(model)
    for chunk in length_chunks([len(sequences[i]) for i in todo], batch_size):
        rows = [todo[k] for k in chunk]
        ids, mask = right_pad([sequences[i] for i in rows], fill)
        with torch.inference_mode():
            logits = model(input_ids=ids.to(device), attention_mask=mask.to(device),
                           use_cache=False).logits
        for b, i in enumerate(rows):
            start, end = max(starts[i], 1), len(sequences[i])
            logprobs = torch.log_softmax(logits[b, start - 1: end - 1].float(), dim=-1)
            target = ids[b, start:end].to(logprobs.device)
            picked = logprobs.gather(-1, target.unsqueeze(-1)).squeeze(-1)
            results[i] = (float(picked.sum()), end - start)
    return results


def mean_or_nan(total: float, count: int) -> float:
    """``total / count``; NaN when there is nothing to average (an empty text)."""
    return total / count if count else math.nan


def negated_perplexity(mean_logprob: float) -> float:
    """``-exp(-mean log p)``: higher is better, as the blind-spots paper reports PPL."""
    return -math.exp(-mean_logprob) if not math.isnan(mean_logprob) else math.nan
