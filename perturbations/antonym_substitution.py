"""Antonym substitution (Sai et al. 2021, "negation / antonyms" of MT adequacy, summarization
informativeness and data-to-text correctness, Table 5: "so inspiring" -> "so uninspiring").

One content word that has a one-word WordNet antonym (any sense of its POS) is chosen at random
and replaced by a random antonym, inflected and cased like the original. The negation half of the
template is the blind-spots suite's ``negation``.
"""

from __future__ import annotations

import random

from blindspot.perturbations._checklist import (
    CATEGORY,
    NO_LEVEL,
    PAPER,
    WORDNET_POS,
    antonyms,
    replace_one_word,
    wordnet,
)
from blindspot.perturbations.perturbation import NoLevel, Perturbation, Row, register


@register
class AntonymSubstitution(Perturbation):
    name = "antonym_substitution"
    aliases = ("antonyms",)
    category = CATEGORY
    paper = PAPER
    description = "Replace one content word by a WordNet antonym."
    level_kind = NoLevel()
    levels = NO_LEVEL
    needs_parse = True
    preloads = (wordnet,)

    def perturb(self, row: Row, level: str, rng: random.Random) -> str | None:
        if row.parsed is None:
            return None
        return replace_one_word(row.parsed, rng, WORDNET_POS, antonyms)
