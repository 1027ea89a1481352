"""Local swap (blind-spots paper, fluency; Table 16 "Local Swap").

k = min(ceil(n * p), n - 1) times, a whitespace token is swapped with the token to its right;
the k left positions are distinct (a uniformly random k-subset of the n - 1 adjacent pairs,
applied in the random order drawn), so pairs may overlap and a word can travel two places. Only
the words move: the whitespace between them stays where it was, and nothing is re-capitalised
(the paper's example: "She to went the office"). A swap is one edit: the noise ratio is halved.
"""

from __future__ import annotations

import random

from blindspot.perturbations._fluency_edits import every_task, words_and_count
from blindspot.perturbations.base import Perturbation, Ratio, Row, register


def swap_neighbours(text: str, p: float, rng: random.Random) -> str | None:
    """``text`` after min(ceil(n*p), n-1) swaps of adjacent whitespace tokens at distinct places."""
    words, k = words_and_count(text, p, spare=1)
    if not k:
        return None
    seq = words.words
    for i in rng.sample(range(len(seq) - 1), k):
        seq[i], seq[i + 1] = seq[i + 1], seq[i]
    return words.text()


@register
class LocalSwap(Perturbation):
    name = "local_swap"
    category = "fluency"
    description = "Swap ceil(n*p) random whitespace tokens with their right neighbour."
    level_kind = Ratio(0.0, 1.0)
    whitespace_words = True
    levels = every_task((0.05, 0.15, 0.3, 0.6))
    swap = True

    def perturb(self, row: Row, level: float, rng: random.Random) -> str | None:
        return swap_neighbours(row.text, level, rng)
