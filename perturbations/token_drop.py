"""Token drop (blind-spots paper, fluency; Table 16 "Token Drop").

k = ceil(n * p) of the n whitespace tokens (at most n - 1, so a word always remains) are deleted.
The spec deletes "k times a uniformly random token of the current list"; that is the same
distribution as one uniformly random k-subset, which :meth:`random.Random.sample` draws in O(n)
(repeated list deletions are quadratic on very long texts). The whitespace around the remaining
words is kept; nothing is re-capitalised, so the noise ratio is exactly k / n.
"""

from __future__ import annotations

import random

from blindspot.perturbations._fluency_edits import RATIOS_5_TO_50, every_task, words_and_count
from blindspot.perturbations.perturbation import Perturbation, Ratio, Row, register


def drop_words(text: str, p: float, rng: random.Random) -> str | None:
    """``text`` without min(ceil(n*p), n-1) random whitespace tokens (None for a single word)."""
    words, k = words_and_count(text, p, spare=1)
    return words.without(set(rng.sample(range(len(words.words)), k))) if k else None


@register
class TokenDrop(Perturbation):
    name = "token_drop"
    category = "fluency"
    description = "Delete ceil(n*p) random whitespace tokens (always keeping one)."
    level_kind = Ratio(0.0, 1.0)
    whitespace_words = True
    levels = every_task(RATIOS_5_TO_50)

    def perturb(self, row: Row, level: float, rng: random.Random) -> str | None:
        return drop_words(row.text, level, rng)
