"""Truncation (blind-spots paper, fluency; also a loss of information).

Drops the last floor(n * p) whitespace tokens, keeping at least one, and appends "." when the
text no longer ends with one. Deterministic: it ignores the seed. A text where no token goes (a
single word, or floor(n * p) = 0 for a short text at a low level) is not truncated: it comes
back unchanged, not applied, rather than with a period appended and a noise ratio above 0.
"""

from __future__ import annotations

import math
import random

from blindspot.perturbations.perturbation import Perturbation, Ratio, Row, register

_FLUENCY_LEVELS = (0.1, 0.2, 0.3, 0.4, 0.5)


def truncate(text: str, p: float) -> str | None:
    """``text`` without its last floor(n*p) whitespace tokens, ending with a period; None when
    no token can go (floor(n*p) = 0, or a single word): a period alone is not a truncation."""
    words = text.split()
    keep = max(1, len(words) - math.floor(len(words) * p))
    if keep == len(words):
        return None
    out = " ".join(words[:keep])
    return out if out.endswith(".") else out + "."


@register
class Truncation(Perturbation):
    name = "truncation"
    category = "fluency"
    description = "Remove the last p of the whitespace tokens; end with a period."
    level_kind = Ratio(0.0, 1.0)
    whitespace_words = True
    levels = {task: _FLUENCY_LEVELS for task in
              ("summarization", "translation", "translation_paragraph", "open_ended")}
    deterministic = True

    def perturb(self, row: Row, level: float, rng: random.Random) -> str | None:
        return truncate(row.text, level)
