"""Repeated token (blind-spots paper, fluency; Table 16 "Repeated Token").

k = ceil(n * p) whitespace tokens are each repeated once in place: "She went to the office" ->
"She went to to the office". The spec says "k times duplicate a uniformly random token"; the
paper says "a random portion of tokens are repeated once", so the k tokens are k distinct
positions (a uniformly random k-subset, at most n) and no token is tripled. The copy is separated
from its original by one space; the noise ratio is exactly k / n.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from blindspot.perturbations._fluency_edits import RATIOS_5_TO_50, Words, every_task, words_and_count
from blindspot.perturbations.perturbation import Perturbation, Ratio, Row, register


def doubled(words: Words, chosen: set[int]) -> Words:
    """``words`` with each word at ``chosen`` written twice, the copy followed by one space."""
    at = sorted(chosen)
    new_words = _with_copies(words.words, at, words.words.__getitem__)
    if words.spaces is None:
        return Words(new_words)
    return Words(new_words, _with_copies(words.spaces, at, lambda _: " "), words.lead)


def _with_copies(items: list[str], at: list[int], copy: Callable[[int], str]) -> list[str]:
    """``items`` with ``copy(i)`` inserted before item i for each i of ``at`` (ascending)."""
    out: list[str] = []
    done = 0
    for i in at:
        out.extend(items[done:i])
        out.append(copy(i))
        done = i
    out.extend(items[done:])
    return out


def repeat_words(text: str, p: float, rng: random.Random) -> str | None:
    """``text`` with min(ceil(n*p), n) random distinct whitespace tokens doubled."""
    words, k = words_and_count(text, p, spare=0)
    return doubled(words, set(rng.sample(range(len(words.words)), k))).text() if k else None


@register
class RepeatedToken(Perturbation):
    name = "repeated_token"
    category = "fluency"
    description = "Repeat ceil(n*p) random whitespace tokens once, in place."
    level_kind = Ratio(0.0, 1.0)
    whitespace_words = True
    levels = every_task(RATIOS_5_TO_50)

    def perturb(self, row: Row, level: float, rng: random.Random) -> str | None:
        return repeat_words(row.text, level, rng)
