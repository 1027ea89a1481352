"""BERT-diverge (blind-spots paper, consistency test, Table 16 and Appendix I).

A random portion of the hypothesis' words is replaced one by one by a masked language model
(RoBERTa-large in the paper): at each step one word is masked, the model predicts it, and a word
is sampled from its top-10 predictions (softmax over those 10 logits). The model never sees the
source, so the text gradually drifts away from its meaning while staying fluent; a robust metric
scores it lower. Levels r = .1 .2 .3 .4 (summarization, WMT) and .15 .3 .45 .6 (TED-MT); the
paper does not run it on open-ended generation (WikiText).

Algorithm, per row: ceil(r * n) distinct whitespace-word positions (n = word count) in random
order; at each position, if the *current* word is a single subword of the model's tokenizer, that
token is replaced by the mask token, the text (as changed by the earlier steps) goes through the
model, and the word is replaced by a sample from the top-10; a word of several subwords (or one
with punctuation attached, "office.") is skipped, so at most ceil(r * n) words change. The sample
may be the original word.

Ambiguities resolved:
- "r * len" is rounded up (at least one word is tried) and counted in whitespace words.
- The top-10 leaves out special tokens and tokens that cannot stand as a word on their own
  (WordPiece continuations "##...", tokens that decode to nothing or to several words); the new
  word is the decoded token without surrounding spaces. The whitespace between words is kept.
- Long texts: the model sees the words around the masked one, cropped to its maximum length
  (512 tokens for RoBERTa and BERT) around the mask; shorter texts are seen whole.
- Randomness comes only from the row's stream (positions and samples); the model runs in eval
  mode under ``torch.no_grad`` one row at a time, so a row's output does not depend on the batch.
"""

from __future__ import annotations

import math
import os
import random
import re
from dataclasses import dataclass
from typing import Any, ClassVar

from blindspot.forking import single_thread_after_fork
from blindspot.models import load_masked_lm
from blindspot.perturbations.perturbation import LevelKind, Perturbation, Ratio, Row, register

TOP_K = 10
DEFAULT_MAX_TOKENS = 512
_WORD = re.compile(r"\S+")
#: unused or placeholder vocabulary entries a randomly initialised model may still predict
_PLACEHOLDER = re.compile(r"\[[^\[\]\s]+\]|madeupword\d+")
#: attribute names of the position-wise prediction head of common masked LMs
_HEADS = ("cls", "lm_head")
#: processes where torch's thread pool is safe to use: the one that imported this module
_SUM_WMT_LEVELS = (0.1, 0.2, 0.3, 0.4)
_TED_LEVELS = (0.15, 0.3, 0.45, 0.6)


@dataclass
class MaskedInput:
    """Model input ids with one token masked, and where the mask is."""

    input_ids: list[int]
    mask_index: int


def word_spans(text: str) -> list[tuple[int, int]]:
    """Character spans of the whitespace-separated words of ``text``."""
    return [m.span() for m in _WORD.finditer(text)]


def replace_words(text: str, spans: list[tuple[int, int]], new_words: list[str]) -> str:
    """``text`` with the word at each span replaced by ``new_words``, whitespace kept."""
    pieces, last = [], 0
    for (start, end), word in zip(spans, new_words, strict=True):
        pieces += [text[last:start], word]
        last = end
    pieces.append(text[last:])
    return "".join(pieces)


def context_of(words: list[str], index: int, radius: int) -> tuple[str, tuple[int, int]]:
    """The words around ``index`` joined by spaces, and the span of word ``index`` in it."""
    low = max(0, index - radius)
    before = " ".join(words[low:index])
    start = len(before) + (1 if before else 0)
    context = " ".join(words[low:index + radius + 1])
    return context, (start, start + len(words[index]))


