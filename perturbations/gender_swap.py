"""Gender swap (Sai et al. 2021, image captioning correctness: "change gender", Table 5: "Two
girls are playing with a doll" -> "Two boys are playing with a doll").

Every gendered word of a fixed list of English pairs (man/woman, boy/girl, he/she, his/her,
father/mother, ...) is replaced by its counterpart, cased like it. "her" is ambiguous: as a
possessive (spaCy tag PRP$) it becomes "his", otherwise "him"; "his" standing alone as a
pronoun stays "his" -> "hers" only when spaCy tags it PRP. Deterministic.
"""

from __future__ import annotations

import random

from blindspot.perturbations._checklist import CATEGORY, NO_LEVEL, PAPER
from blindspot.perturbations.perturbation import NoLevel, Perturbation, Row, register
from blindspot.perturbations.text_utils import match_case, replace_spans

_PAIRS = [("man", "woman"), ("men", "women"), ("boy", "girl"), ("boys", "girls"),
          ("he", "she"), ("him", "her"), ("himself", "herself"), ("male", "female"),
          ("males", "females"), ("father", "mother"), ("fathers", "mothers"), ("son", "daughter"),
          ("sons", "daughters"), ("brother", "sister"), ("brothers", "sisters"),
          ("husband", "wife"), ("husbands", "wives"), ("king", "queen"), ("kings", "queens"),
          ("gentleman", "lady"), ("gentlemen", "ladies"), ("mr", "mrs"), ("uncle", "aunt"),
          ("uncles", "aunts"), ("nephew", "niece"), ("grandfather", "grandmother"),
          ("grandson", "granddaughter"), ("dad", "mom"), ("dads", "moms"),
          ("boyfriend", "girlfriend"),
          ("guy", "gal"), ("prince", "princess"), ("actor", "actress"), ("waiter", "waitress"),
          ("groom", "bride"), ("mister", "madam"), ("sir", "madam")]
SWAPS: dict[str, str] = {}
for _m, _f in _PAIRS:
    SWAPS.setdefault(_m, _f)
    SWAPS.setdefault(_f, _m)


def counterpart(word: str, tag: str) -> str | None:
    """The other gender's word for ``word`` (None when it is not gendered)."""
    key = word.lower()
    if key == "her":
        return "his" if tag == "PRP$" else "him"
    if key == "his":
        return "hers" if tag == "PRP" else "her"
    if key == "hers":
        return "his"
    return SWAPS.get(key)


@register
class GenderSwap(Perturbation):
    name = "gender_swap"
    aliases = ("change gender",)
    category = CATEGORY
    paper = PAPER
    description = "Swap every gendered word for its counterpart (girls -> boys, he -> she)."
    level_kind = NoLevel()
    levels = NO_LEVEL
    deterministic = True
    needs_parse = True

    def perturb(self, row: Row, level: str, rng: random.Random) -> str | None:
        if row.parsed is None:
            return None
        edits = []
        for token in row.parsed.tokens:
            new = counterpart(token.text, token.tag)
            if new is not None:
                edits.append((token.idx, token.idx + len(token.text), match_case(token.text, new)))
        return replace_spans(row.text, edits) if edits else None
