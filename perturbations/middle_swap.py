"""Middle swap (blind-spots paper, fluency; Table 16 "Middle Swap").

In K random spaCy sentences (all of them when the text has fewer than K that can be swapped), the
sentence's whitespace words are cut at ceil(len / 2) and the second half is moved before the
first: "She went to the office." -> "The office she went to." (the spec's ceil cut; the paper's
example "To the office she went." cuts at floor, the spec is followed). Repairs, as the spec asks:

- the sentence's final punctuation (". ! ?", with closing quotes) stays at the end, and is not
  counted as a word when cutting;
- a comma, semicolon or colon that would now end the sentence or open it is removed;
- a sentence-initial function word that moved (spaCy POS DET, PRON, ADP, CCONJ, SCONJ, AUX, PART,
  ADV; not "I" nor an all-capitals word) is lower-cased;
- the new sentence start is capitalised; the swapped sentence's words are joined by single spaces,
  the whitespace around the sentence is kept.

Sentences are spaCy's, trimmed of whitespace tokens (``sentence_token_ranges``); a sentence needs
two words besides a punctuation-only last word to be swapped.

A sentence is one edit however long: the test is a swap, so its noise ratio is halved.
"""

from __future__ import annotations

import math
import random
import re
from collections.abc import Sequence

from blindspot.parsing import Token
from blindspot.perturbations._fluency_edits import parse_of
from blindspot.perturbations.text_utils import capitalise_first, lowercase_first
from blindspot.perturbations.base import Count, Perturbation, Row, register
from blindspot.perturbations.text_utils import char_span, replace_spans, sentence_token_ranges

_TERMINAL = re.compile(r"[.!?\u2026]+[\"'\u201d\u2019)\]]*$")
_INNER_MARKS = ",;:"
_FINAL_MARKS = re.compile(r"[,;:]+(?=[\"'\u201d\u2019)\]]*$)")
_FUNCTION_POS = frozenset({"DET", "PRON", "ADP", "CCONJ", "SCONJ", "AUX", "PART", "ADV"})
_PARAGRAPH_LEVELS = (1, 2, 3)


def _split_terminal(words: list[str]) -> tuple[list[str], str, str]:
    """The words without the final punctuation, that punctuation, and the space before it."""
    match = _TERMINAL.search(words[-1])
    if match is None:
        return words, "", ""
    if match.start() == 0:
        return words[:-1], match.group(), " "
    return words[:-1] + [words[-1][: match.start()]], match.group(), ""


def _swappable(sentence: str) -> bool:
    """Whether the sentence has two words besides a final punctuation-only word."""
    words = sentence.split()
    return bool(words) and len(_split_terminal(words)[0]) >= 2


def _lowers_when_moved(tokens: Sequence[Token]) -> bool:
    """Whether the sentence's first word is a function word to lower-case once it moves."""
    first = next((t for t in tokens if t.pos not in ("PUNCT", "SPACE")), None)
    return first is not None and _is_function_word(first)


def _is_function_word(tok: Token) -> bool:
    """A determiner, pronoun, preposition... that is not "I" nor an acronym."""
    return tok.pos in _FUNCTION_POS and tok.text != "I" and not (len(tok.text) > 1
                                                                and tok.text.isupper())


def _trim_marks(words: list[str], at_end: bool) -> list[str]:
    """``words`` without the commas/semicolons/colons at its end (or its start)."""
    words = list(words)
    index = -1 if at_end else 0
    while words:
        word = (_FINAL_MARKS.sub("", words[index]) if at_end
                else words[index].lstrip(_INNER_MARKS))
        if word:
            words[index] = word
            break
        words.pop(index)
    return words


def swap_halves(sentence: str, lower_first: bool) -> str | None:
    """One sentence (no outer whitespace) with its halves swapped; None under two words."""
    words = sentence.split()
    if not words:
        return None
    words, terminal, joiner = _split_terminal(words)
    if len(words) < 2:
        return None
    cut = math.ceil(len(words) / 2)
    first, second = words[:cut], words[cut:]
    if lower_first:
        first[0] = lowercase_first(first[0])
    moved = _trim_marks(second, at_end=False) + _trim_marks(first, at_end=True)
    if not moved:
        return None
    moved[0] = capitalise_first(moved[0])
    return " ".join(moved) + joiner + terminal


def middle_swap(row: Row, k: int, rng: random.Random) -> str | None:
    """The row's text with the halves of K random sentences swapped (None: no sentence can be)."""
    parsed = parse_of(row.text, row.parsed)
    if parsed is None:
        return None
    text, tokens = parsed.text, parsed.tokens
    sentences = [(char_span(tokens, first, end), first, end)
                 for first, end in sentence_token_ranges(parsed)]
    candidates = [s for s in sentences if _swappable(text[s[0][0]:s[0][1]])]
    edits = []
    for (start, end), first, last in rng.sample(candidates, min(k, len(candidates))):
        new = swap_halves(text[start:end], _lowers_when_moved(tokens[first:last]))
        if new is not None:
            edits.append((start, end, new))
    return replace_spans(text, edits) if edits else None


@register
class MiddleSwap(Perturbation):
    name = "middle_swap"
    category = "fluency"
    description = "In K random sentences, move the second half of the words before the first."
    level_kind = Count(1)
    whitespace_words = True
    levels = {"summarization": _PARAGRAPH_LEVELS, "translation": (1,),
              "translation_paragraph": _PARAGRAPH_LEVELS, "open_ended": _PARAGRAPH_LEVELS}
    swap = True
    needs_parse = True

    def perturb(self, row: Row, level: int, rng: random.Random) -> str | None:
        return middle_swap(row, level, rng)
