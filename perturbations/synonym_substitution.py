"""Synonym substitution (Sai et al. 2021, invariance template, Table 5: "The mangoes are
delicious" -> "The mangoes are tasty"): the score must NOT drop.

One content word (noun, verb, adjective or adverb, not a stop word) that has a one-word WordNet
synonym in its most frequent sense is chosen at random and replaced by a random such synonym,
inflected to the original's tag (lemminflect) and cased like it. Only the first sense is used so
the meaning is kept; words without a synonym there leave the row not applied.
"""

from __future__ import annotations

import random

from blindspot.perturbations._checklist import (
    CATEGORY,
    NO_LEVEL,
    PAPER,
    WORDNET_POS,
    replace_one_word,
    synonyms,
    wordnet,
)
from blindspot.perturbations.perturbation import NoLevel, Perturbation, Row, register


@register
class SynonymSubstitution(Perturbation):
    name = "synonym_substitution"
    aliases = ("replace with synonyms",)
    category = CATEGORY
    paper = PAPER
    description = "Replace one content word by a WordNet synonym (invariance: no drop expected)."
    level_kind = NoLevel()
    levels = NO_LEVEL
    needs_parse = True
    preloads = (wordnet,)

    def perturb(self, row: Row, level: str, rng: random.Random) -> str | None:
        if row.parsed is None:
            return None
        return replace_one_word(row.parsed, rng, WORDNET_POS, synonyms)
