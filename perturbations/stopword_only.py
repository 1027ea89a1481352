"""Stop words only (Sai et al. 2021 / spec section C, MT adequacy: "keep only / remove stop
words"; the remove half is the blind-spots suite's ``stopword_removal`` at p = 1).

Only spaCy's stop words and punctuation are kept ("The bank is willing to approve the loan." ->
"The is to the."), so a metric that rewards function-word overlap shows it. Deterministic.
"""

from __future__ import annotations

import random

from blindspot.perturbations._checklist import CATEGORY, NO_LEVEL, PAPER, drop_tokens
from blindspot.perturbations.perturbation import NoLevel, Perturbation, Row, register


@register
class StopwordOnly(Perturbation):
    name = "stopword_only"
    aliases = ("keep only stop words",)
    category = CATEGORY
    paper = PAPER
    description = "Keep only the stop words (and punctuation) of the text."
    level_kind = NoLevel()
    levels = NO_LEVEL
    deterministic = True
    needs_parse = True

    def perturb(self, row: Row, level: str, rng: random.Random) -> str | None:
        if row.parsed is None:
            return None
        kept = drop_tokens(row.parsed, lambda t: not (t.is_stop or t.pos in ("PUNCT", "SPACE")))
        return kept if kept and any(c.isalpha() for c in kept) else None
