"""Verb lemmatization (blind-spots paper, fluency; Table 16 "Verb Lemmatization").

Each spaCy token with POS VERB (auxiliaries, POS AUX, are left alone) is replaced by its spaCy
lemma with probability p: "She went to the office" -> "She go to the office". The lemma takes the
token's casing ("Said" -> "Say", "SAID" -> "SAY"), which is the only re-capitalisation needed: no
other character of the text changes. A contracted verb ("'s" of "there's", tagged VERB by spaCy) is
written apart from its host: "there be".
"""

from __future__ import annotations

import random

from blindspot.parsing import Token
from blindspot.perturbations._fluency_edits import every_task, parse_of, pick_each
from blindspot.perturbations.perturbation import Perturbation, Ratio, Row, register
from blindspot.perturbations.text_utils import match_case, replace_spans

_APOSTROPHES = frozenset("'\u2019")


def lemma_of(token: Token, glued: bool = False) -> str | None:
    """The token's lemma cased like the token, or None when it would not change a usable verb.

    A contracted verb ``glued`` to the word before becomes a word of its own: "there's" ->
    "there be", not "therebe".
    """
    lemma = token.lemma
    if token.pos != "VERB" or not lemma or any(ch.isspace() for ch in lemma):
        return None
    lemma = match_case(token.text, lemma)
    if lemma == token.text:
        return None
    if glued and token.text[:1] in _APOSTROPHES and lemma[:1] not in _APOSTROPHES:
        return " " + lemma
    return lemma


def lemmatize_verbs(row: Row, p: float, rng: random.Random) -> str | None:
    """The row's text with each verb lemmatized with probability p (None: nothing changed)."""
    parsed = parse_of(row.text, row.parsed)
    if parsed is None:
        return None
    chosen = pick_each((t for t in parsed.tokens if t.pos == "VERB"), p, rng)
    text = parsed.text
    edits = [(t.idx, t.idx + len(t.text), new) for t in chosen
             if (new := lemma_of(t, t.idx > 0 and not text[t.idx - 1].isspace()))]
    return replace_spans(text, edits) if edits else None


@register
class VerbLemmatization(Perturbation):
    name = "verb_lemmatization"
    aliases = ("verb_lemmatisation",)
    category = "fluency"
    description = "Replace each verb (spaCy POS VERB) by its lemma with probability p."
    level_kind = Ratio(0.0, 1.0)
    levels = every_task((0.5, 1.0))
    needs_parse = True

    def perturb(self, row: Row, level: float, rng: random.Random) -> str | None:
        return lemmatize_verbs(row, level, rng)
