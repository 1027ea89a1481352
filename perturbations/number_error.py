"""Number error (MENLI adequacy attack).

MENLI: "We replace all numbers (except for those related to dates) in the sentence with random
numbers in the same format (e.g., integer to integer, decimal to decimal)". A number is a spaCy
token tagged ``CD`` that contains a digit and is not inside a DATE or TIME entity ("1980s",
"2008", "10 a.m." stay). Same format is taken literally: every digit is redrawn and everything
else is kept ("$2,000" -> "$7,351", "2.5" -> "9.1", "300%" -> "253%"), a leading digit stays
non-zero, and the new number always differs from the old. Numbers written as words ("three") are
not numbers in this sense. The level is "-".
"""

from __future__ import annotations

import random

from blindspot.parsing import Token
from blindspot.perturbations._menli import TokenEditAttack
from blindspot.perturbations.base import register

DATE_LABELS = frozenset({"DATE", "TIME"})


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
    aliases = ("num", "number", "change numbers", "number change")
    description = "Replace every non-date number by a random number of the same format."

    def new_text(self, token: Token, rng: random.Random) -> str | None:
        if token.tag != "CD" or token.ent_type in DATE_LABELS:
            return None
        if not any(c.isdigit() for c in token.text):
            return None
        return random_same_format(token.text, rng)
