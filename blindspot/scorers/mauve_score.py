"""MAUVE (Pillutla et al., 2021): mauve-text's divergence frontier on features from any model.

MAUVE compares two *sets* of texts, so it is corpus-level: the hypotheses (``predictions``) are
MAUVE's Q (the model text) and the references are its P (the human text), as in mauve-text's
``compute_mauve(p_text=human, q_text=model)``. Each text becomes one feature vector; mauve-text
then quantizes P and Q jointly (PCA, k-means) and integrates the divergence frontier of the two
histograms. This module computes the features itself (once per distinct text, cached on disk)
and hands them to ``mauve.compute_mauve(p_features=..., q_features=...)`` of mauve-text 0.4.0.

Choices, stated:

* **Feature**: the final-layer hidden state of each text's last token, from the model's base
  transformer (no LM head): what mauve-text's own featurizer takes, and what the blind-spots
  paper (§5.1) describes. Causal LMs (a config whose architecture is ``*ForCausalLM`` or
  ``*LMHeadModel``: gpt2-large, SmolLM2) are loaded with the causal-LM loader, so GPT-PPL and
  MAUVE share one copy; other models (RoBERTa, ELECTRA, BERT, MiniLM) with the encoder loader.
  Encoder-decoder models are refused.
* **Tokenization** as mauve-text's: the tokenizer's own special tokens, truncation at the end.
  So the last token is ``</s>`` for RoBERTa, ``[SEP]`` for ELECTRA/BERT/MiniLM, the text's own
  last token for GPT-2 (which adds nothing) and SmolLM2 (which puts a BOS first).
* **Truncation**: ``max_text_length`` tokens (default 1024, mauve-text's default), capped by the
  model's window (512 for RoBERTa, ELECTRA, MiniLM). The blind-spots paper's App. A gives no
  length for MAUVE; its WikiText texts are cut below 256 tokens in preprocessing (App. B.2), so
  on its data the cap never bites.
* **Hyper-parameters**, blind-spots paper App. A: scaling ``c = 5``, k-means with 500 iterations
  and ``n/10`` clusters. mauve-text's ``num_buckets="auto"`` is exactly that:
  ``max(2, round(min(|P|, |Q|) / 10))``. The rest are mauve-text's defaults: seed 25, 5 k-means
  restarts (best objective kept), PCA keeping 90% of the variance, 25 mixture weights.
* **Padding**: batches are padded on the right with an attention mask and the feature is read at
  each text's own last position, so a text gets the same feature alone or in any batch (up to
  float rounding).
* **Empty texts**: a text with no tokens (the empty string under GPT-2's tokenizer) has no last
  token. It is left out of its set with a warning, as mauve-text drops empty strings; a set
  left with nothing is a ValueError.
* **Sets of different sizes** (open-ended generation: unpaired samples): the engine takes one
  reference entry per prediction; every reference of every row joins the reference set (so a
  row may carry several). :func:`mauve_sets` takes a reference set of any size directly.

Paper defaults: gpt2-large features (the MAUVE paper); the blind-spots paper also uses
roberta-large and google/electra-large-discriminator (ELECTRA is its best). Offline:
``feature_model="smollm2"`` (causal) or ``"minilm"`` (encoder).
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import warnings
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from blindspot.models import load_causal_lm, load_config, load_encoder, model_revision
from blindspot.paths import cache_dir
from blindspot.scorers import _device
from blindspot.scorers import _lm_utils as lm
from blindspot.scoring.cache import default_score_cache
from blindspot.scoring.card import ModuleCard
from blindspot.scoring.scorer import ScoreInput, register_scorer
from blindspot.sqlite_utils import KeyValueStore

DEFAULT_FEATURE_MODEL = "gpt2-large"
DEFAULT_MAX_TEXT_LENGTH = 1024

#: mauve.compute_mauve's clustering and frontier arguments, at the blind-spots paper's values
PAPER_HYPERPARAMETERS: dict[str, Any] = {
    "mauve_scaling_factor": 5,
    "kmeans_max_iter": 500,
    "num_buckets": "auto",
    "seed": 25,
    "kmeans_num_redo": 5,
    "kmeans_explained_var": 0.9,
    "pca_max_data": -1,
    "divergence_curve_discretization_size": 25,
}

_DEFAULT = object()


# -- feature model ---------------------------------------------------------------------------------

def feature_kind(config: Any) -> str:
    """"causal" or "encoder" for a Hugging Face config; a ValueError for encoder-decoders."""
    if getattr(config, "is_encoder_decoder", False):
        raise ValueError(f"MAUVE features need a decoder-only or encoder-only model; "
                         f"{getattr(config, 'name_or_path', '') or config.model_type!r} is an "
                         f"encoder-decoder")
    architectures = getattr(config, "architectures", None) or []
    causal = any(a.endswith(("ForCausalLM", "LMHeadModel")) for a in architectures)
    return "causal" if causal or getattr(config, "is_decoder", False) else "encoder"


def load_feature_model(name: str, kind: str, dtype: str | None = None) -> tuple[Any, Any]:
    """(tokenizer, model, in ``dtype`` when given) loaded once per process; features come from
    ``model.base_model``."""
    return load_causal_lm(name, dtype) if kind == "causal" else load_encoder(name, dtype)


def token_sequences(tokenizer: Any, texts: Sequence[str], limit: int) -> list[list[int]]:
    """Each text's ids with the tokenizer's special tokens, cut to ``limit`` (as mauve-text)."""
    if not texts:
        return []
    encoded = tokenizer(list(texts), truncation=True, max_length=limit)["input_ids"]
    return [list(ids) for ids in encoded]


def last_token_states(model: Any, sequences: Sequence[Sequence[int]], fill: int,
                      batch_size: int, causal: bool) -> list[np.ndarray]:
    """The final-layer state of each sequence's last token (float32; empty for no tokens).

    Right padding with an attention mask: a real token keeps its position and never attends to
    a pad, so the feature at position ``len - 1`` does not depend on the batch.
    """
    import torch

    out = [np.zeros(0, dtype=np.float32) for _ in sequences]
    todo = [i for i, seq in enumerate(sequences) if seq]
    base = model.base_model
    device = lm.model_device(model)
    extra = {"use_cache": False} if causal else {}
    for chunk in lm.length_chunks([len(sequences[i]) for i in todo], batch_size):
        rows = [todo[k] for k in chunk]
        ids, mask = lm.right_pad([sequences[i] for i in rows], fill)
        with torch.inference_mode():
            hidden = base(input_ids=ids.to(device), attention_mask=mask.to(device),
                          **extra).last_hidden_state
        for b, i in enumerate(rows):
            out[i] = hidden[b, len(sequences[i]) - 1].float().cpu().numpy()
    return out


def last_token_states_on_device(model: Any, sequences: Sequence[Sequence[int]], fill: int,
                                budget: int, precision: str, causal: bool) -> list[np.ndarray]:
    """:func:`last_token_states` in token batches (split on running out of memory), each row's
    last-token state gathered on the device and brought back once per batch."""
    import torch

    out = [np.zeros(0, dtype=np.float32) for _ in sequences]
    todo = [i for i, seq in enumerate(sequences) if seq]
    base = model.base_model
    device = lm.model_device(model)
    extra = {"use_cache": False} if causal else {}

    def launch(rows: list[int]) -> Any:
        batch = [sequences[todo[k]] for k in rows]
        ids, mask = _device.padded_on_device(batch, fill, device)
        last = _device.pinned_to(torch.tensor([len(s) - 1 for s in batch]), device)
        with torch.inference_mode(), _device.matmul_precision(precision):
            hidden = base(input_ids=ids, attention_mask=mask, **extra).last_hidden_state
            return hidden[torch.arange(len(batch), device=device), last].float()

    states = _device.values_by_batch(launch, [len(sequences[i]) for i in todo], budget, "mauve")
    for k, i in enumerate(todo):
        out[i] = np.asarray(states[k], dtype=np.float32)
    return out


# -- feature cache ---------------------------------------------------------------------------------

class FeatureCache:
    """key -> float32 feature vector, in SQLite (WAL) beside the score cache.

    A key covers the model's revision, the truncation length and the exact text, so features
    of a text seen before (in any set) are never recomputed; a text with no tokens is stored as
    an empty vector.
    """

    def __init__(self, path: Path | str):
        self.path = Path(path)
        self._store = KeyValueStore(self.path, "mauve_features", derived=True)

    def get_many(self, keys: Sequence[str]) -> dict[str, np.ndarray]:
        return {k: np.frombuffer(base64.b64decode(v), dtype="<f4").copy()
                for k, v in self._store.get_many(keys).items()}

    def put_many(self, items: Iterable[tuple[str, np.ndarray]]) -> None:
        self._store.put_many((k, base64.b64encode(np.asarray(v, dtype="<f4").tobytes()).decode())
                             for k, v in items)

    def __len__(self) -> int:
        return len(self._store)


_FEATURE_CACHES: dict[str, FeatureCache] = {}


def feature_cache_at(path: Path | str) -> FeatureCache:
    """One :class:`FeatureCache` object per file and process."""
    key = str(path)
    if key not in _FEATURE_CACHES:
        _FEATURE_CACHES[key] = FeatureCache(key)
    return _FEATURE_CACHES[key]


def default_feature_cache() -> FeatureCache | None:
    """``<cache dir>/features.sqlite``; None when ``BLINDSPOT_SCORE_CACHE=0`` (no caching)."""
    if os.environ.get("BLINDSPOT_SCORE_CACHE", "1") == "0":
        return None
    return feature_cache_at(cache_dir() / "features.sqlite")


# -- MAUVE on features -----------------------------------------------------------------------------

def check_hyperparameters(hyper: dict[str, Any]) -> None:
    """A ValueError naming a clustering/frontier option with an impossible value."""
    buckets = hyper["num_buckets"]
    if buckets != "auto" and (isinstance(buckets, bool) or not isinstance(buckets, int)
                              or buckets < 2):
        raise ValueError(f"num_buckets must be 'auto' (n/10) or an integer >= 2, got {buckets!r}")
    for name in ("kmeans_max_iter", "kmeans_num_redo", "divergence_curve_discretization_size"):
        if isinstance(hyper[name], bool) or not isinstance(hyper[name], int) or hyper[name] < 1:
            raise ValueError(f"{name} must be a positive integer, got {hyper[name]!r}")
    if not isinstance(hyper["seed"], int) or isinstance(hyper["seed"], bool):
        raise ValueError(f"seed must be an integer, got {hyper['seed']!r}")
    if not 0 < float(hyper["kmeans_explained_var"]) < 1:
        raise ValueError("kmeans_explained_var must be in (0, 1)")
    if not float(hyper["mauve_scaling_factor"]) > 0:
        raise ValueError("mauve_scaling_factor must be positive")


def mauve_from_features(p_features: np.ndarray, q_features: np.ndarray,
                        **hyper: Any) -> dict[str, float]:
    """mauve-text's scores for P (reference) and Q (hypothesis) features, shapes (n, d)."""
    import mauve

    settings = {**PAPER_HYPERPARAMETERS, **hyper}
    buckets = settings["num_buckets"]
    if buckets != "auto" and buckets > len(p_features) + len(q_features):
        raise ValueError(f"num_buckets={buckets} is more than the {len(p_features)} + "
                         f"{len(q_features)} texts to cluster")
    out = mauve.compute_mauve(p_features=p_features, q_features=q_features, verbose=False,
                              **settings)
    return {"mauve": float(out.mauve), "mauve_star": float(out.mauve_star),
            "frontier_integral": float(out.frontier_integral),
            "num_buckets": float(out.num_buckets)}


