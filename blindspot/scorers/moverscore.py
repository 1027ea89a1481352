"""MoverScore (Zhao et al., 2019), unigram with idf weights, on any encoder.

A text becomes a weighted point cloud: the contextual embedding of each of its tokens (output of
layer ``num_layers`` of the encoder, by default its last layer), L2-normalised, with the token's
idf as its mass. The score is ``1 - EMD`` between the hypothesis' and the reference's clouds,
each normalised to total mass 1, with the Euclidean distance between the normalised embeddings
(``distance="cosine"`` uses ``1 - cos``); identical texts score 1.

Choices, and why:

* **idf**: ``log((M + 1) / (df + 1))`` over the M reference texts of the call (``df`` counts a
  token once per text, unseen tokens get ``log(M + 1)``), one table for both sides, as the spec
  asks (BERTScore weights both sides by reference idf as well). With ``idf=False`` every token
  weighs 1. A token present in every reference weighs 0, so idf needs more than one reference.
* **unigram, first sub-word**: as the authors' release does for WordPiece, only the first piece
  of a word carries mass (``remove_subwords``; found from the fast tokenizer's word ids, so it
  holds for BPE and SentencePiece too); a token that is one ASCII punctuation mark
  (``remove_punctuation``) and ``stop_words`` weigh 0. The special tokens ([CLS], [SEP]) weigh
  their idf, as in the authors' ``moverscore_v2``: 0 with idf (every text has them), 1 without,
  so with ``idf=False`` their vectors take part in the transport.
* **EMD**: solved exactly by POT's network simplex (``ot.emd2``): a maintained C++ solver of
  exactly this transport problem; pyemd (the authors' choice) is not installed, and scipy's
  ``linprog`` is exact too but a general LP solver, slower per pair.
* **texts with no weighted token** (empty, only punctuation): two such texts score 1, one such
  text against a non-empty one scores 0 (the transport problem has no mass to move).
* **model**: default ``distilbert-base-uncased`` (the authors' current default; the paper's best
  was BERT fine-tuned on MNLI: give its Hub id or folder). The encoder is bert_score's cut model
  (:func:`blindspot.models.load_bertscore_encoder`), so BERTScore and MoverScore on the same
  checkpoint and layer share one model object. Several references: the mean over references.
"""

from __future__ import annotations

import math
import string
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from blindspot.models import load_bertscore_tokenizer, model_revision, resolve_model
from blindspot.scorers import _device
from blindspot.scorers._encoders import (
    Truncation,
    checked_layer,
    corpus_digest,
    encoder_config,
    encoder_on_device,
    idf_corpus,
    layer_count,
    truncation_of,
)
from blindspot.scorers._lm_utils import ModelScorer
from blindspot.scoring.card import ModuleCard
from blindspot.scoring.scorer import Reference, ScoreInput, register_scorer

DEFAULT_MODEL = "distilbert-base-uncased"
DISTANCES = ("euclidean", "cosine")
#: word-piece markers stripped before a token is compared with punctuation and stop words
_PIECE_MARKERS = ("##", "\u0120", "\u2581")
_PUNCTUATION = frozenset(string.punctuation)


@dataclass(frozen=True)
class IdfTable:
    """idf weight per token id, ``default`` for ids no reference contains."""

    weights: dict[int, float]
    default: float

    def __call__(self, token_id: int) -> float:
        return self.weights.get(token_id, self.default)


def idf_table(corpus: Sequence[str], tokenizer: Any, max_length: int) -> IdfTable:
    """``log((M + 1) / (df + 1))`` per token id over the ``M`` texts of ``corpus``."""
    counts: Counter[int] = Counter()
    if corpus:
        encoded = tokenizer(list(corpus), truncation=True, max_length=max_length)["input_ids"]
        for ids in encoded:
            counts.update(set(ids))
    total = len(corpus)
    return IdfTable({token: math.log((total + 1) / (df + 1)) for token, df in counts.items()},
                    math.log(total + 1))


