"""Contraction (Sai et al. 2021, invariance template, Table 5: "We are going" -> "We're going"):
the score must NOT drop.

CheckList's own ``Perturb.contract`` (Ribeiro et al. 2020, the framework the paper extends)
contracts every pattern it knows ("do not" -> "don't", "it is" -> "it's"). Deterministic.
"""

from __future__ import annotations

import random

from blindspot.perturbations._checklist import CATEGORY, NO_LEVEL, PAPER, checklist_perturb
from blindspot.perturbations.perturbation import NoLevel, Perturbation, Row, register


def contract(text: str) -> str:
    """``text`` with CheckList's contractions applied."""
    return checklist_perturb().contract(text)


@register
class Contraction(Perturbation):
    name = "contraction"
    aliases = ("contractions",)
    category = CATEGORY
    paper = PAPER
    description = ("Contract 'do not' -> 'don't', 'we are' -> 'we're' (invariance: no drop "
                   "expected).")
    level_kind = NoLevel()
    levels = NO_LEVEL
    deterministic = True
    preloads = (checklist_perturb,)

    def perturb(self, row: Row, level: str, rng: random.Random) -> str | None:
        return contract(row.text)
