"""Word swap (examination paper, "Word Swap"; category ``examination``).

"Random word pairs are chosen and swapped. The higher the intensity, the more random the sequence
of tokens becomes, such that the original sequence should not be recognizable anymore."

An intensity p in (0, 1] (the paper's four steps are .25 .5 .75 1) works on the m candidate words:
the whitespace words that hold a letter or digit, each distinct word (lower-cased) counted once at
its first occurrence, as the paper's released code does so that swapping "the" with "the" never wastes a
pair. k = floor(p * m) of them, rounded up to an even number (at most the largest even number
<= m), are drawn in random order and paired; each pair is swapped. At p = 1 every candidate (all
but one when m is odd) moves: the paper's top level ("a random permutation"), built from pairs as
in the paper's released code. Rows with fewer
than three candidates (the paper's minimum), or where k is 0, come back not applied.

Differences from the paper, on purpose: words are whitespace words, the unit of the noise ratio
and of ``local_swap`` (the paper swapped spaCy tokens and left punctuation tokens in place, so a
comma attached to a word moves with it here); the whitespace between words stays where it was; the
row is the unit (the paper impaired each sentence of a CNN/DailyMail text separately; on
sentence-level data such as WMT the two agree). Unlike ``local_swap`` (adjacent pairs) the pairs
are anywhere in the text. A swap is one edit: the noise ratio is halved.
"""

from __future__ import annotations

import random
import re

from blindspot.perturbations._examination import ExaminationTest
from blindspot.perturbations._fluency_edits import Words, floor_count_of
from blindspot.perturbations.perturbation import Row, register

_WORDLIKE = re.compile(r"\w")
_MIN_CANDIDATES = 3


def swap_candidates(words: list[str]) -> list[int]:
    """Positions of the first occurrence of each distinct (lower-cased) word with a letter/digit."""
    seen: set[str] = set()
    out = []
    for i, word in enumerate(words):
        key = word.lower()
        if _WORDLIKE.search(word) and key not in seen:
            seen.add(key)
            out.append(i)
    return out


def pair_count(m: int, p: float) -> int:
    """How many words to swap: floor(p*m) rounded up to even, at most the largest even <= m."""
    k = floor_count_of(m, p)
    k += k % 2
    return min(k, m - m % 2)


def swap_random_pairs(text: str, p: float, rng: random.Random) -> str | None:
    """``text`` with floor(p*m) (even) candidate words swapped in random pairs; None if none."""
    words = Words.of(text)
    candidates = swap_candidates(words.words)
    if len(candidates) < _MIN_CANDIDATES:
        return None
    k = pair_count(len(candidates), p)
    if not k:
        return None
    chosen = rng.sample(candidates, k)
    seq = words.words
    for a, b in zip(chosen[::2], chosen[1::2], strict=True):
        seq[a], seq[b] = seq[b], seq[a]
    return words.text()


@register
class WordSwap(ExaminationTest):
    name = "word_swap"
    aliases = ("word-swap", "random word swap", "swapped words")
    description = "Swap floor(p*m) random distinct words in random pairs (p = 1: a permutation)."
    whitespace_words = True
    swap = True

    def perturb(self, row: Row, level: float, rng: random.Random) -> str | None:
        return swap_random_pairs(row.text, level, rng)