def max_input_length(tokenizer: Any, path: str) -> int:
    """Longest input an encoder takes: its tokenizer's limit, else its position table's."""
    limit = tokenizer.model_max_length
    if limit and limit < 100_000:
        return int(limit)
    return int(getattr(encoder_config(path), "max_position_embeddings", 512))


def token_core(token: str) -> str:
    """A token without its word-piece marker (``##ing`` -> ``ing``, ``Ġthe`` -> ``the``)."""
    for marker in _PIECE_MARKERS:
        if token.startswith(marker) and len(token) > len(marker):
            return token[len(marker):]
    return token


def is_punctuation(token: str) -> bool:
    """True for a token that is one ASCII punctuation mark (``string.punctuation``), after its
    word-piece marker: the authors' test (an en dash or a curly quote is a word to them)."""
    return token_core(token) in _PUNCTUATION


@dataclass(frozen=True)
class Cloud:
    """A text's weighted tokens: (k, d) normalised float64 embeddings and k masses summing to 1."""

    embeddings: Any
    masses: Any

    @property
    def empty(self) -> bool:
        return len(self.masses) == 0


def transport_cost(hypothesis: Cloud, reference: Cloud, distance: str) -> float:
    """The earth mover's distance between two clouds (exact, POT's network simplex)."""
    import ot
    import torch

    if distance == "euclidean":
        cost = torch.cdist(hypothesis.embeddings, reference.embeddings,
                           compute_mode="donot_use_mm_for_euclid_dist")
    else:
        cost = (1 - hypothesis.embeddings @ reference.embeddings.T).clamp_min(0)
    return float(ot.emd2(hypothesis.masses.numpy(), reference.masses.numpy(), cost.numpy(),
                         numItermax=1_000_000))


def mover_score(hypothesis: Cloud, reference: Cloud, distance: str) -> float:
    """``1 - EMD``; 1 for two texts without weighted tokens, 0 when only one has none."""
    if hypothesis.empty or reference.empty:
        return 1.0 if hypothesis.empty and reference.empty else 0.0
    return 1.0 - transport_cost(hypothesis, reference, distance)


