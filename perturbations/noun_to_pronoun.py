"""Nouns to pronouns (Sai et al. 2021, summarization referential clarity: "replace nouns by
pronouns", Table 5: "The pandemic was spreading uncontrollably. Vaccines are being developed
rapidly." -> "It was spreading uncontrollably. They are being developed rapidly.").

In every sentence, the first subject (spaCy ``nsubj``/``nsubjpass``) that is a noun or proper
noun is replaced, together with its left modifiers (determiners, adjectives, compounds,
possessives, numbers attached to it), by a subject pronoun: "they" for plural tags (NNS, NNPS),
"he or she" is not guessed for people (spaCy PERSON entities become "they", gender-neutral),
"it" otherwise; capitalised at a sentence start. Deterministic.
"""

from __future__ import annotations

import random

from blindspot.parsing import ParsedText, Token
from blindspot.perturbations._checklist import CATEGORY, NO_LEVEL, PAPER
from blindspot.perturbations.base import NoLevel, Perturbation, Row, register
from blindspot.perturbations.text_utils import capitalise_first, replace_spans, sentence_token_ranges

_SUBJECTS = frozenset({"nsubj", "nsubjpass"})
_MODIFIERS = frozenset({"det", "amod", "compound", "poss", "nummod", "case", "nmod", "punct"})


def pronoun_for(token: Token) -> str:
    """The subject pronoun standing for ``token``'s noun phrase."""
    if token.tag in ("NNS", "NNPS") or token.ent_type == "PERSON":
        return "they"
    return "it"


def subject_phrase(parsed: ParsedText, start: int, end: int) -> tuple[int, int, Token] | None:
    """Token range [first, head + 1) of the sentence's first noun subject and its left modifiers."""
    tokens = parsed.tokens
    for token in tokens[start:end]:
        if token.dep in _SUBJECTS and token.pos in ("NOUN", "PROPN"):
            first = token.i
            while first - 1 >= start and tokens[first - 1].dep in _MODIFIERS and (
                    _attaches_to(tokens, first - 1, token.i)):
                first -= 1
            return first, token.i + 1, token
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
        parsed = row.parsed
        edits = []
        for start, end in sentence_token_ranges(parsed):
            found = subject_phrase(parsed, start, end)
            if found is None:
                continue
            first, stop, head = found
            pronoun = pronoun_for(head)
            if first == start:
                pronoun = capitalise_first(pronoun)
            last = parsed.tokens[stop - 1]
            edits.append((parsed.tokens[first].idx, last.idx + len(last.text), pronoun))
        return replace_spans(parsed.text, edits) if edits else None
