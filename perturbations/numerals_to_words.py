"""Numerals to words (Sai et al. 2021, invariance template, Table 5: "trapped for 127 hours" ->
"trapped for one hundred twenty seven hours"): the score must NOT drop.

Every standalone whole number (digits, optionally with thousands commas: "2", "127", "1,500")
is spelled out with num2words ("one hundred and twenty-seven"). Numbers glued to other
characters (decimals "2.5", times "10:30", ratios "1/2", "0-0" scores, "4G", "$5m") are left as
they are: spelling half of them would change the meaning. Deterministic.
"""

from __future__ import annotations

import random
import re

from num2words import num2words

from blindspot.perturbations._checklist import CATEGORY, NO_LEVEL, PAPER
from blindspot.perturbations.perturbation import NoLevel, Perturbation, Row, register

_NUMBER = re.compile(r"(?<![\w.,:/$£€-])(\d{1,3}(?:,\d{3})+|\d+)(?![\w:/%-]|[.,]\d)")


def spell_numbers(text: str) -> str:
    """``text`` with every standalone whole number written in words."""
    return _NUMBER.sub(lambda m: num2words(int(m.group(1).replace(",", ""))), text)


@register
class NumeralsToWords(Perturbation):
    name = "numerals_to_words"
    aliases = ("numbers to words",)
    category = CATEGORY
    paper = PAPER
    description = "Write standalone numbers in words: 127 -> one hundred and twenty-seven."
    level_kind = NoLevel()
    levels = NO_LEVEL
    deterministic = True

    def perturb(self, row: Row, level: str, rng: random.Random) -> str | None:
        return spell_numbers(row.text)