_MOVERSCORE_CARD = ModuleCard(
    title="MoverScore", emoji="🚚",
    summary=("Unigram MoverScore with idf weights on any encoder: 1 - earth mover's distance "
             "between the contextual token embeddings of hypothesis and reference, on blindspot's "
             "cached scoring layer."),
    description="""\
MoverScore (Zhao et al., 2019), unigram with idf weights, on blindspot's cached scoring layer.

Each text is a cloud of its tokens' contextual embeddings (L2-normalised, last layer of the
encoder by default), weighted by reference idf; the score is ``1 - EMD`` between the hypothesis'
and the reference's clouds, solved exactly (POT's network simplex). Identical texts score 1.

Options: ``model_type`` (Hub id, local folder or offline short name ``"minilm"``; default
``distilbert-base-uncased``, the authors' current default; the paper's best was BERT fine-tuned on
MNLI), ``num_layers`` (default: the last layer), ``idf`` (default True; weights from all references
of the call), ``distance`` (``"euclidean"`` as in the paper, or ``"cosine"``), ``remove_subwords``
(only a word's first piece carries mass), ``remove_punctuation``, ``stop_words``, ``batch_size``,
``device``. Several references per hypothesis are averaged.""",
    examples="""\
>>> import evaluate
>>> moverscore = evaluate.load("blindspot/moverscore")
>>> out = moverscore.compute(predictions=["The cat sat on the mat."],
...                          references=["The cat sat on the mat."], model_type="minilm",
...                          idf=False)
>>> round(out["moverscore"], 4)
1.0
>>> out = moverscore.compute(
...     predictions=["A cat is sitting on a mat.", "Stocks fell sharply.", "Dogs bark."],
...     references=["The cat sat on the mat.", "Markets dropped today.", "Dogs bark loudly."],
...     model_type="minilm", use_aggregator=False)
>>> [round(s, 2) for s in out["moverscore"]]
[0.43, -0.01, 0.4]
""",
    inputs="""\
Args:
    predictions (list of str): hypotheses.
    references (list of str or list of list of str): one or several references per hypothesis
        (several are averaged).
    model_type (str): Hub id, local folder or offline short name ("minilm");
        default distilbert-base-uncased.
    num_layers (int): layer whose output is used (default: the last).
    idf (bool): idf weights from all references of the call (default True).
    distance (str): "euclidean" (default, on normalised embeddings) or "cosine".
    remove_subwords, remove_punctuation (bool, default True); stop_words (list of str).
    batch_size (int): model batch size (default 64). device (str): default cuda if available.
    use_aggregator (bool): mean over rows (default) or per-row lists.
Returns:
    moverscore: 1 - EMD, at most 1 (identical texts), higher is better; below 0 for very
        unrelated texts (the Euclidean distance of unit vectors reaches 2).
    truncated_inputs, max_length: how many distinct texts were longer than the encoder's
        max_length (tokens) and cut to it (the call warns once when any was).
""",
    citation="""\
@inproceedings{zhao-etal-2019-moverscore,
    title = "{M}over{S}core: Text Generation Evaluating with Contextualized Embeddings and Earth Mover Distance",
    author = "Zhao, Wei and Peyrard, Maxime and Liu, Fei and Gao, Yang and Meyer, Christian M. and Eger, Steffen",
    booktitle = "Proceedings of EMNLP-IJCNLP 2019",
    year = "2019",
    pages = "563--578",
}
""",  # noqa: E501
    sections="""\
## Metric description
MoverScore (Zhao et al., 2019) compares two texts as weighted clouds of contextual token
embeddings and scores them by how little "work" it takes to move one cloud onto the other: the
earth mover's distance (EMD). Here, the unigram variant:

- each token's embedding is the output of layer `num_layers` of the encoder (default: the last
  layer), L2-normalised;
- each token weighs its idf, `log((M + 1) / (df + 1))` over the M references of the call (`df`
  counts a token once per reference; unseen tokens get `log(M + 1)`), normalised to total mass 1
  per text; special tokens, punctuation and continuation word pieces weigh 0 (a word is
  represented by its first piece);
- the cost of moving mass between two tokens is the Euclidean distance of their normalised
  embeddings (`distance="cosine"` uses `1 - cos`);
- score = `1 - EMD`, solved exactly by POT's network simplex (`ot.emd2`). Identical texts score 1.

The implementation is written from the paper's description; it does not use the authors'
`moverscore` package (which needs pyemd).

## How to use
```python
import evaluate
moverscore = evaluate.load("blindspot/moverscore")
moverscore.compute(predictions=["The cat sat on the mat."],
                   references=["The cat is on the mat."],
                   model_type="distilbert-base-uncased")   # default; needs the Hub
moverscore.compute(predictions=[...], references=[...], model_type="minilm")  # offline
```
Options: `model_type` (Hub id, local folder, or offline short name `minilm`), `num_layers`
(default: last layer), `idf` (default True; the weights come from all references of the call),
`distance` (`"euclidean"` or `"cosine"`), `remove_subwords`, `remove_punctuation` (default True),
`stop_words` (tokens given weight 0), `batch_size`, `device`, `use_aggregator=False` for per-row
lists. Several references per hypothesis are averaged.

## Output
`moverscore`: `1 - EMD`. 1 for identical texts; with the Euclidean distance of unit vectors (up to
2) the score can fall below 0 for unrelated texts. Higher is better. Two texts without any weighted
token (empty, or only punctuation) score 1; one such text against a normal one scores 0.

Long inputs are cut to the encoder's maximum length (512 tokens for MiniLM and BERT): when any
was, the call warns once (`TruncationWarning`, with their number and the limit), and every result
carries `truncated_inputs` (distinct texts cut) and `max_length` (the limit, in tokens).

## Paper default and variants
- The paper's best variant was unigram (or bigram) MoverScore on BERT fine-tuned on MNLI, with
  embeddings aggregated from several layers; the MENLI paper uses the unigram variant with
  BERT-base-MNLI; the authors' current release defaults to `distilbert-base-uncased`, last layer,
  which is this module's default. Any of them is a `model_type` (and `num_layers`) away; the
  multi-layer aggregation is not implemented.
- idf: one table from the references, applied to both sides (the authors' release also allows a
  hypothesis-side table). With a single reference in the call every reference token weighs 0, so
  pass `idf=False` or score several rows at once.

## Blind spots the papers found
- **MENLI** (Chen & Eger, 2023): on the preference-based adversarial set MoverScore is at or below
  chance (48% accuracy on average in reference-based MT); it improves most when combined with an
  NLI metric.
- **Perturbation checklists** (Sai et al., 2021): MoverScore misses negation, changed names and
  numbers and antonyms in MT; it is robust to jumbled words and to numbers written as words.
- **Synthetic impairments** (the examination of BERTScore, BLEURT, NUBIA, MoverScore and
  Mark-Evaluate): MoverScore stays above 0.2 on fully shuffled text and ends around 0.2 under heavy
  repetition, though it falls monotonically.
- The blind-spots paper (He et al., 2023) includes MoverScore in its translation and
  summarization suites; its catalogue lists no blind spot specific to MoverScore.
""",
    requirements=("bert-score==0.3.13", "pot", "torch", "transformers"),
)


