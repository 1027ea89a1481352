"""Context repetition (Sai et al. 2021, dialogue avoid-repetition: "repeat previous utterances",
Table 5).

The response is replaced by the responding speaker's own previous utterance, read from the
dialogue context (the row's ``source``; see ``_dialogue``): the bot repeats itself. Rows whose
context has fewer than two turns are not applied. Deterministic.
"""

from __future__ import annotations

import random

from blindspot.perturbations._checklist import CATEGORY, PAPER
from blindspot.perturbations._dialogue import same_speaker_previous
from blindspot.perturbations.perturbation import NoLevel, Perturbation, Row, register


@register
class ContextRepetition(Perturbation):
    name = "context_repetition"
    aliases = ("repeat previous utterance",)
    category = CATEGORY
    paper = PAPER
    description = "Reply with the speaker's own previous utterance from the dialogue context."
    level_kind = NoLevel()
    levels = {}  # dialogue only (the deviation protocol's templates)
    deterministic = True
    needs_source = True

    def perturb(self, row: Row, level: str, rng: random.Random) -> str | None:
        return same_speaker_previous(row.source)
