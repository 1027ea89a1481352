"""Local swap (blind-spots paper, fluency; Table 16 "Local Swap").

k = min(ceil(n * p), n - 1) times, a whitespace token is swapped with the token to its right. As
in the release (``flu-randomlocalswap`` of github.com/cloudygoose/blindspot_nlg), each of the k
left positions is drawn uniformly from the n - 1 adjacent pairs, again and again until the draw
is not a swap already made: the same position holding the same two words, in the same order.
So a position may be swapped again once its words changed, and a second swap of a pair that was
just swapped (its words now in the other order) undoes it; overlapping swaps move a word further.

Release over spec: the spec reads "ceil(n*p) swaps at distinct places", which touches more words
than the release does (noise ratio about 0.13/0.20/0.28 at p = .15/.3/.6 on CNN/DM, where the
release has 0.12/0.17/0.22); the release's draw is followed.

Only the words move: the whitespace between them stays where it was, and nothing is
re-capitalised (the paper's example: "She to went the office"). A swap is one edit: the noise
ratio is halved.
"""

from __future__ import annotations

import random

from blindspot.perturbations._fluency_edits import every_task, words_and_count
from blindspot.perturbations.perturbation import Perturbation, Ratio, Row, register


def swap_neighbours(text: str, p: float, rng: random.Random) -> str | None:
    """``text`` after min(ceil(n*p), n-1) swaps of adjacent whitespace tokens, each drawn at
    random among the (position, left word, right word) not swapped before."""
    words, k = words_and_count(text, p, spare=1)
    if not k:
        return None
    seq = words.words
    made: set[tuple[int, str, str]] = set()
    for _ in range(k):
        # a position never swapped is always new, and k <= n - 1: the draw ends
        i = rng.randrange(len(seq) - 1)
        while (i, seq[i], seq[i + 1]) in made:
            i = rng.randrange(len(seq) - 1)
        made.add((i, seq[i], seq[i + 1]))
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
