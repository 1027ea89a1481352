"""Small text repairs shared by the perturbations (joining tokens, re-capitalising, spacing)."""

from __future__ import annotations

import re
from collections.abc import Iterable

from blindspot.parsing import ParsedText, Token

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


def char_span(tokens: tuple[Token, ...], start: int, end: int) -> tuple[int, int]:
    """Character range of tokens [start, end), without the last token's trailing whitespace."""
    last = tokens[end - 1]
    return tokens[start].idx, last.idx + len(last.text)


def trimmed_token_range(tokens: tuple[Token, ...], start: int, end: int) -> tuple[int, int] | None:
    """Tokens [start, end) without whitespace-only tokens at either end; None if nothing is left."""
    while start < end and tokens[start].text.isspace():
        start += 1
    while end > start and tokens[end - 1].text.isspace():
        end -= 1
    return (start, end) if start < end else None


def sentence_token_ranges(parsed: ParsedText) -> list[tuple[int, int]]:
    """The parse's sentences as [start, end) token ranges trimmed of whitespace tokens.

    Whitespace-only "sentences" (spaCy makes them of blank lines) are left out, so the last range
    is the last sentence that has words.
    """
    ranges = (trimmed_token_range(parsed.tokens, s, e) for s, e in parsed.sents)
    return [r for r in ranges if r is not None]


def sentence_char_spans(parsed: ParsedText) -> list[tuple[int, int]]:
    """Character ranges of the sentences of :func:`sentence_token_ranges` (no outer whitespace)."""
    return [char_span(parsed.tokens, s, e) for s, e in sentence_token_ranges(parsed)]


def replace_spans(text: str, edits: Iterable[tuple[int, int, str]]) -> str:
    """``text`` with each character range [start, end) replaced by its new string.

    Ranges must not overlap; everything outside them (spacing, newlines) is kept as it was.
    """
    pieces: list[str] = []
    cursor = 0
    for start, end, new in sorted(edits, key=lambda edit: edit[0]):
        pieces.append(text[cursor:start])
        pieces.append(new)
        cursor = end
    pieces.append(text[cursor:])
    return "".join(pieces)
