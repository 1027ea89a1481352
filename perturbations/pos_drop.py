"""POS drop (examination paper, "POS-Drop"; category ``examination``).

"Words with different part-of-speech (POS) tags were dropped ... some part-of-speech units like
determiners have less influence over the semantic integrity than the removal of verbs, nouns, or
adjectives."

The level is the POS tag: every spaCy token whose universal POS is exactly that tag (DET, NOUN,
VERB or ADJ, the paper's four; NOUN does not include PROPN, VERB not AUX) is removed, through the
fluency tests' :func:`~blindspot.perturbations._fluency_edits.remove_tokens`: a removed token takes
its whitespace along and the next word is capitalised when a capitalised sentence start went
("The cat sat on the mat." at DET -> "Cat sat on mat."). It is ``preposition_removal`` at p = 1
with another tag. Deterministic; a row without such a token (or with nothing left) comes back
not applied. The paper's code also lost the character after each dropped word (a comma); that
slip is not reproduced.
"""

from __future__ import annotations

import random

from blindspot.perturbations._examination import ExaminationTest
from blindspot.perturbations._fluency_edits import every_task, parse_of, remove_tokens
from blindspot.perturbations.perturbation import Choice, Row, register

#: the paper's tags; DET is the one expected to hurt least
POS_TAGS = ("DET", "NOUN", "VERB", "ADJ")


def drop_pos(row: Row, tag: str) -> str | None:
    """The row without its tokens tagged ``tag``; None when it has none (or none would be left)."""
    parsed = parse_of(row.text, row.parsed)
    if parsed is None:
        return None
    drop = {t.i for t in parsed.tokens if t.pos == tag}
    return remove_tokens(parsed, drop) if drop else None


@register
class PosDrop(ExaminationTest):
    name = "pos_drop"
    aliases = ("pos-drop", "part of speech drop", "part-of-speech drop")
    description = "Drop every word of one POS tag (DET, NOUN, VERB or ADJ; the level is the tag)."
    level_kind = Choice(POS_TAGS)
    levels = every_task(POS_TAGS)
    deterministic = True
    needs_parse = True

    def perturb(self, row: Row, level: str, rng: random.Random) -> str | None:
        return drop_pos(row, level)
