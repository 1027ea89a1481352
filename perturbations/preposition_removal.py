"""Preposition removal (blind-spots paper, fluency; Table 16 "Preposition Removal").

Each spaCy token tagged ADP is dropped with probability p (``rng.random() < p``). A dropped token
takes the space before it along, so no double space is created ("went to the" -> "went the"), and
the next word is capitalised only when the dropped preposition opened a sentence ("In the
morning" -> "The morning"); other text is left exactly as it was.
"""

from __future__ import annotations

import random

from blindspot.parsing import Token
from blindspot.perturbations._fluency_edits import every_task, remove_random_tokens
from blindspot.perturbations.perturbation import Perturbation, Ratio, Row, register


def is_preposition(token: Token) -> bool:
    """A preposition or postposition: spaCy's universal POS ADP."""
    return token.pos == "ADP"


@register
class PrepositionRemoval(Perturbation):
    name = "preposition_removal"
    category = "fluency"
    description = "Drop each preposition (spaCy POS ADP) with probability p."
    level_kind = Ratio(0.0, 1.0)
    levels = every_task((0.4, 0.7, 1.0))
    needs_parse = True

    def perturb(self, row: Row, level: float, rng: random.Random) -> str | None:
        return remove_random_tokens(row.text, row.parsed, is_preposition, level, rng)
