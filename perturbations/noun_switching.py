"""Noun switching (blind-spots paper, consistency; Table 16 "Noun Switching").

With more than two common nouns (spaCy POS ``NOUN``; proper nouns are the entity tests' job),
K random pairs of nouns swap places, e.g. "She went to the office in Boston. And she talked to her
staff" -> "She went to the staff in Boston. And she talked to her office". A noun moves as it is
written (no re-inflection for number: the spec asks for none); only its first letter is fitted
to a sentence start. Pairs of the same noun (case-insensitive) are never drawn.
"""

from __future__ import annotations

from blindspot.parsing import ParsedText
from blindspot.perturbations._switching import Unit, UnitSwitching, is_title_word, starts_sentence
from blindspot.perturbations.perturbation import register


def noun_units(parsed: ParsedText) -> list[Unit]:
    """Every common noun that contains a letter, as a switchable unit."""
    return [Unit(t.idx, t.idx + len(t.text), t.text, t.text.lower(), starts_sentence(t),
                 is_title_word(t.text))
            for t in parsed.tokens if t.pos == "NOUN" and any(c.isalpha() for c in t.text)]


@register
class NounSwitching(UnitSwitching[Unit]):
    name = "noun_switching"
    aliases = ("noun switching", "noun-switching", "switch nouns")
    category = "consistency"
    description = "Swap K random pairs of common nouns (needs more than two nouns)."
    levels = {"summarization": (2, 7), "translation": (1, 6), "translation_paragraph": (6,),
              "open_ended": (10, 60)}

    def units(self, parsed: ParsedText) -> list[Unit]:
        return noun_units(parsed)
