"""What the embedding-matching metrics (BERTScore, MoverScore) share: checking and naming the
encoder, its layer count, the identity of its weights, and the idf corpus.

idf weights depend on the whole set of references of a call (as ``bert_score.score`` computes
them), while the scoring layer hands a scorer only batches of unique inputs. So the corpus is an
option of the scorer (``idf_references``) that the evaluate modules fill with the call's
references; in the scorer's configuration (and so in every cache key) it is replaced by a digest,
so that a score computed with one idf corpus is never reused for another.
"""

from __future__ import annotations

import hashlib
import json
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from blindspot.models import ModelNotAvailableError, available_models, load_bertscore_encoder, resolve_model

#: config attributes that hold the number of layers, by architecture family
_LAYER_ATTRIBUTES = ("num_hidden_layers", "n_layers", "n_layer", "num_layers")

_CONFIGS: dict[str, Any] = {}


def unavailable(name: str, why: str) -> ModelNotAvailableError:
    """The error for a model that cannot be used here, listing the offline models that can."""
    return ModelNotAvailableError(
        f"model {name!r} is not available ({why}). Give a local model folder, a Hub id with "
        f"network access, or one of the offline models: {available_models() or 'none installed'}")


def encoder_config(name: str) -> Any:
    """The Hugging Face config of ``name`` (short name, folder or Hub id), read once per process.

    Reading it is cheap and fails at once for a model that is not available, before any text is
    scored.
    """
    from transformers import AutoConfig

    path = resolve_model(name)
    if path not in _CONFIGS:
        try:
            _CONFIGS[path] = AutoConfig.from_pretrained(path)
        except (OSError, ValueError) as error:
            raise unavailable(name, f"{type(error).__name__}: {str(error)[:160]}") from error
    return _CONFIGS[path]


def declared_layer_count(name: str) -> int | None:
    """The layer count a local model folder's ``config.json`` states, or None (a Hub id, or a
    config that leaves it to the architecture's default). Read as JSON, so a scorer whose scores
    are all cached never imports transformers (and torch) just to name its layer."""
    config = Path(resolve_model(name)) / "config.json"
    if not config.is_file():
        return None
    try:
        declared = json.loads(config.read_text(encoding="utf-8"))
    except ValueError:  # a damaged config: transformers' reading of it says what is wrong
        return None
    if not isinstance(declared, dict):
        return None
    values = [declared.get(attribute) for attribute in _LAYER_ATTRIBUTES]
    return next((value for value in values if isinstance(value, int)), None)


def layer_count(name: str) -> int:
    """How many transformer layers the encoder ``name`` has: as its local config states it,
    else as transformers' config of it says."""
    declared = declared_layer_count(name)
    if declared is not None:
        return declared
    config = encoder_config(name)
    for attribute in _LAYER_ATTRIBUTES:
        value = getattr(config, attribute, None)
        if isinstance(value, int):
            return value
    raise ValueError(f"cannot tell how many layers model {name!r} has; pass num_layers=")


def checked_layer(name: str, num_layers: int | None, default: int) -> int:
    """``num_layers`` (or ``default``) after checking it is a layer of the model."""
    layers = default if num_layers is None else num_layers
    total = layer_count(name)
    if not isinstance(layers, int) or not 0 <= layers <= total:
        raise ValueError(f"num_layers must be an integer between 0 and {total} for model "
                         f"{name!r}, got {num_layers!r}")
    return layers


def encoder_on_device(path: str, num_layers: int, device: str | None,
                      dtype: str | None = None) -> tuple[Any, str]:
    """(shared encoder cut after ``num_layers`` layers, in ``dtype`` when given, the device it
    is on): ``device``, or CUDA when available, as bert_score chooses."""
    import torch

    device = device or ("cuda" if torch.cuda.is_available() else "cpu")
    return load_bertscore_encoder(path, num_layers, dtype).to(device), device


def reference_corpus(references: Sequence[Any] | None) -> list[str]:
    """The references of a call as one flat list, in order (as ``bert_score.score`` flattens
    multi-reference input before computing idf); non-string items are left to the engine's
    checks."""
    corpus: list[str] = []
    for item in references or ():
        if isinstance(item, str):
            corpus.append(item)
        elif isinstance(item, (list, tuple)):
            corpus.extend(r for r in item if isinstance(r, str))
    return corpus


def corpus_digest(corpus: Sequence[str]) -> str:
    """A short content hash of an idf corpus; idf ignores order, so the hash does too (duplicates
    count: each is a document)."""
    digest = hashlib.sha256(str(len(corpus)).encode())
    for text in sorted(corpus):
        digest.update(b"\x1f" + text.encode("utf-8"))
    return digest.hexdigest()[:16]


def idf_corpus(idf: bool, idf_references: Sequence[str] | None, metric: str) -> list[str] | None:
    """The idf corpus of a scorer, or a clear error when idf is on and no corpus was given."""
    if not idf:
        return None
    if idf_references is None or isinstance(idf_references, str):
        raise ValueError(f"{metric}: idf=True needs the reference corpus the weights come from: "
                         f"pass idf_references=[...] (the evaluate module passes the call's "
                         f"references itself)")
    return list(idf_references)


def with_idf_corpus(options: dict[str, Any], references: Sequence[Any] | None,
                    idf_default: bool) -> dict[str, Any]:
    """Module options with ``idf_references`` set to the call's references when idf is on."""
    if options.get("idf", idf_default) and options.get("idf_references") is None:
        return {**options, "idf_references": reference_corpus(references)}
    return options


class TruncationWarning(UserWarning):
    """Some inputs were longer than the encoder takes and were cut."""


@dataclass(frozen=True)
class Truncation:
    """How many distinct texts of a call an encoder cut, and its limit in tokens."""

    truncated_inputs: int
    max_length: int

    def report(self, metric: str) -> dict[str, int]:
        """The result's extra keys, after warning once when any input was cut."""
        if self.truncated_inputs:
            warnings.warn(f"{metric}: {self.truncated_inputs} input text(s) are longer than the "
                          f"encoder's maximum of {self.max_length} tokens and were cut to it; "
                          "their scores ignore the rest", TruncationWarning, stacklevel=3)
        return {"truncated_inputs": self.truncated_inputs, "max_length": self.max_length}


def truncation_of(tokenizer: Any, texts: Sequence[str], limit: int) -> Truncation:
    """How many distinct ``texts`` have more than ``limit`` tokens, special tokens included."""
    extra = tokenizer.num_special_tokens_to_add()
    cut = sum(len(tokenizer.tokenize(text.strip())) + extra > limit
              for text in dict.fromkeys(texts))
    return Truncation(cut, int(limit))
