"""Nouns to pronouns (Sai et al. 2021, summarization referential clarity: "replace nouns by
pronouns", Table 5: "The pandemic was spreading uncontrollably. Vaccines are being developed
rapidly." -> "It was spreading uncontrollably. They are being developed rapidly.").

In every sentence, the first subject (spaCy ``nsubj``/``nsubjpass``) that is a noun or proper
noun is replaced, together with its left modifiers (determiners, adjectives, compounds,
possessives, numbers attached to it), the words right after it that depend on it ("The engineers
at Apple") and, for a proper noun, the proper nouns after it, by a subject pronoun: "they" for
plural tags (NNS, NNPS), "it" for a singular common noun or a singular organisation, place,
product, event or work (spaCy entity types); capitalised at a sentence start. A person (PERSON),
or a proper noun spaCy gives no entity type, is left alone: its gender is unknown and singular
"they" would break the verb's agreement ("They says"), which would add a fluency error to a
referential-clarity template.
Deterministic.
"""

from __future__ import annotations

import random

from blindspot.parsing import ParsedText, Token
from blindspot.perturbations._checklist import CATEGORY, NO_LEVEL, PAPER
from blindspot.perturbations.perturbation import NoLevel, Perturbation, Row, register
from blindspot.perturbations.text_utils import capitalise_first, replace_spans, sentence_token_ranges

_SUBJECTS = frozenset({"nsubj", "nsubjpass"})
_MODIFIERS = frozenset({"det", "amod", "compound", "poss", "nummod", "case", "nmod", "punct"})


_THINGS = frozenset({"ORG", "GPE", "LOC", "FAC", "PRODUCT", "EVENT", "WORK_OF_ART", "LAW"})


def pronoun_for(token: Token) -> str | None:
    """The subject pronoun standing for ``token``'s noun phrase, or None (a singular person)."""
    if token.ent_type == "PERSON":
        return None
    if token.tag in ("NNS", "NNPS"):
        return "they"
    if token.pos == "NOUN" and token.ent_type != "PERSON":
        return "it"
    return "it" if token.ent_type in _THINGS else None


def subject_phrase(parsed: ParsedText, start: int, end: int) -> tuple[int, int, Token] | None:
    """Token range [first, last) of the sentence's first noun subject with its left modifiers
    and the contiguous words after it that depend on it, and the head token."""
    tokens = parsed.tokens
    for token in tokens[start:end]:
        if token.dep in _SUBJECTS and token.pos in ("NOUN", "PROPN"):
            first = token.i
            while first - 1 >= start and tokens[first - 1].dep in _MODIFIERS and (
                    _attaches_to(tokens, first - 1, token.i)):
                first -= 1
            last = token.i + 1
            while last < end and (_attaches_to(tokens, last, token.i) or (
                    token.pos == "PROPN" and tokens[last].pos == "PROPN")):
                last += 1
            return first, last, token
    return None


def _attaches_to(tokens: tuple[Token, ...], i: int, head: int) -> bool:
    """Whether token ``i`` depends (directly or through other tokens) on token ``head``."""
    seen = 0
    while tokens[i].head != i and seen < 50:
        i = tokens[i].head
        if i == head:
            return True
        seen += 1
    return False


@register
class NounToPronoun(Perturbation):
    name = "noun_to_pronoun"
    aliases = ("replace nouns by pronouns",)
    category = CATEGORY
    paper = PAPER
    description = "Replace each sentence's noun subject by a pronoun (it / they)."
    level_kind = NoLevel()
    levels = NO_LEVEL
    deterministic = True
    needs_parse = True

    def perturb(self, row: Row, level: str, rng: random.Random) -> str | None:
        if row.parsed is None:
            return None
        parsed = row.parsed
        edits = []
        for start, end in sentence_token_ranges(parsed):
            found = subject_phrase(parsed, start, end)
            if found is None:
                continue
            first, stop, head = found
            pronoun = pronoun_for(head)
            if pronoun is None:
                continue
            if first == start:
                pronoun = capitalise_first(pronoun)
            last = parsed.tokens[stop - 1]
            edits.append((parsed.tokens[first].idx, last.idx + len(last.text), pronoun))
        return replace_spans(parsed.text, edits) if edits else None
