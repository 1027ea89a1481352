"""Jumbling word order (MENLI fluency attack; Sai et al. 2021 "jumbling word order").

MENLI: "Randomly shuffle the word order in a sentence". The whitespace words of each sentence
(a sentence ends at a word ending in . ! ?) are shuffled in place, so a paragraph stays a
sequence of jumbled sentences; the words keep their spelling and case (the shipped MENLI set also
lower-cases and re-capitalises, which this attack does not: casing is not the error under test).
A shuffle that gives back the same order is drawn again (a few times), and a text whose words
are all equal cannot be jumbled. The level is "-". Shuffling is a swap-type edit: the noise ratio
is halved (spec).
"""

from __future__ import annotations

import random

from blindspot.perturbations._fluency_edits import Words
from blindspot.perturbations._menli import MenliAttack
from blindspot.perturbations.perturbation import Row, register

_DRAWS = 10


def sentence_word_ranges(words: Words) -> list[tuple[int, int]]:
    """[start, end) ranges of the whitespace words of each sentence."""
    starts = [i for i in range(len(words.words)) if words.starts_sentence(i)]
    return list(zip(starts, starts[1:] + [len(words.words)], strict=True))


def jumble_words(text: str, rng: random.Random) -> str | None:
    """``text`` with the words of each sentence shuffled; None when no order can change."""
    words = Words.of(text)
    original = list(words.words)
    if len(set(original)) < 2:
        return None
    for _ in range(_DRAWS):
        for start, end in sentence_word_ranges(words):
            part = original[start:end]
            rng.shuffle(part)
            words.words[start:end] = part
        if words.words != original:
            return words.text()
    return None


@register
class Jumble(MenliAttack):
    name = "jumble"
    menli_error = "jumble"
    aliases = ("jumbling word order", "jumbled word order", "shuffle words", "word shuffle")
    description = "Shuffle the words of every sentence."
    whitespace_words = True
    swap = True

    def perturb(self, row: Row, level: str, rng: random.Random) -> str | None:
        return jumble_words(row.text, rng)
