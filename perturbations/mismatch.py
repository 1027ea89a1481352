"""Noun, verb and adjective mismatch (MENLI adequacy attacks ``word_NN``, ``word_VB``, ``word_JJ``).

MENLI: "we replace a specific word having the POS tag of noun/verb/adjective with another word
having the same POS tag randomly selected from our collected words for that POS tag". One random
word of that part of speech in the text (spaCy: a common noun tagged NN/NNS; a verb, not an
auxiliary, with a verb tag; an adjective tagged JJ -- comparatives are left alone, lemminflect
makes "beautifuler") is replaced by a random word of our list for it (see ``_word_lists``: Brill's
lexicon and pattern's frequency list), inflected to the replaced word's tag ("arguing" ->
"focusing", "prices" -> "plans") and cased like it ("Last December" -> "Full December"). A text
without such a word is not changed. The level is "-"; each attack changes exactly one word.
"""

from __future__ import annotations

from blindspot.perturbations._menli import RandomWordAttack
from blindspot.perturbations.perturbation import register
from blindspot.perturbations.verb_switching import VERB_TAGS


@register
class NounMismatch(RandomWordAttack):
    name = "noun_mismatch"
    menli_error = "word_NN"
    aliases = ("word_NN", "noun mismatch", "mismatch noun", "mismatched noun")
    description = "Replace one random noun by a random other noun (same number)."
    upos = "NOUN"
    tags = frozenset({"NN", "NNS"})
    word_list = "noun"


@register
class VerbMismatch(RandomWordAttack):
    name = "verb_mismatch"
    menli_error = "word_VB"
    aliases = ("word_VB", "verb mismatch", "mismatch verb", "mismatched verb")
    description = "Replace one random verb by a random other verb (same tense/form)."
    upos = "VERB"
    tags = VERB_TAGS
    word_list = "verb"


@register
class AdjectiveMismatch(RandomWordAttack):
    name = "adjective_mismatch"
    menli_error = "word_JJ"
    aliases = ("word_JJ", "adjective mismatch", "mismatch adjective", "mismatched adjective")
    description = "Replace one random adjective by a random other adjective."
    upos = "ADJ"
    tags = frozenset({"JJ"})
    word_list = "adjective"
