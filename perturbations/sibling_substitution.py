"""Sibling substitution (Sai et al. 2021: "use hyponyms to create misinformation" (summarization,
data-to-text), "change attributes" (image captioning), "perturb nouns/verbs" (question
generation); Table 5 and App. B).

App. B defines the related words as "hyponyms of hypernyms or 'sibling words'" from WordNet, and
the paper's examples are siblings (musician -> architect, brother -> friend, red -> green), so all
these templates are one test with the part of speech as level: one word of that POS having a
WordNet sibling (see :func:`siblings`; adjectives use the satellites of the same head) is chosen
at random and replaced by a random sibling, inflected and cased like the original.
"""

from __future__ import annotations

import random

from blindspot.perturbations._checklist import CATEGORY, PAPER, replace_one_word, siblings, wordnet
from blindspot.perturbations._fluency_edits import every_task
from blindspot.perturbations.perturbation import Choice, Perturbation, Row, register

_POS = {"noun": "NOUN", "verb": "VERB", "adj": "ADJ"}


@register
class SiblingSubstitution(Perturbation):
    name = "sibling_substitution"
    aliases = ("use hyponyms", "change attributes", "hyponym substitution")
    category = CATEGORY
    paper = PAPER
    description = ("Replace one noun, verb or adjective by a WordNet sibling (a hyponym of its "
                   "hypernym): musician -> architect, red -> green.")
    level_kind = Choice(tuple(_POS))
    levels = every_task(("noun", "adj"))
    needs_parse = True
    preloads = (wordnet,)

    def perturb(self, row: Row, level: str, rng: random.Random) -> str | None:
        if row.parsed is None:
            return None
        return replace_one_word(row.parsed, rng, (_POS[level],), siblings)
