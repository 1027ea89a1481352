"""Random sentence addition (Sai et al. 2021: "add extra text / adding extra wrong information"
(MT adequacy), "add extra non-sensible text" (dialogue making sense), Table 5; App. B: "the
perturbations of adding text append random words / phrases / sentences").

A sentence drawn uniformly from the other gold texts of the dataset (the ``pool``; candidates
by ``sentence_replacement.build_candidates`` with ``whole_only``: deduplicated, sorted, at least
three words, never a sentence the text already has) is appended after a space, so the text keeps
all its content and gains spurious information.
"""

from __future__ import annotations

import random
from typing import Any

from blindspot.perturbations._checklist import CATEGORY, NO_LEVEL, PAPER
from blindspot.perturbations.perturbation import NoLevel, Perturbation, Row, register
from blindspot.perturbations.sentence_replacement import build_candidates, draw_sentence


@register
class RandomSentenceAddition(Perturbation):
    name = "random_sentence_addition"
    aliases = ("add extra text", "add non-sensible text")
    category = CATEGORY
    paper = PAPER
    description = "Append a random sentence taken from another gold text of the dataset."
    level_kind = NoLevel()
    levels = NO_LEVEL
    requires = ("pool",)

    def __init__(self, task: str | None = None, **resources: Any) -> None:
        super().__init__(task, **{**resources, "pool": resources.get("pool") or ()})
        self._candidates: tuple[str, ...] | None = None

    def candidates(self) -> tuple[str, ...]:
        if self._candidates is None:
            self._candidates = build_candidates(self.resources["pool"])
        return self._candidates

    def perturb(self, row: Row, level: str, rng: random.Random) -> str | None:
        own = row.text.strip()
        extra = draw_sentence(rng, self.candidates(), lambda s: s != own)
        if extra is None or extra in row.text:
            return None
        return row.text.rstrip() + " " + extra
