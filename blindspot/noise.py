"""Noise ratio (blind-spots paper, Eq. 1).

Per row: word-level Levenshtein distance between the whitespace-split noised and gold texts,
divided by the gold's word count; swap-type perturbations count a swap as one edit instead of
two, so their ratio is halved.
"""

from __future__ import annotations

from rapidfuzz.distance import Levenshtein


def word_distance(gold: str | None, noised: str | None) -> int:
    """Word-level Levenshtein distance between the whitespace words of ``gold`` and ``noised``."""
    return Levenshtein.distance((gold or "").split(), (noised or "").split())


def noise_ratio(gold: str | None, noised: str | None, swap: bool = False) -> float:
    """Word-level Levenshtein(noised, gold) / len(gold words); halved when ``swap``."""
    gold_words = (gold or "").split()
    if not gold_words:
        return 0.0
    ratio = word_distance(gold, noised) / len(gold_words)
    return ratio / 2 if swap else ratio
