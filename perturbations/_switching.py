"""Shared machinery of the blind-spots switching tests (sentence, named-entity, verb, noun).

A switching test picks K random pairs of units (sentences, entities, verbs, nouns) and swaps
them. Swaps compose: the state is a permutation ``perm`` where position ``p`` now holds the unit
that was at ``perm[p]``. A pair whose two units read the same is never drawn (the swap would change
nothing); when no acceptable pair turns up in a few draws, that swap is skipped rather than
searched for exhaustively, which keeps a call cheap and its cost bounded. The pair just swapped is
not drawn again at once (it would undo the swap; the spec says so for sentences, and it holds
for every unit here).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import ClassVar, Generic, TypeVar

from blindspot.parsing import ParsedText, Token
from blindspot.perturbations.perturbation import Count, Perturbation, Row
from blindspot.perturbations.text_utils import capitalise_first, lowercase_first, replace_spans

#: accept(position_a, unit_moving_to_a, position_b, unit_moving_to_b) -> whether the swap is ok
Acceptor = Callable[[int, int, int, int], bool]

_DRAWS_PER_SWAP = 10


def other_index(rng: random.Random, n: int, i: int) -> int:
    """A uniform index in range(n) other than ``i`` (n >= 2)."""
    j = rng.randrange(n - 1)
    return j + (j >= i)


def _draw_pair(rng: random.Random, keys: Sequence[str], perm: list[int],
               previous: tuple[int, int] | None, accept: Acceptor | None,
               avoid_repeat: bool) -> tuple[int, int] | None:
    """One swappable pair of positions (i < j), or None after a few unlucky draws."""
    n = len(perm)
    for _ in range(_DRAWS_PER_SWAP):
        i = rng.randrange(n)
        j = other_index(rng, n, i)
        pair = (i, j) if i < j else (j, i)
        if avoid_repeat and pair == previous:
            continue
        if keys[perm[i]] == keys[perm[j]]:
            continue
        if accept is not None and not accept(i, perm[j], j, perm[i]):
            continue
        return pair
    return None


def swap_items(rng: random.Random, keys: Sequence[str], k: int, accept: Acceptor | None = None,
               avoid_repeat: bool = False) -> list[int]:
    """The permutation left by ``k`` random swaps of positions holding units with different keys.

    ``avoid_repeat`` forbids drawing the pair that was just swapped (it would undo the swap).
    """
    perm = list(range(len(keys)))
    if len(keys) < 2:
        return perm
    previous: tuple[int, int] | None = None
    for _ in range(k):
        pair = _draw_pair(rng, keys, perm, previous, accept, avoid_repeat)
        if pair is None:
            continue
        i, j = pair
        perm[i], perm[j] = perm[j], perm[i]
        previous = pair
    return perm


def fit_case(text: str, to_start: bool, from_start: bool, lowerable: bool) -> str:
    """A moved unit's text with its first letter fitted to its new place.

    Capitalised at a sentence start; lower-cased when it only had a capital because it used to
    start a sentence (``lowerable``: "Officials" -> "officials", but "NASA" stays).
    """
    if to_start:
        return capitalise_first(text)
    if from_start and lowerable:
        return lowercase_first(text)
    return text


def is_title_word(text: str) -> bool:
    """Whether only the first letter is upper-case ("Officials", not "NASA" or "iPhone")."""
    return text[:1].isupper() and text[1:] == text[1:].lower()


def starts_sentence(token: Token) -> bool:
    return token.sent_start or token.i == 0


@dataclass(frozen=True)
class Unit:
    """One switchable span of the text: where it is, what it says, how its case may change."""

    start: int  # character offsets in the parsed text
    end: int
    text: str
    key: str  # units with equal keys are never swapped with each other
    at_start: bool  # it starts a sentence
    lowerable: bool  # its capital is only due to the sentence start


#: the kind of unit a switching test finds (verbs carry their lemma and tag)
U = TypeVar("U", bound=Unit)


class UnitSwitching(Perturbation, Generic[U]):
    """Base of the tests that swap K random pairs of units found in the parse."""

    category: ClassVar[str] = "consistency"
    level_kind = Count(1)
    swap = True
    needs_parse = True

    def units(self, parsed: ParsedText) -> list[U]:
        """The switchable units of the text, in order."""
        raise NotImplementedError

    def accept(self, units: list[U], pos_a: int, item_a: int, pos_b: int, item_b: int) -> bool:
        """Whether units may move to the two positions (verb switching checks inflection)."""
        return True

    def realise(self, units: list[U], position: int, item: int) -> str:
        """The text that unit ``item`` takes at ``position``."""
        unit, place = units[item], units[position]
        return fit_case(unit.text, place.at_start, unit.at_start, unit.lowerable)

    def perturb(self, row: Row, level: int, rng: random.Random) -> str | None:
        if row.parsed is None:
            return None
        units = self.units(row.parsed)
        if len(units) <= 2:
            return None
        perm = swap_items(rng, [u.key for u in units], level, avoid_repeat=True,
                          accept=lambda a, ia, b, ib: self.accept(units, a, ia, b, ib))
        edits = [(units[p].start, units[p].end, self.realise(units, p, item))
                 for p, item in enumerate(perm) if item != p]
        return replace_spans(row.parsed.text, edits) if edits else None
