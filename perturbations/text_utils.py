"""Small text repairs shared by the perturbations (joining tokens, re-capitalising, spacing)."""

from __future__ import annotations

import re
from collections.abc import Iterable

from blindspot.parsing import Token

_SENTENCE_START = re.compile(r"(^|[.!?]\s+)([a-z])")
_MULTI_SPACE = re.compile(r"[ \t]{2,}")
_SPACE_BEFORE_PUNCT = re.compile(r"\s+([,.;:!?])")


def recapitalise(text: str) -> str:
    """Upper-case the first letter of the text and of every sentence after . ! or ?"""
    return _SENTENCE_START.sub(lambda m: m.group(1) + m.group(2).upper(), text)


def collapse_spaces(text: str) -> str:
    """Collapse runs of spaces and strip the ends (newlines are kept)."""
    return _MULTI_SPACE.sub(" ", text).strip()


def tidy_punctuation_spacing(text: str) -> str:
    """Remove spaces before , . ; : ! ? left behind by a deletion."""
    return _SPACE_BEFORE_PUNCT.sub(r"\1", text)


def join_tokens(tokens: Iterable[Token]) -> str:
    """The text of spaCy tokens with their own trailing whitespace."""
    return "".join(t.text + t.ws for t in tokens)


def drop_tokens(tokens: Iterable[Token], drop: set[int]) -> str:
    """Text without the tokens whose index is in ``drop``, re-spaced and re-capitalised.

    A dropped token takes its preceding space with it (the previous kept token's whitespace
    joins the next kept token), so "went to the office" -> "went the office".
    """
    pieces: list[str] = []
    pending_ws = ""
    for tok in tokens:
        if tok.i in drop:
            continue
        if pieces:
            pieces.append(pending_ws)
        pieces.append(tok.text)
        pending_ws = tok.ws
    pieces.append(pending_ws)
    return recapitalise(collapse_spaces("".join(pieces)))
