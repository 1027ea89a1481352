"""Frequent n-gram (blind-spots paper, targeted test, §5.3 and Appendix G).

Language models favour frequent n-grams. The test collects the top-k most frequent n-grams of a
corpus (WikiText in the paper) and builds a synthetic hypothesis of length 256 by concatenating
n-grams sampled uniformly from them; to a reader it is random, yet GPT-PPL and MLM-PPL prefer it to
the gold. The hypothesis does not depend on the gold text; each row gets its own sample.

Levels are ``"<n>-top<k>"``; the paper uses n in {3, 4} and k in {10, 50, 100} on open-ended
generation (it tried summarization and translation and found nothing, §5.3). Other n and k
parse too.

The corpus (``ngram_corpus``) is a list of texts, or a path: a ``.jsonl`` file (one JSON string or
object a line; the text field is ``ngram_field`` if given, else the first of ``text``,
``reference``, ``gold`` that the object has) or any other text file, one text a non-empty line.
N-grams are counted once per instance and n.

Ambiguities resolved:
- Tokenisation: lower-cased words from a regular expression (a word is a run of letters/digits,
  with inner apostrophes, hyphens or periods: "don't", "well-known", "1.5"; every other
  non-space character is a token of its own). No NLTK data is needed.
- "N-grams with punctuation dropped": an n-gram is dropped when one of its tokens has no letter or
  digit. N-grams never cross a text boundary.
- Ties in frequency are broken alphabetically, so the top-k does not depend on corpus order.
- "Length 256" is counted in words: floor(256 / n) n-grams (64 4-grams, 85 3-grams), joined by
  spaces. With fewer than k distinct n-grams in the corpus, all of them are used.
"""

from __future__ import annotations

import json
import os
import random
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from blindspot.perturbations.perturbation import Level, LevelKind, Perturbation, Row, register

TARGET_WORDS = 256
_JSON_FIELDS = ("text", "reference", "gold")
_TOKEN = re.compile(r"[^\W_]+(?:['’.\-][^\W_]+)*|\S")
_LEVEL = re.compile(r"^\s*(\d+)\s*-\s*top\s*(\d+)\s*$", re.IGNORECASE)
_PAPER_LEVELS = tuple(f"{n}-top{k}" for n in (4, 3) for k in (10, 50, 100))

NGram = tuple[str, ...]


def level_numbers(value: Level, max_n: int = 8) -> tuple[int, int]:
    """(n, k) of a level ``"<n>-top<k>"``, or a ValueError saying what a level looks like."""
    match = _LEVEL.match(str(value))
    if not match or not (1 <= int(match[1]) <= max_n and int(match[2]) >= 1):
        raise ValueError(f"level must look like '4-top10' (n-gram size 1..{max_n}, top k >= 1); "
                         f"got {value!r}")
    return int(match[1]), int(match[2])


@dataclass(frozen=True)
class NgramLevel(LevelKind):
    """A level ``"<n>-top<k>"``: sample from the k most frequent n-grams."""

    max_n: int = 8

    def parse(self, value: Level) -> str:
        n, k = level_numbers(value, self.max_n)
        return f"{n}-top{k}"

    def describe(self) -> str:
        return f"'<n>-top<k>' with n in 1..{self.max_n}, e.g. 4-top10"


def words(text: str) -> list[str]:
    """The lower-cased word and punctuation tokens of ``text``."""
    return _TOKEN.findall(text.lower())


def is_punctuation(token: str) -> bool:
    """A token without any letter or digit."""
    return not any(ch.isalnum() for ch in token)


def ngrams(tokens: list[str], n: int) -> Iterator[NGram]:
    """The n-grams of ``tokens`` that contain no punctuation token."""
    clean = [not is_punctuation(t) for t in tokens]
    run = 0  # length of the punctuation-free run ending at i
    for i, ok in enumerate(clean):
        run = run + 1 if ok else 0
        if run >= n:
            yield tuple(tokens[i - n + 1:i + 1])


def count_ngrams(texts: Iterable[str], n: int) -> Counter[NGram]:
    """How often each punctuation-free n-gram occurs in ``texts`` (never across two texts)."""
    counts: Counter[NGram] = Counter()
    for text in texts:
        counts.update(ngrams(words(text), n))
    return counts


def rank_ngrams(counts: Counter[NGram]) -> list[NGram]:
    """N-grams by decreasing frequency, ties alphabetically."""
    return sorted(counts, key=lambda gram: (-counts[gram], gram))


def top_ngrams(texts: Iterable[str], n: int, k: int) -> list[NGram]:
    """The ``k`` most frequent n-grams of ``texts``."""
    return rank_ngrams(count_ngrams(texts, n))[:k]


def sample_hypothesis(top: list[NGram], n: int, rng: random.Random,
                      target_words: int = TARGET_WORDS) -> str | None:
    """floor(target_words / n) n-grams drawn uniformly from ``top``, joined by spaces."""
    if not top:
        return None
    picks = [top[rng.randrange(len(top))] for _ in range(max(1, target_words // n))]
    return " ".join(" ".join(gram) for gram in picks)


def _json_text(line: str, field: str | None) -> str | None:
    """The text of one JSON line: a string, or an object's ``field`` (or first known field)."""
    value = json.loads(line)
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        for key in ((field,) if field else _JSON_FIELDS):
            if isinstance(value.get(key), str):
                return value[key]
    return None


def read_corpus(path: Path, field: str | None = None) -> list[str]:
    """The texts of a corpus file (.jsonl: one object or string a line; else one text a line)."""
    if not path.is_file():
        raise ValueError(f"ngram_corpus file {str(path)!r} not found; give a list of texts or "
                         f"a .txt/.jsonl file")
    with open(path, encoding="utf-8") as fh:
        lines = [line for line in fh if line.strip()]
    if path.suffix.lower() in (".jsonl", ".json"):
        texts = [_json_text(line, field) for line in lines]
        if not any(texts):
            raise ValueError(f"no text found in {str(path)!r}: name the field with ngram_field=...")
        return [t for t in texts if t]
    return [line.strip() for line in lines]


def corpus_texts(corpus: Any, field: str | None = None) -> list[str]:
    """The texts of an ``ngram_corpus`` resource (a path or an iterable of texts)."""
    if isinstance(corpus, (str, os.PathLike)):
        return read_corpus(Path(corpus), field)
    return [t for t in corpus if isinstance(t, str)]


@register
class FrequentNgram(Perturbation):
    name = "frequent_ngram"
    aliases = ("freq-ngram", "frequent n-gram", "high-freq n-gram")
    category = "targeted"
    description = ("Replace the hypothesis by a random sequence of the top-k most frequent corpus "
                   "n-grams, 256 words long.")
    level_kind = NgramLevel()
    levels = {"open_ended": _PAPER_LEVELS}
    requires = ("ngram_corpus",)
    #: §5.3: the random frequent n-gram sequences must score below gold
    verdict_rule = "below_gold"

    def __init__(self, task: str | None = None, **resources: Any) -> None:
        super().__init__(task, **resources)
        self._texts = corpus_texts(self.resources["ngram_corpus"],
                                   self.resources.get("ngram_field"))
        self._ranked: dict[int, list[NGram]] = {}

    def ranked(self, n: int) -> list[NGram]:
        """All n-grams of the corpus by frequency, counted once per instance."""
        if n not in self._ranked:
            self._ranked[n] = rank_ngrams(count_ngrams(self._texts, n))
        return self._ranked[n]

    def perturb(self, row: Row, level: str, rng: random.Random) -> str | None:
        n, k = level_numbers(level)
        return sample_hypothesis(self.ranked(n)[:k], n, rng)
