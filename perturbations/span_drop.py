"""Span drop (Sai et al. 2021: "dropping out words or phrases" (MT adequacy), "drop phrases"
(summarization coverage, data-to-text coverage), Table 5).

One contiguous span of ceil(p * n) whitespace words (n = word count, p = 0.2 by default, at most
n - 1 so a word remains) starting at a uniformly random position is deleted. The spec's "a
contiguous 20 % span"; the paper's examples drop a phrase ("I was being followed" -> "I
followed").
"""

from __future__ import annotations

import random

from blindspot.perturbations._checklist import CATEGORY, PAPER, all_tasks
from blindspot.perturbations._fluency_edits import words_and_count
from blindspot.perturbations.base import Perturbation, Ratio, Row, register


def drop_span(text: str, p: float, rng: random.Random) -> str | None:
    """``text`` without one random contiguous span of ceil(p * n) words."""
    words = text.split()
    _, k = words_and_count(text, p, spare=1)
    if k <= 0:
        return None
    start = rng.randrange(len(words) - k + 1)
    return " ".join(words[:start] + words[start + k:])


@register
class SpanDrop(Perturbation):
    name = "span_drop"
    aliases = ("drop phrases", "dropping out words or phrases")
    category = CATEGORY
    paper = PAPER
    description = "Delete one random contiguous span of p * n words (p = 0.2)."
    level_kind = Ratio(0.0, 1.0)
    levels = all_tasks((0.2,))

    def perturb(self, row: Row, level: float, rng: random.Random) -> str | None:
        return drop_span(row.text, level, rng)
