"""Question-word drop (Sai et al. 2021, question generation answerability: "drop question word",
Table 5: "When was he born ?" -> "Was he born?").

The first wh-word is deleted with the space after it; the next word takes over its capital when
it started the text. Texts without a wh-word are not applied. Deterministic.
"""

from __future__ import annotations

import random

from blindspot.perturbations._checklist import CATEGORY, PAPER
from blindspot.perturbations._questions import first_question_word
from blindspot.perturbations.perturbation import NoLevel, Perturbation, Row, register
from blindspot.perturbations.text_utils import capitalise_first


def drop_question_word(text: str) -> str | None:
    """``text`` without its first wh-word."""
    match = first_question_word(text)
    if match is None:
        return None
    rest = text[match.end():].lstrip()
    if match.group(1)[:1].isupper():
        rest = capitalise_first(rest)
    return text[:match.start()] + rest


@register
class QuestionWordDrop(Perturbation):
    name = "question_word_drop"
    aliases = ("drop question word",)
    category = CATEGORY
    paper = PAPER
    description = "Delete the first question word (When was he born? -> Was he born?)."
    level_kind = NoLevel()
    levels = {}  # question generation only (the deviation protocol's templates)
    deterministic = True

    def perturb(self, row: Row, level: str, rng: random.Random) -> str | None:
        return drop_question_word(row.text)
