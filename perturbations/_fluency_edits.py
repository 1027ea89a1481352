"""Edits shared by the fluency tests: random picks, whitespace words, token removal, casing.

The helpers keep every character a test does not touch (newlines, tabs, double spaces) and only
re-capitalise a word that a test's own edit turned into a sentence start: a whole-text
re-capitalisation would also "fix" lower-case sentence starts of the gold (e.g. "D. balearoibericus"
in WikiText) and count them as noise.
"""

from __future__ import annotations

import bisect
import math
import operator
import random
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from blindspot.parsing import ParsedText, Token
from blindspot.perturbations.perturbation import TASKS, Level
from blindspot.perturbations.text_utils import capitalise_first, replace_spans

T = TypeVar("T")

_WORD_AND_SPACE = re.compile(r"(\S+)(\s*)")
#: a whitespace word that ends a sentence: . ! ? (or an ellipsis), then closing quotes/brackets
_SENTENCE_END = re.compile(r"[.!?\u2026][\"'\u201d\u2019)\]]*$")
_OPENERS = frozenset("([{\"'\u201c\u2018")
_CLOSERS = frozenset(",.;:!?)]}%\u201d")
_NOT_WORDS = frozenset({"PUNCT", "SPACE"})

#: the paper's levels of token drop and repeated token: p = 0.05, 0.10, ..., 0.50
RATIOS_5_TO_50 = (0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5)


def every_task(levels: tuple[Level, ...]) -> dict[str, tuple[Level, ...]]:
    """The same paper levels for all four tasks."""
    return dict.fromkeys(TASKS, levels)


def count_of(n: int, p: float) -> int:
    """ceil(n * p), immune to float noise (10 * 0.3 is 3, not 4)."""
    return math.ceil(round(n * p, 9))


def floor_count_of(n: int, p: float) -> int:
    """floor(n * p), immune to float noise (100 * 0.29 is 29, not 28)."""
    return math.floor(round(n * p, 9))


def words_and_count(text: str, p: float, spare: int) -> tuple[Words, int]:
    """The text's whitespace words and how many to edit: min(ceil(n*p), n - spare), at least 0."""
    words = Words.of(text)
    n = len(words.words)
    return words, max(0, min(count_of(n, p), n - spare))


def pick_each(items: Iterable[T], p: float, rng: random.Random) -> list[T]:
    """Each item independently with probability p (``rng.random() < p``, so p = 1 picks all)."""
    return [item for item in items if rng.random() < p]


# -- whitespace words -----------------------------------------------------------------------------

@dataclass
class Words:
    """A text as whitespace words, each with the whitespace that follows it.

    ``words`` is exactly ``text.split()``, the unit of the paper's noise ratio; ``lead`` and
    ``spaces`` keep the original whitespace so untouched parts of the text come back verbatim.
    ``spaces`` is None for the common single-spaced text (the words joined by " "), which keeps
    splitting and joining a paragraph to a few microseconds.
    """

    words: list[str]
    spaces: list[str] | None = None
    lead: str = ""

    @classmethod
    def of(cls, text: str) -> Words:
        words = text.split()
        if " ".join(words) == text:
            return cls(words)
        pairs = _WORD_AND_SPACE.findall(text)
        lead = text[: len(text) - len(text.lstrip())]
        return cls([w for w, _ in pairs], [s for _, s in pairs], lead)

    def text(self) -> str:
        if self.spaces is None:
            return " ".join(self.words)
        return self.lead + "".join(map(operator.add, self.words, self.spaces))

    def starts_sentence(self, i: int) -> bool:
        """Whether word ``i`` opens a sentence (first word, or after . ! ?)."""
        return i == 0 or _SENTENCE_END.search(self.words[i - 1]) is not None

    def without(self, drop: set[int], recapitalise: bool = False) -> str:
        """The text without the words at ``drop`` (each with its following whitespace).

        With ``recapitalise``, when a dropped capitalised word opened a sentence, the next kept
        word gets its capital ("The cat" -> "Cat").
        """
        n = len(self.words)
        keep = [i for i in range(n) if i not in drop]
        words = [self.words[i] for i in keep]
        if recapitalise:
            for j in self._capitalised_after(drop, keep):
                words[j] = capitalise_first(words[j])
        if self.spaces is None:
            return " ".join(words)
        spaces = [self.spaces[i] for i in keep]
        if spaces and n - 1 in drop:
            spaces[-1] = self.spaces[-1]
        return Words(words, spaces, self.lead).text()

    def _capitalised_after(self, drop: set[int], keep: list[int]) -> list[int]:
        """Positions in ``keep`` of the words that follow a dropped capitalised sentence start."""
        starts = [i for i in drop if self.words[i][:1].isupper() and self.starts_sentence(i)]
        if not starts:
            return []
        return sorted({j for j in (bisect.bisect_right(keep, i) for i in starts) if j < len(keep)})


