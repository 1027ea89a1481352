"""Replacement candidates of the adversarial search (blind-spots paper, Appendix J.1).

For each word of the current hypothesis the search tries replacements from two sources, k of each
(k1 = k2 = 8 in the paper): (a) a masked LM's top-k at the word's position (the word masked, the
rest of the current text as context, as BERT-diverge does), and (b) the k vocabulary words
nearest to it in a model's input word-embedding space (cosine similarity). Trivial replacements
are dropped ("relatively meaningless substitutions, such as punctuation and uppercase/lowercase
replacement"): a candidate equal to the word up to case, up to punctuation, or made of
punctuation only.

Choices, stated:

* Words are whitespace words (as the noise ratio counts them). Punctuation attached to a word
  ("worse.") stays: the candidate replaces the word's core ("worse"), the affixes are kept.
* The whole core is replaced by one mask token, so a word of several subwords gets single-token
  predictions too (BERT-diverge, which samples rather than searches, skips such words).
* Embedding neighbours come from "whole-word" vocabulary entries only: WordPiece continuations
  ("##ing"), byte-level BPE / SentencePiece pieces without the word-start marker, special and
  placeholder tokens, and entries with characters other than letters, digits, ``'`` and ``-``
  are left out. A word that is not one entry is represented by the mean of its subwords.
* An uncased model's lower-case candidate takes the original word's capitalisation
  ("He" -> "they" becomes "They"), so that the case filter does not hide real changes.
"""

from __future__ import annotations

import re
import string
from dataclasses import dataclass
from typing import Any

from blindspot.models import load_encoder
from blindspot.perturbations.bert_diverge import MaskedInput, Predictor
from blindspot.perturbations.text_utils import match_case as fit_case

DEFAULT_K = 8
_PUNCTUATION = set(string.punctuation) | set("“”‘’«»„–—…")
_CORE = re.compile(r"^(?P<pre>\W*)(?P<core>.*?)(?P<post>\W*)$", re.DOTALL)
_WHOLE_WORD = re.compile(r"^[^\W_](?:[\w'’\-]*[^\W_])?$")
_WORD_START = ("Ġ", "▁")


@dataclass(frozen=True)
class WordParts:
    """A whitespace word split into leading punctuation, its core, and trailing punctuation."""

    prefix: str
    core: str
    suffix: str

    def with_core(self, core: str) -> str:
        return f"{self.prefix}{core}{self.suffix}"


def split_word(word: str) -> WordParts:
    """``"(worse)."`` -> ``WordParts("(", "worse", ").")``; all-punctuation words have no core."""
    match = _CORE.match(word)
    assert match is not None  # the pattern matches any string
    return WordParts(match["pre"], match["core"], match["post"])


def _strip_punctuation(text: str) -> str:
    return "".join(ch for ch in text if ch not in _PUNCTUATION)


def is_trivial(original: str, candidate: str) -> bool:
    """Whether replacing ``original`` by ``candidate`` changes nothing a reader would count:
    empty, punctuation only, the same word up to case, or up to punctuation."""
    stripped = _strip_punctuation(candidate).strip()
    if not stripped:
        return True
    return (candidate.lower() == original.lower()
            or stripped.lower() == _strip_punctuation(original).strip().lower())


def match_case(original: str, candidate: str) -> str:
    """``candidate`` in ``original``'s capitalisation (the perturbations' ``match_case``) when
    the candidate is all lower case; a cased candidate ("NATO", "iPhone") is kept as it is."""
    return fit_case(original, candidate) if candidate.islower() else candidate


def keep_candidates(original: str, candidates: list[str], k: int) -> list[str]:
    """The first ``k`` distinct non-trivial candidates, in ``original``'s capitalisation."""
    kept: list[str] = []
    for candidate in candidates:
        cased = match_case(original, candidate.strip())
        if not is_trivial(original, cased) and cased not in kept and " " not in cased:
            kept.append(cased)
        if len(kept) == k:
            break
    return kept


# -- (a) masked LM ------------------------------------------------------------------------------