def mask_single_subword(tokenizer: Any, context: str, span: tuple[int, int],
                        max_tokens: int) -> MaskedInput | None:
    """Model input for ``context`` with the word at ``span`` masked, if it is one subword."""
    encoded = tokenizer(context, add_special_tokens=False, return_offsets_mapping=True,
                        verbose=False)
    ids, offsets = encoded["input_ids"], encoded["offset_mapping"]
    inside = [i for i, (s, e) in enumerate(offsets) if e > s and s < span[1] and e > span[0]]
    if len(inside) != 1:
        return None
    position = inside[0]
    budget = max(1, max_tokens - tokenizer.num_special_tokens_to_add(pair=False))
    low = max(0, min(position - budget // 2, len(ids) - budget))
    window = ids[low:low + budget]
    window[position - low] = tokenizer.mask_token_id
    full = tokenizer.build_inputs_with_special_tokens(window)
    lead = next(i for i in range(len(full) - len(window) + 1) if full[i:i + len(window)] == window)
    return MaskedInput(full, lead + position - low)


def standalone_word(tokenizer: Any, token_id: int, banned: set[int],
                    size: int | None = None) -> str | None:
    """The word token ``token_id`` stands for, or None if it cannot replace a whole word.

    ``size`` is ``len(tokenizer)`` (slow to compute for fast tokenizers, so callers pass it).
    """
    if token_id in banned or token_id >= (len(tokenizer) if size is None else size):
        return None
    if tokenizer.convert_ids_to_tokens(token_id).startswith("##"):
        return None
    word = tokenizer.decode([token_id]).strip()
    if not word or any(ch.isspace() for ch in word) or _PLACEHOLDER.fullmatch(word):
        return None
    return word


def sample_index(probabilities: list[float], rng: random.Random) -> int:
    """An index drawn with the given probabilities, from ``rng`` alone."""
    threshold, total = rng.random(), 0.0
    for i, p in enumerate(probabilities):
        total += p
        if threshold < total:
            return i
    return len(probabilities) - 1


def prediction_head(model: Any) -> Any:
    """The masked LM's position-wise head (``cls`` of BERT, ``lm_head`` of RoBERTa), if known.

    The head maps each position on its own, so running it on the masked position only gives that
    position's logits without the vocabulary projection of every other token (most of the cost).
    Other architectures (None) run whole.
    """
    if getattr(model, "base_model", model) is model:
        return None
    for attribute in _HEADS:
        head = getattr(model, attribute, None)
        if head is not None:
            return head
    return None


class Predictor:
    """A masked LM's top-k word candidates for a masked position (one input at a time)."""

    def __init__(self, name: str) -> None:
        self.tokenizer, self.model = load_masked_lm(name)
        if self.tokenizer.mask_token_id is None:
            raise ValueError(f"model {name!r} has no mask token; BERT-diverge needs a masked LM")
        if not getattr(self.tokenizer, "is_fast", False):
            raise ValueError(f"model {name!r} has no fast tokenizer (tokenizer.json); BERT-diverge "
                             f"needs its character offsets")
        limits = [self.tokenizer.model_max_length,
                  getattr(self.model.config, "max_position_embeddings", None) or DEFAULT_MAX_TOKENS]
        self.max_tokens = int(min(limits + [10**6]))
        self.banned = set(self.tokenizer.all_special_ids)
        self.size = len(self.tokenizer)
        self.head = prediction_head(self.model)
        self._words: dict[int, str | None] = {}

    def word(self, token_id: int) -> str | None:
        if token_id not in self._words:
            self._words[token_id] = standalone_word(self.tokenizer, token_id, self.banned,
                                                    self.size)
        return self._words[token_id]

    def logits(self, masked: MaskedInput) -> Any:
        """The model's logits over the vocabulary at the masked position."""
        import torch

        single_thread_after_fork()
        with torch.no_grad():
            ids = torch.tensor([masked.input_ids], device=self.model.device)
            if self.head is None:
                return self.model(input_ids=ids).logits[0, masked.mask_index].float().cpu()
            hidden = self.model.base_model(input_ids=ids)[0]
            at = masked.mask_index
            return self.head(hidden[:, at:at + 1])[0, 0].float().cpu()

    def best_words(self, logits: Any, k: int) -> list[int]:
        """Ids of the ``k`` highest logits that stand for a word (a short list is tried first)."""
        import torch

        for size in (min(len(logits), 8 * k), len(logits)):
            ranked = torch.topk(logits, size).indices.tolist()
            chosen = [i for i in ranked if self.word(i) is not None][:k]
            if len(chosen) == k or size == len(logits):
                return chosen
        return []

    def candidates(self, masked: MaskedInput, k: int = TOP_K) -> tuple[list[str], list[float]]:
        """The top-``k`` standalone words at the mask and their softmax over those ``k`` logits."""
        import torch

        logits = self.logits(masked)
        chosen = self.best_words(logits, k)
        probabilities = torch.softmax(logits[chosen].double(), dim=0).tolist()
        return [self.word(i) for i in chosen], probabilities  # type: ignore[misc]


def diverge(text: str, ratio: float, predictor: Predictor, rng: random.Random) -> str | None:
    """``text`` with ceil(ratio * n) word positions re-sampled one by one from the masked LM."""
    spans = word_spans(text)
    words = [text[s:e] for s, e in spans]
    if not words:
        return None
    steps = min(len(words), math.ceil(ratio * len(words)))
    for index in rng.sample(range(len(words)), steps):
        context, span = context_of(words, index, predictor.max_tokens)
        masked = mask_single_subword(predictor.tokenizer, context, span, predictor.max_tokens)
        if masked is None:
            continue
        options, probabilities = predictor.candidates(masked)
        if options:
            words[index] = options[sample_index(probabilities, rng)]
    return replace_words(text, spans, words)


@register
class BertDiverge(Perturbation):
    name = "bert_diverge"
    category = "consistency"
    description = ("Re-sample a portion r of the words one by one from a masked LM's top-10, so "
                   "the meaning drifts while the text stays fluent.")
    level_kind: ClassVar[LevelKind] = Ratio(0.0, 1.0)
    whitespace_words = True
    levels = {"summarization": _SUM_WMT_LEVELS, "translation": _SUM_WMT_LEVELS,
              "translation_paragraph": _TED_LEVELS}
    requires = ("mlm",)

    def __init__(self, task: str | None = None, **resources: Any) -> None:
        super().__init__(task, **resources)
        self._mlm = os.fspath(self.resources["mlm"])  # a Hub id or a folder
        self._predictor: Predictor | None = Predictor(self._mlm)

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_predictor"] = None  # the model is loaded again (once) in each process
        return state

    @property
    def predictor(self) -> Predictor:
        if self._predictor is None:
            self._predictor = Predictor(self._mlm)
        return self._predictor

    def perturb(self, row: Row, level: float, rng: random.Random) -> str | None:
        return diverge(row.text, level, self.predictor, rng)
