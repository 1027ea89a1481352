"""POS removal (Sai et al. 2021: "dropped adjectives" (fluency) and image captioning's "drop
objects/nouns" (thoroughness), Table 5).

Every spaCy token of the chosen coarse POS is dropped with the whitespace before it: ADJ turns
"A small boy playing with a red ball" into "A boy playing with a ball", NOUN into "A small
playing with a red" (the paper's example). DET and VERB are also offered (the same edit on other
word classes). Deterministic.
"""

from __future__ import annotations

import random

from blindspot.perturbations._checklist import CATEGORY, PAPER, all_tasks, drop_tokens
from blindspot.perturbations.base import Choice, Perturbation, Row, register

POS_TAGS = ("ADJ", "NOUN", "VERB", "DET")


@register
class PosRemoval(Perturbation):
    name = "pos_removal"
    aliases = ("drop adjectives", "drop objects")
    category = CATEGORY
    paper = PAPER
    description = "Drop every word of one part of speech (ADJ, NOUN, VERB or DET)."
    level_kind = Choice(POS_TAGS)
    levels = all_tasks(("ADJ", "NOUN"))
    deterministic = True
    needs_parse = True

    def perturb(self, row: Row, level: str, rng: random.Random) -> str | None:
        return drop_tokens(row.parsed, lambda t: t.pos == level)