# -- the scorer ------------------------------------------------------------------------------------

def mauve_module(module: Any, predictions: list[str], references: list[str],
                 p_features: Any = None, q_features: Any = None, p_tokens: Any = None,
                 q_tokens: Any = None, num_buckets: Any = "auto", pca_max_data: int = -1,
                 kmeans_explained_var: float = 0.9, kmeans_num_redo: int = 5,
                 kmeans_max_iter: int = 500, featurize_model_name: str = "gpt2-large",
                 device_id: int = -1, max_text_length: int = 1024,
                 divergence_curve_discretization_size: int = 25, mauve_scaling_factor: float = 5,
                 verbose: bool = True, seed: int = 25) -> Any:
    """The ``mauve`` module's compute: evaluate's canonical ``mauve`` (mauve-text's result), with
    the features of any model, computed once and cached."""
    import torch  # the heavy edge, as mauve-text below
    from mauve import compute_mauve

    if (p_features is None and p_tokens is None) or (q_features is None and q_tokens is None):
        device = f"cuda:{device_id}" if device_id >= 0 and torch.cuda.is_available() else "cpu"
        scorer = Mauve(feature_model=featurize_model_name, max_text_length=max_text_length,
                       device=device)
        if p_features is None and p_tokens is None:
            p_features = scorer.feature_matrix(predictions, "predictions")
        if q_features is None and q_tokens is None:
            q_features = scorer.feature_matrix(references, "references")
    return compute_mauve(p_features=p_features, q_features=q_features, p_tokens=p_tokens,
                         q_tokens=q_tokens, num_buckets=num_buckets, pca_max_data=pca_max_data,
                         kmeans_explained_var=kmeans_explained_var,
                         kmeans_num_redo=kmeans_num_redo, kmeans_max_iter=kmeans_max_iter,
                         featurize_model_name=featurize_model_name, device_id=device_id,
                         max_text_length=max_text_length,
                         divergence_curve_discretization_size=(
                             divergence_curve_discretization_size),
                         mauve_scaling_factor=mauve_scaling_factor, verbose=verbose, seed=seed)


