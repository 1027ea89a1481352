"""Negation (MENLI adequacy attack): every sentence negated, or its negation removed.

MENLI: "We use the perturbation tool of Ribeiro et al. (2020) to add/remove negations to/from the
verb". That is the blind-spots negation test (CheckList's ``add_negation`` on the stored parse,
with a rule fallback that removes an existing negation) applied to every sentence, so this attack
is that test at p = 1 under MENLI's name, not a second implementation. Deterministic; the level
is "-".
"""

from __future__ import annotations

import random

from blindspot.perturbations._menli import MenliAttack
from blindspot.perturbations.negation import Negation
from blindspot.perturbations.perturbation import Row, register


@register
class MenliNegation(MenliAttack):
    name = "menli_negation"
    menli_error = "neg"
    aliases = ("neg", "menli neg", "negation error")
    description = "Negate every sentence, or remove its negation (CheckList, as the negation test)."
    deterministic = True
    needs_parse = True
    preloads = Negation.preloads

    def perturb(self, row: Row, level: str, rng: random.Random) -> str | None:
        return _NEGATION.perturb(row, 1.0, rng)


_NEGATION = Negation()
