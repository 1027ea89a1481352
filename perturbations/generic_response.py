"""Generic response (Sai et al. 2021, dialogue: listening "Replace with 'Can you repeat?'" and the
generic replies of §5.2, "ok, thanks" and back-off responses; spec: ok / thanks / yes / bye).

The response is replaced by a fixed string chosen by the level: ``repeat`` -> "I'm sorry, can you
repeat?", ``ok`` -> "Ok.", ``thanks`` -> "Thanks.", ``yes`` -> "Yes.", ``bye`` -> "Bye.".
Deterministic.
"""

from __future__ import annotations

import random

from blindspot.perturbations._checklist import CATEGORY, PAPER
from blindspot.perturbations.perturbation import Choice, Perturbation, Row, register

RESPONSES = {"repeat": "I'm sorry, can you repeat?", "ok": "Ok.", "thanks": "Thanks.",
             "yes": "Yes.", "bye": "Bye."}


@register
class GenericResponse(Perturbation):
    name = "generic_response"
    aliases = ("can you repeat", "generic reply")
    category = CATEGORY
    paper = PAPER
    description = "Replace the response by a generic one: \"I'm sorry, can you repeat?\", Ok., ..."
    level_kind = Choice(tuple(RESPONSES))
    levels = {}  # dialogue only (the deviation protocol's templates)
    deterministic = True

    def perturb(self, row: Row, level: str, rng: random.Random) -> str | None:
        return RESPONSES[level]