_MAUVE_CARD = ModuleCard(
    title="MAUVE drop-in", emoji="🟣",
    summary=("MAUVE (mauve-text): a drop-in for evaluate's mauve (same arguments, defaults and "
             "result object), with texts featurized by any causal LM or encoder and features "
             "cached."),
    description="""\
MAUVE (Pillutla et al., 2021) through mauve-text: a drop-in for evaluate's canonical ``mauve``.

The same arguments, defaults and output as ``evaluate.load("mauve")``: ``compute_mauve`` of
mauve-text with ``p_text=predictions`` and ``q_text=references`` (or ``p_features``/``q_features``,
``p_tokens``/``q_tokens``), ``num_buckets`` ("auto"), ``pca_max_data`` (-1),
``kmeans_explained_var`` (0.9), ``kmeans_num_redo`` (5), ``kmeans_max_iter`` (500),
``featurize_model_name`` ("gpt2-large"), ``device_id`` (-1: CPU), ``max_text_length`` (1024),
``divergence_curve_discretization_size`` (25), ``mauve_scaling_factor`` (5), ``verbose`` and
``seed`` (25); it returns mauve-text's result object (``out.mauve``, ``out.frontier_integral``,
``out.divergence_curve``, ``out.p_hist``, ``out.q_hist``...).

Added: texts are featurized here, as mauve-text does (the last layer's state at each text's last
token, cut to ``max_text_length``), by ANY model: ``featurize_model_name`` may be a Hub id, a
local folder or an offline short name (``"minilm"``, ``"smollm2"``), where mauve-text takes only
the GPT-2 family; each distinct text's features are computed once and cached on disk.

A blind-spot run (``blindspot run --metrics mauve``, the ``mauve_score`` module) scores the
hypotheses as MAUVE's Q and the references as its P, the blind-spots paper's setting.""",
    examples="""\
>>> import evaluate
>>> import numpy as np
>>> mauve = evaluate.load("blindspot/mauve")
>>> features = np.random.RandomState(0).randn(40, 8).astype(np.float32)
>>> out = mauve.compute(predictions=["a"] * 40, references=["a"] * 40, p_features=features,
...                     q_features=features.copy(), verbose=False)
>>> print(out.mauve, out.num_buckets)
1.0 4
>>> out = mauve.compute(predictions=["hello there", "general kenobi"],
...                     references=["hello there", "general kenobi"],
...                     featurize_model_name="minilm", verbose=False)
>>> print(out.mauve, out.p_hist)
0.75 [0.5 0.5]

The second example is the canonical module's documented one, with MiniLM features: for two
identical sets of two texts mauve-text 0.4.0 quantizes into two buckets and gives 0.75 (the
canonical docstring prints 1.0, an untested example), whatever the feature model.
""",
    inputs="""\
Args:
    predictions (list of str): the generated texts (MAUVE's P).
    references (list of str): the human texts (MAUVE's Q).
    p_features, q_features (arrays of shape (n, d)): features instead of texts.
    p_tokens, q_tokens: token ids instead of texts (featurized by mauve-text, GPT-2 family only).
    num_buckets ("auto" or int), pca_max_data (int), kmeans_explained_var (float),
    kmeans_num_redo (int), kmeans_max_iter (int), divergence_curve_discretization_size (int),
    mauve_scaling_factor (float), seed (int): mauve-text's settings, its defaults.
    featurize_model_name (str): the feature model: Hub id, local folder or offline short name
        ("minilm", "smollm2"); default gpt2-large.
    device_id (int): GPU id for featurization, -1 (default) for the CPU.
    max_text_length (int): tokens per text, default 1024 (capped by the model's window).
    verbose (bool): mauve-text's progress messages.
Returns:
    mauve-text's result: mauve in (0, 1], higher = the sets are closer; frontier_integral,
    divergence_curve, p_hist, q_hist, num_buckets.
""",
    citation="""\
@inproceedings{pillutla-etal:mauve:neurips2021,
  title={MAUVE: Measuring the Gap Between Neural Text and Human Text using Divergence Frontiers},
  author={Pillutla, Krishna and Swayamdipta, Swabha and Zellers, Rowan and Thickstun, John and
          Welleck, Sean and Choi, Yejin and Harchaoui, Zaid},
  booktitle = {NeurIPS},
  year      = {2021}
}
""",
    sections="""\
## Metric description
MAUVE (Pillutla et al., 2021) compares two sets of texts: each text becomes a feature vector
(the last layer's state at its last token), both sets are quantized jointly (PCA, k-means) into
histograms, and MAUVE is the area under their divergence frontier, in (0, 1]: higher means the
sets are closer.

## Drop-in for evaluate's `mauve`
Offline after `make env`, from any directory: `evaluate.load("blindspot/mauve")`. `evaluate.load("mauve")` is evaluate's
canonical module (online, or from your own module cache), which installing blindspot never
touches; ours gives the same result for the same call: it is the same `compute_mauve` call of
mauve-text, with `p_text=predictions` and `q_text=references`.

```python
import evaluate
mauve = evaluate.load("blindspot/mauve")
out = mauve.compute(predictions=generations, references=human_texts)   # gpt2-large (Hub)
out = mauve.compute(predictions=generations, references=human_texts,
                    featurize_model_name="minilm")                      # offline
out.mauve, out.frontier_integral, out.divergence_curve, out.p_hist, out.q_hist
```
Arguments and defaults are the canonical module's: `p_features`/`q_features` or
`p_tokens`/`q_tokens` instead of texts, `num_buckets` ("auto": a tenth of the smaller set),
`pca_max_data` (-1), `kmeans_explained_var` (0.9), `kmeans_num_redo` (5), `kmeans_max_iter`
(500), `featurize_model_name` ("gpt2-large"), `device_id` (-1: CPU), `max_text_length` (1024),
`divergence_curve_discretization_size` (25), `mauve_scaling_factor` (5), `verbose` (True),
`seed` (25).

Added: texts are featurized here as mauve-text does (its own featurizer takes only the GPT-2
family): `featurize_model_name` may be any causal LM or encoder: a Hub id, a local folder, or an
offline short name (`minilm`, `smollm2`); each distinct text's features are computed once and
cached on disk. Texts with no tokens are left out of their set with a warning.

## Output
mauve-text's result object: `mauve` (higher = closer), `frontier_integral` (lower = closer),
`divergence_curve`, `p_hist`, `q_hist`, `num_buckets`...

Small sets quantize coarsely: two identical sets of two texts fall into two buckets, for which
mauve-text 0.4.0 gives 0.75 (the canonical docstring prints 1.0 for that example, which its own
doctest skips); identical sets of 40 texts give 1.0.

## Canonical default and the blind-spot protocol
A blind-spot run uses the `mauve` scorer (`blindspot run --metrics mauve`, the `mauve_score`
module): the hypotheses are MAUVE's Q and the references its P, with the blind-spots paper's
settings (c = 5, n/10 clusters, 500 k-means iterations).

## Blind spots the papers found
- Positioned error (blind-spots §5.1): with GPT-2 features, MAUVE barely drops (about 1-7%)
  when 10 tokens at the start or in the middle of every hypothesis are replaced by random or
  shuffled tokens, and collapses only when the error is at the end: GPT-2's last-token feature
  encodes mostly the local context. RoBERTa and ELECTRA features penalize every position.
- Truncation: MAUVE-GPT2 penalizes truncation only in a binary way (the score barely changes
  with how much is cut).
- Sentence switching: MAUVE-GPT2 and MAUVE-RoBERTa do not penalize hypotheses whose sentences are
  reordered (the last sentence kept in place); MAUVE-ELECTRA does.
- MAUVE-ELECTRA penalizes some fluency errors (article / preposition removal) much more than
  other metrics: it may need calibration.
- The paper's advice: use MAUVE-RoBERTa together with GPT-PPL, or ELECTRA features.

## Limitations
- It needs sets of texts, not single rows; with small sets (tens of texts) the n/10 clusters are
  few and the score is coarse and noisy.
- The score depends on the k-means seed; results are reproducible for a fixed seed.
""",  # noqa: E501
    requirements=("mauve-text", "faiss-cpu", "torch", "transformers"),
    compute=mauve_module,
)