# -- spaCy tokens ---------------------------------------------------------------------------------

def starts_sentence(tokens: Sequence[Token], i: int) -> bool:
    """Whether token ``i`` opens its sentence, ignoring opening punctuation and whitespace."""
    j = i
    while not tokens[j].sent_start and j > 0 and tokens[j - 1].pos in _NOT_WORDS:
        j -= 1
    return tokens[j].sent_start or j == 0


def _gap(before: Token, run: Sequence[Token], after: Token) -> str:
    """Whitespace between two kept tokens once the tokens of ``run`` between them are gone.

    "went to the" -> "went the"; "did n't go" -> "did go" (the space moves to the left token);
    "( the )" and "at ?" close up.
    """
    if not before.ws and before.text[-1:] in _OPENERS:
        return ""
    if not run[-1].ws and after.text[:1] in _CLOSERS:
        return ""
    return next((t.ws for t in (before, *run) if t.ws), "")


def _runs(indices: Iterable[int]) -> list[tuple[int, int]]:
    """Sorted indices grouped into consecutive [first, last] runs."""
    runs: list[tuple[int, int]] = []
    for i in sorted(indices):
        if runs and runs[-1][1] == i - 1:
            runs[-1] = (runs[-1][0], i)
        else:
            runs.append((i, i))
    return runs


def _next_word(tokens: Sequence[Token], i: int, drop: set[int]) -> Token | None:
    """The first kept token after ``i`` that is a word (not punctuation or whitespace)."""
    for tok in tokens[i + 1:]:
        if tok.i not in drop and tok.pos not in _NOT_WORDS:
            return tok
    return None


def remove_tokens(parsed: ParsedText, drop: set[int]) -> str | None:
    """``parsed.text`` without the spaCy tokens at ``drop``; None when no word would be left.

    A removed token takes the whitespace around it along (see :func:`_gap`), and a word that
    becomes a sentence start because its capitalised predecessors went is capitalised.
    """
    tokens, text = parsed.tokens, parsed.text
    if not drop:
        return text
    edits: list[tuple[int, int, str]] = []
    for first, last in _runs(drop):
        before = tokens[first - 1] if first > 0 else None
        after = tokens[last + 1] if last + 1 < len(tokens) else None
        if before is None and after is None:
            return None
        start = before.idx + len(before.text) if before else tokens[first].idx
        end = after.idx if after else len(text)
        if before is None:
            gap = ""
        elif after is None:
            gap = tokens[last].ws
        else:
            gap = _gap(before, tokens[first:last + 1], after)
        edits.append((start, end, gap))
        if any(tokens[i].text[:1].isupper() and starts_sentence(tokens, i)
               for i in range(first, last + 1)):
            word = _next_word(tokens, last, drop)
            if word is not None and capitalise_first(word.text) != word.text:
                edits.append((word.idx, word.idx + len(word.text), capitalise_first(word.text)))
    out = replace_spans(text, edits)
    if 0 in drop:  # the text began with a removed token: it begins with the next word now
        out = out.lstrip()
    return out if out else None


def parse_of(text: str, parsed: ParsedText | None) -> ParsedText | None:
    """The parse when it belongs to ``text`` (a stale or missing parse means: do not perturb)."""
    return parsed if parsed is not None and parsed.text == text and parsed.tokens else None


def remove_random_tokens(text: str, parsed: ParsedText | None, chosen: Callable[[Token], bool],
                         p: float, rng: random.Random) -> str | None:
    """``text`` with each spaCy token for which ``chosen`` holds dropped with probability p.

    None when there is no usable parse, nothing was dropped, or nothing would be left.
    """
    parsed = parse_of(text, parsed)
    if parsed is None:
        return None
    drop = set(pick_each((t.i for t in parsed.tokens if chosen(t)), p, rng))
    return remove_tokens(parsed, drop) if drop else None
