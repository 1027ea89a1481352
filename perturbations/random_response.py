"""Random response (Sai et al. 2021: "map random responses" (dialogue relevance), "random text"
(data-to-text relevance), Table 5).

The whole text is replaced by another gold text of the dataset drawn uniformly (the ``pool``,
deduplicated and sorted as in ``injection``, never the text itself): fluent, but unrelated.
"""

from __future__ import annotations

import random
from typing import Any

from blindspot.perturbations._checklist import CATEGORY, NO_LEVEL, PAPER
from blindspot.perturbations.injection import clean_pool, pick_other
from blindspot.perturbations.perturbation import NoLevel, Perturbation, Row, register


@register
class RandomResponse(Perturbation):
    name = "random_response"
    aliases = ("random text", "map random responses")
    category = CATEGORY
    paper = PAPER
    description = "Replace the text by a random other gold text of the dataset."
    level_kind = NoLevel()
    levels = NO_LEVEL
    requires = ("pool",)
    swap = False

    def __init__(self, task: str | None = None, **resources: Any) -> None:
        super().__init__(task, **{**resources, "pool": resources.get("pool") or ()})
        self._pool = clean_pool(self.resources["pool"])

    def perturb(self, row: Row, level: str, rng: random.Random) -> str | None:
        return pick_other(self._pool, row.text, rng)
