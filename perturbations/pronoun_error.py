"""Pronoun error (MENLI adequacy attack).

MENLI: "We replace all pronouns in the sentence with other ones without causing syntax errors
(e.g., 'he' to 'she' and 'us' to 'them')". Every personal pronoun (spaCy tag PRP or PRP$) with a
partner of the same case and the same verb agreement is swapped for it: he<->she, him<->her,
his<->her (possessive determiner, told apart from the object "her" by its tag), hers<->his
(standalone), himself<->herself, we<->they, us<->them, our<->their, ours<->theirs,
ourselves<->themselves, my<->your, mine<->yours. These are the swaps seen in the shipped MENLI
WMT20 set (their<->our, we<->they, his<->her, us<->them, he<->she...). Pronouns without such a
partner are kept: "I" ("I am"), "you" (subject or object), "me", "it"/"its", "myself"/"yourself"
(they must agree with a subject that stays). "hers", "ours", "theirs" and "yours" count whatever
their tag (spaCy's small model tags "hers" as a plural noun); "mine" only as a pronoun. The case of
each word is kept ("They" -> "We"); "US" (the country, a proper noun) is not a pronoun.
Deterministic; the level is "-".
"""

from __future__ import annotations

import random

from blindspot.parsing import ParsedText, Token
from blindspot.perturbations._menli import TokenEditAttack
from blindspot.perturbations.perturbation import register
from blindspot.perturbations.text_utils import match_case

_PAIRS = (("he", "she"), ("we", "they"), ("us", "them"), ("our", "their"), ("ours", "theirs"),
          ("ourselves", "themselves"), ("himself", "herself"), ("my", "your"), ("mine", "yours"))
#: (pronoun, Penn tag or "" for any tag) -> its partner
PRONOUN_SWAPS: dict[tuple[str, str], str] = {
    **{(a, ""): b for a, b in _PAIRS}, **{(b, ""): a for a, b in _PAIRS},
    ("him", ""): "her", ("her", "PRP"): "him", ("her", "PRP$"): "his",
    ("his", "PRP$"): "her", ("his", "PRP"): "hers", ("hers", ""): "his",
}
PRONOUN_TAGS = frozenset({"PRP", "PRP$"})
#: possessive pronouns that are never another word (spaCy's small model tags "hers" NNS)
ALWAYS_PRONOUNS = frozenset({"hers", "ours", "theirs", "yours"})


def swap_pronoun(text: str, tag: str) -> str | None:
    """The partner of pronoun ``text`` with Penn tag ``tag``, cased like it, or None."""
    key = text.lower()
    if tag not in PRONOUN_TAGS and key not in ALWAYS_PRONOUNS:
        return None
    partner = PRONOUN_SWAPS.get((key, tag)) or PRONOUN_SWAPS.get((key, ""))
    return match_case(text, partner) if partner else None


@register
class PronounError(TokenEditAttack):
    name = "pronoun_error"
    menli_error = "pron"
    aliases = ("pron", "pronoun", "pronoun swap", "change pronouns")
    description = "Swap every pronoun for its partner of the same case (he<->she, us<->them...)."
    deterministic = True

    def new_text(self, parsed: ParsedText, token: Token, rng: random.Random) -> str | None:
        return swap_pronoun(token.text, token.tag)