@register_scorer
class Mauve(lm.ModelScorer):
    """MAUVE of the hypothesis set against the reference set, on last-token features."""

    name = "mauve"
    card = _MAUVE_CARD
    library = "mauve-text"
    model_option = "feature_model"
    outputs = ("mauve", "mauve_star", "frontier_integral", "num_buckets")
    default_output = "mauve"
    extra_options = tuple(PAPER_HYPERPARAMETERS)
    uses_references = "required"
    uses_source = "none"
    corpus_level = True
    version = "1"
    default_batch_size = 16

    def __init__(self, feature_model: str = DEFAULT_FEATURE_MODEL,
                 max_text_length: int = DEFAULT_MAX_TEXT_LENGTH, batch_size: int | None = None,
                 device: str | None = None, feature_cache: Any = _DEFAULT,
                 precision: str | None = None, token_budget: int | None = None,
                 **options: Any) -> None:
        self.check_options(options)
        if isinstance(max_text_length, bool) or not isinstance(max_text_length, int) \
                or max_text_length < 1:
            raise ValueError(f"max_text_length must be a positive integer, got {max_text_length!r}")
        hyper = {**PAPER_HYPERPARAMETERS, **options}
        check_hyperparameters(hyper)
        # batch size, device and the feature cache change how, not what, is computed: they are
        # not part of the score cache key
        super().__init__(device, precision, token_budget, feature_model=str(feature_model),
                         max_text_length=max_text_length, **hyper)
        self.feature_kind = feature_kind(load_config(self.config["feature_model"]))
        self._batch_size = batch_size or self.default_batch_size
        self._feature_cache = (default_feature_cache() if feature_cache is _DEFAULT
                               else feature_cache_at(feature_cache) if feature_cache else None)
        self._revision: str | None = None

    # -- identity ----------------------------------------------------------------------------------

    def model_revision(self) -> str:
        if self._revision is None:
            self._revision = model_revision(self.config["feature_model"])
        return self._revision

    def hyperparameters(self) -> dict[str, Any]:
        """The arguments handed to ``mauve.compute_mauve`` besides the features."""
        return {key: self.config[key] for key in PAPER_HYPERPARAMETERS}

    def _feature_key(self, text: str) -> str:
        # a precision asked for keys its features apart (none asked: the keys as before)
        asked = [self.precision()] if "precision" in self.config else []
        payload = json.dumps([self.model_revision(), self.feature_kind,
                              self.config["max_text_length"], text, *asked], ensure_ascii=False)
        return hashlib.sha256(payload.encode("utf-8")).hexdigest()

    # -- features ----------------------------------------------------------------------------------

    def _compute_features(self, texts: Sequence[str]) -> list[np.ndarray]:
        tokenizer, model = load_feature_model(self.config["feature_model"], self.feature_kind,
                                              self.weight_dtype())
        model = lm.place(model, self._device)
        limit = lm.max_positions(tokenizer, model, self.config["max_text_length"])
        if self.on_device_path():
            return last_token_states_on_device(
                model, token_sequences(tokenizer, texts, limit), lm.pad_id(tokenizer),
                self.token_budget(), self.precision(), self.feature_kind == "causal")
        return last_token_states(model, token_sequences(tokenizer, texts, limit),
                                 lm.pad_id(tokenizer), self._batch_size,
                                 self.feature_kind == "causal")

    def text_features(self, texts: Sequence[str]) -> list[np.ndarray]:
        """One feature per text, in order (empty for a text with no tokens); each distinct text
        is computed once, and never again while the feature cache has it."""
        unique = list(dict.fromkeys(texts))
        keys = {text: self._feature_key(text) for text in unique}
        store = self._feature_cache
        found = store.get_many(list(keys.values())) if store is not None else {}
        todo = [text for text in unique if keys[text] not in found]
        if todo:
            computed = dict(zip((keys[t] for t in todo), self._compute_features(todo), strict=True))
            if store is not None:
                store.put_many(computed.items())
            found.update(computed)
        return [found[keys[text]] for text in texts]

    def feature_matrix(self, texts: Sequence[str], argument: str) -> np.ndarray:
        """The (n, d) features of a set, texts with no tokens left out (with a warning)."""
        if not texts:
            raise ValueError(f"{argument} is empty; MAUVE compares two non-empty sets of texts")
        features = [f for f in self.text_features(texts) if f.size]
        if len(features) < len(texts):
            warnings.warn(f"mauve: {len(texts) - len(features)} of the {len(texts)} {argument} "
                          f"have no tokens and are left out of the set", stacklevel=3)
        if not features:
            raise ValueError(f"{argument}: no text has any token; MAUVE needs non-empty texts")
        return np.stack(features)

    # -- scores ------------------------------------------------------------------------------------

    def score_sets(self, predictions: Sequence[str], references: Sequence[str]) -> dict[str, float]:
        """MAUVE of the hypothesis set (Q) against the reference set (P), any two sizes."""
        q_features = self.feature_matrix(list(predictions), "predictions")
        p_features = self.feature_matrix(list(references), "references")
        return mauve_from_features(p_features, q_features, **self.hyperparameters())

    def score_corpus(self, inputs: Sequence[ScoreInput]) -> dict[str, float]:
        return self.score_sets([item.hypothesis for item in inputs],
                               [ref for item in inputs for ref in item.references])

    def score_batch(self, batch: Sequence[ScoreInput]) -> list[dict[str, float]]:
        raise ValueError("mauve is corpus-level: it compares two sets of texts and has no "
                         "per-row score; use score_corpus / level='corpus'")