@register_scorer
class MoverScore(ModelScorer):
    """Unigram MoverScore of each hypothesis against each reference, averaged over references."""

    name = "moverscore"
    card = _MOVERSCORE_CARD
    model_option = "model_type"
    outputs = ("moverscore",)
    supports_idf = True
    uses_references = "required"
    version = "2"
    default_batch_size = 128
    reference = Reference(
        "moverscore 1.0.3 (moverscore_v2.word_mover_score), its outputs recorded on MiniLM, idf "
        "off and on (its flows are float32)", max_abs_diff=1e-5, rows=11,
        differs="moverscore_v2 takes one idf table per side (its example builds the hypotheses' "
                "from the hypotheses); ours weighs both sides by the references' idf")

    def __init__(self, model_type: str = DEFAULT_MODEL, num_layers: int | None = None,
                 idf: bool = True, idf_references: Sequence[str] | None = None,
                 distance: str = "euclidean", remove_subwords: bool = True,
                 remove_punctuation: bool = True, stop_words: Iterable[str] = (),
                 batch_size: int = 64, device: str | None = None, precision: str | None = None,
                 token_budget: int | None = None) -> None:
        if distance not in DISTANCES:
            raise ValueError(f"distance must be one of {DISTANCES}, got {distance!r}")
        path = resolve_model(model_type)
        layers = checked_layer(model_type, num_layers, layer_count(model_type))
        self._corpus = idf_corpus(bool(idf), idf_references, self.name)
        stops = sorted({str(word).lower() for word in stop_words})
        super().__init__(device, precision, token_budget, model_type=path, num_layers=layers,
                         idf=bool(idf),
                         idf_references=corpus_digest(self._corpus) if self._corpus else None,
                         distance=distance, remove_subwords=bool(remove_subwords),
                         remove_punctuation=bool(remove_punctuation), stop_words=stops)
        self._path = path
        self._stops = frozenset(stops)
        self.batch_size = int(batch_size)
        self.device = device
        self._weights: IdfTable | None = None

    # -- model -----------------------------------------------------------------------------------

    def model_revision(self) -> str:
        return model_revision(self._path)

    def model(self) -> Any:
        """The shared encoder cut after ``num_layers`` layers (loaded on first use)."""
        model, self.device = encoder_on_device(self._path, self.config["num_layers"], self.device,
                                               self.weight_dtype())
        return model

    def tokenizer(self) -> Any:
        tokenizer = load_bertscore_tokenizer(self._path, use_fast=True)
        if self.config["remove_subwords"] and not tokenizer.is_fast:
            raise ValueError(f"model {self._path!r} has no fast tokenizer, which remove_subwords "
                             f"needs to find word starts; pass remove_subwords=False")
        return tokenizer

    def max_length(self) -> int:
        """Longest input the encoder takes (the tokenizer's limit, else the position table's)."""
        return max_input_length(self.tokenizer(), self._path)

    def truncated(self, texts: Sequence[str]) -> Truncation:
        """How many distinct ``texts`` the encoding cuts to :meth:`max_length` tokens."""
        return truncation_of(self.tokenizer(), texts, self.max_length())

    def idf(self) -> IdfTable:
        """Token weights: reference idf, or 1 for every token when idf is off."""
        if self._weights is None:
            self._weights = (idf_table(self._corpus, self.tokenizer(), self.max_length())
                             if self._corpus is not None else IdfTable({}, 1.0))
        return self._weights

    # -- embedding -------------------------------------------------------------------------------

    def token_weight(self, token_id: int, token: str, special: bool, continuation: bool) -> float:
        """A token's mass before normalisation (0 for tokens MoverScore leaves out). A special
        token weighs its idf, as in the authors' code: 0 with idf (every reference has it), 1
        without."""
        if continuation and self.config["remove_subwords"] and not special:
            return 0.0
        if self.config["remove_punctuation"] and is_punctuation(token):
            return 0.0
        if token_core(token).lower() in self._stops:
            return 0.0
        return self.idf()(token_id)

    def clouds(self, texts: Sequence[str]) -> dict[str, Cloud]:
        """The weighted token cloud of each distinct text, encoded in length-sorted batches (on
        the device path: batches by ``token_budget`` tokens, split on running out of memory)."""
        tokenizer = self.tokenizer()
        unique = sorted(set(texts), key=len, reverse=True)
        out: dict[str, Cloud] = {}
        if self.on_device_path() and unique:
            lengths = [len(ids) for ids in tokenizer(unique, truncation=True,
                                                     max_length=self.max_length())["input_ids"]]
            for batch in _device.token_batches(lengths, self.token_budget()):
                for rows, clouds in _device.split_on_oom(
                        lambda rows: self._encode([unique[k] for k in rows], tokenizer), batch,
                        self.name):
                    out.update(zip((unique[k] for k in rows), clouds, strict=True))
            return out
        for start in range(0, len(unique), self.batch_size):
            chunk = unique[start: start + self.batch_size]
            out.update(zip(chunk, self._encode(chunk, tokenizer), strict=True))
        return out

    def _encode(self, texts: list[str], tokenizer: Any) -> list[Cloud]:
        import torch

        model = self.model()
        encoded = tokenizer(texts, padding=True, truncation=True, max_length=self.max_length(),
                            return_tensors="pt", return_special_tokens_mask=True)
        with torch.no_grad(), _device.matmul_precision(self.precision()):
            hidden = model(encoded["input_ids"].to(self.device),
                           attention_mask=encoded["attention_mask"].to(self.device))[0]
        hidden = hidden.cpu().double()
        return [self._cloud(hidden[row], encoded, row, tokenizer) for row in range(len(texts))]

    def _cloud(self, hidden: Any, encoded: Any, row: int, tokenizer: Any) -> Cloud:
        import torch

        ids = encoded["input_ids"][row].tolist()
        tokens = tokenizer.convert_ids_to_tokens(ids)
        words = encoded.word_ids(row)
        attended = encoded["attention_mask"][row].tolist()
        positions, masses = [], []
        for p in (p for p, on in enumerate(attended) if on):
            special = bool(encoded["special_tokens_mask"][row][p]) or words[p] is None
            continuation = p > 0 and words[p] is not None and words[p] == words[p - 1]
            weight = self.token_weight(ids[p], tokens[p], special, continuation)
            if weight > 0:
                positions.append(p)
                masses.append(weight)
        vectors = hidden[positions]
        vectors = vectors / vectors.norm(dim=-1, keepdim=True)
        mass = torch.tensor(masses, dtype=torch.float64)
        return Cloud(vectors, mass / mass.sum() if masses else mass)

    # -- scoring ---------------------------------------------------------------------------------

    def score_batch(self, batch: Sequence[ScoreInput]) -> list[dict[str, float]]:
        texts = [item.hypothesis for item in batch]
        texts += [ref for item in batch for ref in item.references]
        clouds = self.clouds(texts)
        distance = self.config["distance"]
        return [{"moverscore": sum(mover_score(clouds[item.hypothesis], clouds[ref], distance)
                                   for ref in item.references) / len(item.references)}
                for item in batch]
