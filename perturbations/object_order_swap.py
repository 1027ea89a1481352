"""Object order swap (Sai et al. 2021, image captioning correctness: "change the order of
objects", Table 5: "The man is standing in front of a tree" -> "The tree is standing in front of
man").

The first and the last common nouns (spaCy NOUN) of the text trade places when they differ, each
keeping the case of the slot it moves into ("The man ... a tree" -> "The tree ... a man"); a text
with fewer than two different nouns is not applied. A swap counts as two edits in the noise
ratio. Deterministic.
"""

from __future__ import annotations

import random

from blindspot.perturbations._checklist import CATEGORY, NO_LEVEL, PAPER
from blindspot.perturbations.perturbation import NoLevel, Perturbation, Row, register
from blindspot.perturbations.text_utils import match_case, replace_spans


@register
class ObjectOrderSwap(Perturbation):
    name = "object_order_swap"
    aliases = ("change the order of objects",)
    category = CATEGORY
    paper = PAPER
    description = "Swap the first and the last noun of the text."
    level_kind = NoLevel()
    levels = NO_LEVEL
    deterministic = True
    swap = True
    needs_parse = True

    def perturb(self, row: Row, level: str, rng: random.Random) -> str | None:
        if row.parsed is None:
            return None
        nouns = [t for t in row.parsed.tokens if t.pos == "NOUN" and t.text.isalpha()]
        if len(nouns) < 2 or nouns[0].text.lower() == nouns[-1].text.lower():
            return None
        a, b = nouns[0], nouns[-1]
        return replace_spans(row.text, [
            (a.idx, a.idx + len(a.text), match_case(a.text, b.text.lower())),
            (b.idx, b.idx + len(b.text), match_case(b.text, a.text.lower()))])