def _string_list(value: Any, argument: str) -> list[str]:
    """``value`` as a flat list of strings, or a ValueError naming ``argument``."""
    if value is None or isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
        raise ValueError(f"{argument} must be a list of strings, got {type(value).__name__}")
    items = list(value)
    for i, item in enumerate(items):
        if not isinstance(item, str):
            raise ValueError(f"{argument}[{i}] must be a string, got {type(item).__name__}")
    return items


def mauve_sets(predictions: Sequence[str], references: Sequence[str], *, cache: Any = _DEFAULT,
               **options: Any) -> dict[str, float]:
    """MAUVE of a hypothesis set against a reference set of any size (unpaired samples).

    ``options`` are :class:`Mauve`'s. The result is cached like the engine's corpus scores
    (``cache``: a :class:`~blindspot.scoring.cache.ScoreCache`, None, or the default one).
    """
    hyps = _string_list(predictions, "predictions")
    refs = _string_list(references, "references")
    scorer = Mauve(**options)
    store = default_score_cache() if cache is _DEFAULT else cache
    key = scorer.cache_key(ScoreInput(json.dumps({"predictions": hyps, "reference_set": refs},
                                                 ensure_ascii=False)))
    if store is not None:
        hit = store.get_many([key])
        if key in hit:
            return hit[key]
    result = scorer.score_sets(hyps, refs)
    if store is not None:
        store.put_many([(key, result)])
    return result
