"""Verb switching (blind-spots paper, consistency; Table 16 "Verb Switching").

With more than two verbs (spaCy POS ``VERB`` with a verb tag VB/VBD/VBG/VBN/VBP/VBZ; auxiliaries
are not verbs here), K random pairs of verbs swap places, each re-inflected with lemminflect to the
fine tag of the place it moves to: "She went to the office ... she talked to her staff" ->
"She talked to the office ... she went to her staff". A swap for which either verb has no
inflection for its new tag is skipped (spec); pairs of the same lemma are never drawn. The
paper's example keeps the particle/preposition in place, and so does this test.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from blindspot.parsing import ParsedText
from blindspot.perturbations._switching import Unit, UnitSwitching, fit_case, starts_sentence
from blindspot.perturbations.perturbation import register

VERB_TAGS = frozenset({"VB", "VBD", "VBG", "VBN", "VBP", "VBZ"})


@lru_cache(maxsize=65536)
def inflect(lemma: str, tag: str) -> str | None:
    """``lemma`` inflected to the Penn tag ``tag`` (lemminflect's first form), or None."""
    from lemminflect import getInflection  # heavy first import; only this test needs it

    forms = getInflection(lemma, tag=tag)
    return forms[0] if forms else None


@dataclass(frozen=True)
class VerbUnit(Unit):
    lemma: str = ""
    tag: str = ""
    upper: bool = False  # written all in capitals (a headline): keep it so


def verb_units(parsed: ParsedText) -> list[VerbUnit]:
    """Every verb with a verb tag and an alphabetic lemma, as a switchable unit."""
    return [VerbUnit(t.idx, t.idx + len(t.text), t.text, t.lemma.lower(), starts_sentence(t),
                     True, lemma=t.lemma.lower(), tag=t.tag,
                     upper=len(t.text) > 1 and t.text.isupper())
            for t in parsed.tokens
            if t.pos == "VERB" and t.tag in VERB_TAGS and t.lemma.isalpha()]


@register
class VerbSwitching(UnitSwitching[VerbUnit]):
    name = "verb_switching"
    aliases = ("verb switching", "verb-switching", "switch verbs")
    category = "consistency"
    description = ("Swap K random pairs of verbs, each re-inflected to the other's tense/form "
                   "(needs more than two verbs).")
    levels = {"summarization": (8,), "translation_paragraph": (8,), "open_ended": (10, 60)}

    def units(self, parsed: ParsedText) -> list[VerbUnit]:
        return verb_units(parsed)

    def accept(self, units: list[VerbUnit], pos_a: int, item_a: int, pos_b: int, item_b: int) -> bool:
        return (inflect(units[item_a].lemma, units[pos_a].tag) is not None
                and inflect(units[item_b].lemma, units[pos_b].tag) is not None)

    def realise(self, units: list[VerbUnit], position: int, item: int) -> str:
        place = units[position]
        form = inflect(units[item].lemma, place.tag) or units[item].text
        if place.upper:
            return form.upper()
        return fit_case(form, place.at_start, False, False)
