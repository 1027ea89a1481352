"""Expansion (Sai et al. 2021, invariance template, Table 5: "weren't" -> "were not"): the score
must NOT drop.

CheckList's ``Perturb.expand_contractions`` expands every contraction it knows ("I'm" -> "I am",
"it's" -> "it is"). Deterministic.
"""

from __future__ import annotations

import random

from blindspot.perturbations._checklist import CATEGORY, NO_LEVEL, PAPER, checklist_perturb
from blindspot.perturbations.perturbation import NoLevel, Perturbation, Row, register


def expand(text: str) -> str:
    """``text`` with CheckList's contraction expansions applied."""
    return checklist_perturb().expand_contractions(text)


@register
class Expansion(Perturbation):
    name = "expansion"
    aliases = ("expansions", "expand contractions")
    category = CATEGORY
    paper = PAPER
    description = "Expand contractions: 'weren't' -> 'were not' (invariance: no drop expected)."
    level_kind = NoLevel()
    levels = NO_LEVEL
    deterministic = True
    preloads = (checklist_perturb,)

    def perturb(self, row: Row, level: str, rng: random.Random) -> str | None:
        return expand(row.text)
