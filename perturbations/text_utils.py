"""Small text helpers shared by the perturbations: joining tokens, editing character spans and
fitting the case of a word to its place."""

from __future__ import annotations

from collections.abc import Iterable

from blindspot.parsing import ParsedText, Token


def join_tokens(tokens: Iterable[Token]) -> str:
    """The text of spaCy tokens with their own trailing whitespace."""
    return "".join(t.text + t.ws for t in tokens)


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


def capitalise_first(word: str) -> str:
    """Upper-case the first letter of ``word`` when it is lower-case (after leading punctuation)."""
    for i, ch in enumerate(word):
        if ch.isalpha():
            return word[:i] + ch.upper() + word[i + 1:] if ch.islower() else word
        if ch.isdigit():
            return word
    return word


def lowercase_first(word: str) -> str:
    """Lower-case the first letter of ``word`` (after leading punctuation)."""
    for i, ch in enumerate(word):
        if ch.isalpha():
            return word[:i] + ch.lower() + word[i + 1:]
        if ch.isdigit():
            return word
    return word


def match_case(original: str, replacement: str) -> str:
    """``replacement`` cased like ``original``: ALL CAPS stays so, a capital initial stays."""
    if len(original) > 1 and original.isupper():
        return replacement.upper()
    if original[:1].isupper():
        return capitalise_first(replacement)
    return replacement
