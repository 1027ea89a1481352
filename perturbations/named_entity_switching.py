"""Named entity switching (blind-spots paper, consistency; Table 16 "Named Entity Switching").

With more than two named entities, K random pairs of entity strings swap places, e.g. "She went
to the office in Boston. And she talked to her staff about Paris." -> "... in Paris. ... about
Boston." Spec ambiguity resolved: every entity spaCy finds counts, whatever its label (the spec
says "entity strings" and counts "> 2 entities" without a label filter), and an entity may swap
with one of another label. Two entities that read the same are never drawn as a pair. An entity
that spaCy starts with its determiner ("The United States") moves with it and gets that
determiner's first letter fitted to its new place.
"""

from __future__ import annotations

from blindspot.parsing import ParsedText
from blindspot.perturbations._switching import Unit, UnitSwitching, starts_sentence
from blindspot.perturbations.perturbation import register
from blindspot.perturbations.text_utils import char_span, trimmed_token_range


def entity_units(parsed: ParsedText) -> list[Unit]:
    """Every named entity as a switchable unit (its determiner, if any, may change case)."""
    units = []
    for ent_start, ent_end, _label in parsed.ents:
        trimmed = trimmed_token_range(parsed.tokens, ent_start, ent_end)
        if trimmed is None:
            continue
        start, end = trimmed
        first = parsed.tokens[start]
        lo, hi = char_span(parsed.tokens, start, end)
        text = parsed.text[lo:hi]
        units.append(Unit(lo, hi, text, text, starts_sentence(first), first.pos == "DET"))
    return units


@register
class NamedEntitySwitching(UnitSwitching[Unit]):
    name = "named_entity_switching"
    aliases = ("named entity switching", "ne switching", "entity switching", "switch entities")
    category = "consistency"
    description = "Swap K random pairs of named-entity strings (needs more than two entities)."
    levels = {"summarization": (1, 3), "open_ended": (6, 15, 30)}

    def units(self, parsed: ParsedText) -> list[Unit]:
        return entity_units(parsed)
