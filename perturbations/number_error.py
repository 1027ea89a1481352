"""Number error (MENLI adequacy attack).

MENLI: "We replace all numbers (except for those related to dates) in the sentence with random
numbers in the same format (e.g., integer to integer, decimal to decimal)". A number is a spaCy
token tagged ``CD`` that contains a digit; it is left alone when it is part of a date or a time:
written with ":" or "/" ("21:30", "12/05/2020"), or inside a DATE/TIME entity and either
year-like ("2008", "1980s") or next to a calendar word ("May 5", "10 a.m."). spaCy also labels
durations and ages DATE ("70 years later", "in 33 days"); those are quantities, not dates, and
MENLI's own set changes them ("70 years" -> "53 years"), so they are changed here too. List
markers ("1." tagged LS) and numbers written as words ("three") are not numbers in this sense.
Same format is taken literally: every digit is redrawn and everything else is kept ("$2,000" ->
"$7,351", "2.5" -> "9.1", "300%" -> "253%"), a leading digit stays non-zero, and the new number
always differs from the old. The level is "-".
"""

from __future__ import annotations

import random
import re

from blindspot.parsing import ParsedText, Token
from blindspot.perturbations._menli import TokenEditAttack
from blindspot.perturbations.perturbation import register

DATE_LABELS = frozenset({"DATE", "TIME"})
#: a clock time or a written date ("21:30", "12/05/2020")
DATE_MARKS = frozenset(":/")
_YEAR = re.compile(r"(1\d|20|21)\d\d(s|'s)?")
CALENDAR_WORDS = frozenset(
    "january february march april may june july august september october november december "
    "jan feb mar apr jun jul aug sep sept oct nov dec monday tuesday wednesday thursday friday "
    "saturday sunday a.m. p.m. am pm o'clock noon midnight bc ad".split())


def random_same_format(number: str, rng: random.Random) -> str:
    """``number`` with its digits redrawn in place, always changed.

    The leading digit stays non-zero when it was ("300" -> "253", never "053"), and a leading
    zero before other digits stays ("0.5" -> "0.3").
    """
    positions = [i for i, ch in enumerate(number) if ch.isdigit()]
    if number[positions[0]] == "0" and len(positions) > 1:
        positions = positions[1:]
    lead = positions[0] if number[positions[0]] != "0" and positions[0] == _first_digit(number) \
        else None
    chars = list(number)
    for i in positions:
        chars[i] = str(rng.randrange(1, 10) if i == lead else rng.randrange(10))
    if "".join(chars) == number:  # redraw the last digit among the other allowed ones
        last = positions[-1]
        low = 1 if last == lead else 0
        chars[last] = rng.choice([str(d) for d in range(low, 10) if str(d) != number[last]])
    return "".join(chars)


def _first_digit(text: str) -> int:
    return next(i for i, ch in enumerate(text) if ch.isdigit())


@register
class NumberError(TokenEditAttack):
    name = "number_error"
    menli_error = "num"
    aliases = ("num", "number", "change numbers", "number change")
    description = "Replace every non-date number by a random number of the same format."

    def new_text(self, parsed: ParsedText, token: Token, rng: random.Random) -> str | None:
        return random_same_format(token.text, rng) if is_number(parsed, token) else None


def is_number(parsed: ParsedText, token: Token) -> bool:
    """Whether ``token`` is a number this attack changes: tagged CD, with a digit, no date."""
    if token.tag != "CD" or not any(c.isdigit() for c in token.text):
        return False
    return not (DATE_MARKS & set(token.text) or is_calendar_number(parsed, token))


def is_calendar_number(parsed: ParsedText, token: Token) -> bool:
    """Whether a number in a DATE/TIME entity is a year or sits next to a calendar word."""
    if token.ent_type not in DATE_LABELS:
        return False
    if _YEAR.fullmatch(token.text):
        return True
    span = next(((s, e) for s, e, label in parsed.ents if s <= token.i < e), (token.i, token.i + 1))
    return any(t.text.lower() in CALENDAR_WORDS for t in parsed.tokens[span[0]:span[1]])
