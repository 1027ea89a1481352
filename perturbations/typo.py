"""Spelling error / typo (MENLI fluency attack; Sai et al. 2021 "spelling errors").

MENLI: "Add a typo to a word in a sentence". The typo is CheckList's kind (``Perturb.add_typos``:
a character swapped with its neighbour), kept inside one word: two adjacent, different letters
of a whitespace word trade places ("gold" -> "godl"). The shipped MENLI WMT20 set swaps any two
neighbouring characters, spaces included ("over the" -> "overt he"); swapping within a word keeps
a typo a misspelt word, as the paper describes it. The level is the number of typos, each in a
different word (paper: 1); a text with fewer typo-able words gets one per such word. Each typo
changes one word, so the noise ratio is typos / words.
"""

from __future__ import annotations

import random

from blindspot.perturbations._fluency_edits import Words, every_task
from blindspot.perturbations._menli import MenliAttack
from blindspot.perturbations.perturbation import Count, Row, register


def typo_positions(word: str) -> list[int]:
    """Positions i where letters word[i] and word[i + 1] differ and can be swapped."""
    return [i for i in range(len(word) - 1)
            if word[i].isalpha() and word[i + 1].isalpha() and word[i] != word[i + 1]]


def swap_letters(word: str, i: int) -> str:
    """``word`` with characters i and i + 1 swapped."""
    return word[:i] + word[i + 1] + word[i] + word[i + 2:]


def add_typos(text: str, k: int, rng: random.Random) -> str | None:
    """``text`` with a letter swap in each of min(k, typo-able words) random words; None if none."""
    words = Words.of(text)
    candidates = [i for i, w in enumerate(words.words) if typo_positions(w)]
    if not candidates:
        return None
    for i in sorted(rng.sample(candidates, min(k, len(candidates)))):
        word = words.words[i]
        words.words[i] = swap_letters(word, rng.choice(typo_positions(word)))
    return words.text()


@register
class Typo(MenliAttack):
    name = "typo"
    menli_error = "typo"
    aliases = ("spelling error", "spelling errors", "add typos", "menli typo")
    description = "Swap two adjacent letters inside K random words (MENLI: one typo)."
    level_kind = Count(1)
    whitespace_words = True
    levels = every_task((1,))

    def perturb(self, row: Row, level: int, rng: random.Random) -> str | None:
        return add_typos(row.text, level, rng)
