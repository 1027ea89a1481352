"""Omission (MENLI adequacy attack).

MENLI: "We use the framework of Sai et al. (2021) to randomly drop ∼1%–20% words in the
sentence"; Sai et al.'s drop template removes a contiguous span (20 % of the words, spec C), and
so does the shipped MENLI WMT20 set ("Since their articles appeared, ..." -> "Appeared, ...";
"many gold bugs were" -> "were"). Here a contiguous span of k = ceil(n * p) of the n whitespace
words (at most n - 1) starting at a random word is removed; the level p is the share (paper:
0.2, so 1 word of a 5-word sentence, 4 of a 16-word one). The words around the gap keep their
spelling and spacing (no re-capitalisation), so the noise ratio is exactly k / n.
"""

from __future__ import annotations

import random

from blindspot.perturbations._fluency_edits import every_task, words_and_count
from blindspot.perturbations._menli import MenliAttack
from blindspot.perturbations.perturbation import Ratio, Row, register


def drop_span(text: str, p: float, rng: random.Random) -> str | None:
    """``text`` without a random contiguous run of min(ceil(n*p), n-1) whitespace words."""
    words, k = words_and_count(text, p, spare=1)
    if not k:
        return None
    start = rng.randrange(len(words.words) - k + 1)
    return words.without(set(range(start, start + k)))


@register
class Omission(MenliAttack):
    name = "omission"
    menli_error = "drop"
    aliases = ("drop", "drop phrase", "menli drop", "omission error")
    description = "Delete a random contiguous span of ceil(n*p) words (MENLI: p = 0.2)."
    level_kind = Ratio(0.0, 1.0)
    whitespace_words = True
    levels = every_task((0.2,))

    def perturb(self, row: Row, level: float, rng: random.Random) -> str | None:
        return drop_span(row.text, level, rng)
