"""Punctuation removal (Sai et al. 2021, fluency template "missing punctuation", Table 5).

Every spaCy PUNCT token that is one of . , ! ? ; : is dropped with the whitespace before it, so
"Could you tell me , now ?" becomes "Could you tell me now". The misplaced-punctuation half of
the template is the blind-spots suite's ``noised_punctuation``.
"""

from __future__ import annotations

import random

from blindspot.perturbations._checklist import CATEGORY, NO_LEVEL, PAPER, drop_tokens
from blindspot.perturbations.perturbation import NoLevel, Perturbation, Row, register

MARKS = frozenset(".,!?;:")


@register
class PunctuationRemoval(Perturbation):
    name = "punctuation_removal"
    aliases = ("missing punctuation",)
    category = CATEGORY
    paper = PAPER
    description = "Drop every . , ! ? ; : punctuation token."
    level_kind = NoLevel()
    levels = NO_LEVEL
    deterministic = True
    needs_parse = True

    def perturb(self, row: Row, level: str, rng: random.Random) -> str | None:
        if row.parsed is None:
            return None
        return drop_tokens(row.parsed, lambda t: t.pos == "PUNCT" and t.text in MARKS)
