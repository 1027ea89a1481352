"""Reference-free diversity / degeneration scores: negated rep-n and n-gram entropy.

Both work on the tokens of the hypothesis alone. Tokens are whitespace-separated words by
default (model-free and deterministic); ``tokenizer=<name or folder>`` uses a Hugging Face
tokenizer instead (Welleck et al. count GPT-2 BPE tokens: ``tokenizer="gpt2"`` where the Hub is
reachable, ``"smollm2"`` offline). Text is not lower-cased or otherwise normalised.

* ``rep_ngram`` -- the negation of Welleck et al. (2020)'s *seq-rep-n* of one sequence,
  ``1 - |unique n-grams| / |n-grams|``, i.e. the fraction of the text's n-gram occurrences that
  repeat an earlier one. Negated so that higher is better (``-rep``, in [-1, 0]); a text with
  fewer than n tokens has no n-grams and scores 0 (nothing is repeated). The blind-spots paper
  reports it as "n-rep-4gram" (n = 4, the default). Corpus level is Welleck et al.'s aggregate:
  the mean of the per-sequence values.
* ``ngram_entropy`` -- Zhang et al. (2018)'s Ent-n: the entropy
  ``-sum_g p(g) log p(g)`` of the empirical n-gram distribution, ``p(g) = count(g) / total``
  (natural log by default; ``log_base=2`` for bits). Per row it is the entropy of that text's
  n-grams; at corpus level the counts of all texts are pooled, as Zhang et al. compute it over
  all generated responses. Higher is more diverse; no n-grams gives 0.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from blindspot.models import load_tokenizer, model_revision
from blindspot.scoring.scorer import Reference, ScoreInput, Scorer, register_scorer

WHITESPACE = "whitespace"


def ngram_counts(tokens: Sequence[str], n: int) -> Counter[tuple[str, ...]]:
    """How often each n-gram (a tuple of n consecutive tokens) occurs in ``tokens``."""
    return Counter(tuple(tokens[i: i + n]) for i in range(len(tokens) - n + 1))


def repetition_rate(counts: Counter[tuple[str, ...]]) -> float:
    """seq-rep-n: ``1 - unique / total`` n-grams; 0.0 when there are none."""
    total = sum(counts.values())
    return 1.0 - len(counts) / total if total else 0.0


def entropy(counts: Counter[Any], log_base: float = math.e) -> float:
    """Entropy of the empirical distribution given by ``counts`` (0.0 when empty)."""
    total = sum(counts.values())
    if not total:
        return 0.0
    value = -sum(c / total * math.log(c / total) for c in counts.values())
    return max(0.0, value) / math.log(log_base)  # max(): no -0.0 for a single n-gram


def _check_n(n: Any) -> int:
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"n must be a positive integer, got {n!r}")
    return n


class _NgramScorer(Scorer):
    """Shared by the diversity scorers: options ``n`` and ``tokenizer``, tokenising once per text."""

    uses_references = "none"
    default_batch_size = 1024
    model_option = "tokenizer"
    kind = "lexical"  # whitespace words by default; a tokenizer only when one is named

    def __init__(self, n: int = 4, tokenizer: str = WHITESPACE, **config: Any) -> None:
        super().__init__(n=_check_n(n), tokenizer=str(tokenizer), **config)
        self._split: Callable[[str], list[str]] | None = None

    def tokens(self, text: str) -> list[str]:
        """The tokens that n-grams are built from (whitespace words or subword tokens)."""
        if self._split is None:
            self._split = self._make_split()
        return self._split(text)

    def _make_split(self) -> Callable[[str], list[str]]:
        if self.config["tokenizer"] == WHITESPACE:
            return str.split
        hf = load_tokenizer(self.config["tokenizer"])
        return lambda text: hf.tokenize(text)

    def counts(self, item: ScoreInput) -> Counter[tuple[str, ...]]:
        return ngram_counts(self.tokens(item.hypothesis), self.config["n"])

    def model_revision(self) -> str:
        if self.config["tokenizer"] == WHITESPACE:
            return ""
        return model_revision(self.config["tokenizer"])


@register_scorer
class RepNgram(_NgramScorer):
    """Negated seq-rep-n (Welleck et al., 2020): ``-(1 - unique n-grams / n-grams)``, n = 4."""

    name = "rep_ngram"
    outputs = ("rep_ngram",)
    reference = Reference(
        "Welleck et al. (2020)'s seq-rep-n, written from its formula (no released script runs "
        "here)", differs="negated; tokens are whitespace words where Welleck et al. count "
        "GPT-2 tokens (tokenizer=\"gpt2\")")
    def __init__(self, n: int = 4, tokenizer: str = WHITESPACE) -> None:
        super().__init__(n=n, tokenizer=tokenizer)

    def score_batch(self, batch: Sequence[ScoreInput]) -> list[dict[str, float]]:
        return [{"rep_ngram": -repetition_rate(self.counts(item)) + 0.0} for item in batch]

    def score_corpus(self, inputs: Sequence[ScoreInput]) -> dict[str, float]:
        """Welleck et al.'s aggregate: the mean of the per-sequence values."""
        rows = self.score_batch(inputs)
        return {"rep_ngram": sum(r["rep_ngram"] for r in rows) / len(rows) if rows else 0.0}


@register_scorer
class NgramEntropy(_NgramScorer):
    """Ent-n (Zhang et al., 2018): entropy of the n-gram distribution, n = 4, natural log."""

    name = "ngram_entropy"
    outputs = ("ngram_entropy",)
    reference = Reference(
        "Zhang et al. (2018)'s Ent-n, written from its formula (no released script runs here)",
        differs="tokens are whitespace words; natural log (log_base=2 for bits)")
    def __init__(self, n: int = 4, tokenizer: str = WHITESPACE, log_base: float = math.e) -> None:
        if isinstance(log_base, bool) or not isinstance(log_base, (int, float)) or log_base <= 1:
            raise ValueError(f"log_base must be a number greater than 1, got {log_base!r}")
        super().__init__(n=n, tokenizer=tokenizer, log_base=float(log_base))

    def score_batch(self, batch: Sequence[ScoreInput]) -> list[dict[str, float]]:
        base = self.config["log_base"]
        return [{"ngram_entropy": entropy(self.counts(item), base)} for item in batch]

    def score_corpus(self, inputs: Sequence[ScoreInput]) -> dict[str, float]:
        """Entropy of the n-gram counts pooled over all texts (Zhang et al.'s corpus Ent-n)."""
        pooled: Counter[tuple[str, ...]] = Counter()
        for item in inputs:
            pooled.update(self.counts(item))
        return {"ngram_entropy": entropy(pooled, self.config["log_base"])}
