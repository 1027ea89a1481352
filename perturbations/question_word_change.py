"""Question-word change (Sai et al. 2021, question generation answerability: "change question
word", Table 5: "When was he born?" -> "What was he born?").

The first wh-word (what, when, where, which, who, whom, whose, why, how) is replaced by another
one drawn uniformly from the rest of that list, cased like the original. Texts without a
wh-word are not applied.
"""

from __future__ import annotations

import random

from blindspot.perturbations._checklist import CATEGORY, PAPER
from blindspot.perturbations._questions import QUESTION_WORDS, first_question_word
from blindspot.perturbations.perturbation import NoLevel, Perturbation, Row, register
from blindspot.perturbations.text_utils import match_case


@register
class QuestionWordChange(Perturbation):
    name = "question_word_change"
    aliases = ("change question word",)
    category = CATEGORY
    paper = PAPER
    description = "Replace the first question word by another one (when -> what)."
    level_kind = NoLevel()
    levels = {}  # question generation only (the deviation protocol's templates)

    def perturb(self, row: Row, level: str, rng: random.Random) -> str | None:
        match = first_question_word(row.text)
        if match is None:
            return None
        others = [w for w in QUESTION_WORDS if w != match.group(1).lower()]
        new = match_case(match.group(1), others[rng.randrange(len(others))])
        return row.text[:match.start()] + new + row.text[match.end():]