def masked_input(tokenizer: Any, words: list[str], index: int, max_tokens: int
                 ) -> MaskedInput | None:
    """Model input for ``words`` with the core of word ``index`` replaced by one mask token,
    cropped to ``max_tokens`` around the mask; None when the word has no core."""
    parts = split_word(words[index])
    if not parts.core:
        return None
    before = (" ".join(words[:index]) + (" " if index else "") + parts.prefix)
    after = parts.suffix + (" " if index + 1 < len(words) else "") + " ".join(words[index + 1:])
    left = tokenizer(before, add_special_tokens=False)["input_ids"] if before else []
    right = tokenizer(after, add_special_tokens=False)["input_ids"] if after.strip() else []
    budget = max(1, max_tokens - tokenizer.num_special_tokens_to_add(pair=False) - 1)
    keep_left = min(len(left), max(budget // 2, budget - len(right)))
    left = left[len(left) - keep_left:]
    right = right[:budget - len(left)]
    window = [*left, tokenizer.mask_token_id, *right]
    full = tokenizer.build_inputs_with_special_tokens(window)
    lead = next(i for i in range(len(full) - len(window) + 1) if full[i:i + len(window)] == window)
    return MaskedInput(full, lead + len(left))


class MaskedLMCandidates:
    """A masked LM's top-k words at a position (BERT-diverge's model interface), cached by input."""

    source = "mlm"

    def __init__(self, model: str, k: int = DEFAULT_K) -> None:
        self.model_name = model
        self.predictor = Predictor(model)
        self.k = k
        self._cache: dict[tuple[int, ...], list[str]] = {}

    def __call__(self, words: list[str], index: int) -> list[str]:
        masked = masked_input(self.predictor.tokenizer, words, index, self.predictor.max_tokens)
        if masked is None:
            return []
        key = (*masked.input_ids, -1, masked.mask_index)
        if key not in self._cache:
            # ask for more than k: trivial candidates (the word itself, case variants) are dropped
            options, _ = self.predictor.candidates(masked, 4 * self.k)
            self._cache[key] = options
        return keep_candidates(split_word(words[index]).core, self._cache[key], self.k)


# -- (b) embedding neighbours -------------------------------------------------------------------

def _is_continuation_vocab(tokens: list[str]) -> bool:
    """WordPiece marks continuations with ``##``; BPE/SentencePiece mark word starts instead."""
    return any(t.startswith("##") for t in tokens[:50_000])


def whole_word_entries(tokenizer: Any) -> tuple[list[int], list[str]]:
    """Ids and words of the vocabulary entries that are whole words (see the module docstring)."""
    vocab = tokenizer.get_vocab()
    ordered = sorted(vocab.items(), key=lambda item: item[1])
    tokens = [t for t, _ in ordered]
    continuation = _is_continuation_vocab(tokens)
    special = set(tokenizer.all_special_tokens)
    ids, words, seen = [], [], set()
    for token, token_id in ordered:
        if token in special or (continuation and token.startswith("##")):
            continue
        if not continuation:
            if not token.startswith(_WORD_START):
                continue
            token = token[1:]
        if _WHOLE_WORD.match(token) and token not in seen:
            seen.add(token)
            ids.append(token_id)
            words.append(token)
    return ids, words


class EmbeddingNeighbours:
    """The k whole words nearest to a word in a model's input embedding space (cosine)."""

    source = "embedding"

    def __init__(self, model: str = "minilm", k: int = DEFAULT_K) -> None:
        import torch


        self.model_name = model
        self.k = k
        self.tokenizer, encoder = load_encoder(model)
        table = encoder.get_input_embeddings().weight.detach().float()
        ids, self.words = whole_word_entries(self.tokenizer)
        self.index = {w: i for i, w in enumerate(self.words)}
        self._table = table
        self._unit = torch.nn.functional.normalize(table[ids], dim=1)
        self.lowercase = bool(getattr(self.tokenizer, "do_lower_case", False)) or all(
            w == w.lower() for w in self.words[:2000])
        self._cache: dict[str, list[str]] = {}

    def vector(self, word: str) -> Any:
        """The embedding of ``word``: its own entry, else the mean of its subwords' entries."""
        position = self.index.get(word)
        if position is not None:
            return self._unit[position]
        ids = self.tokenizer(word, add_special_tokens=False)["input_ids"]
        if not ids:
            return None
        return self._table[ids].mean(dim=0)

    def neighbours(self, core: str) -> list[str]:
        """Nearest whole words to ``core`` by cosine, most similar first."""
        import torch

        key = core.lower() if self.lowercase else core
        if key not in self._cache:
            vector = self.vector(key)
            if vector is None:
                self._cache[key] = []
            else:
                similarity = self._unit @ torch.nn.functional.normalize(vector, dim=0)
                top = torch.topk(similarity, min(len(self.words), 4 * self.k + 1)).indices
                self._cache[key] = [self.words[i] for i in top.tolist()]
        return self._cache[key]

    def __call__(self, words: list[str], index: int) -> list[str]:
        core = split_word(words[index]).core
        if not core:
            return []
        return keep_candidates(core, self.neighbours(core), self.k)


def replacements(sources: list[Any], words: list[str], index: int) -> list[tuple[str, str]]:
    """``(new word, source names)`` for word ``index``: the union of every source's candidates,
    in source order, affixes kept, trivial ones dropped; a candidate several sources give names
    them all (``mlm+embedding``)."""
    parts = split_word(words[index])
    found: dict[str, list[str]] = {}
    for source in sources:
        for core in source(words, index):
            if is_trivial(parts.core, core):
                continue
            found.setdefault(parts.with_core(core), []).append(source.source)
    return [(word, "+".join(names)) for word, names in found.items()]
