"""From a judge's reply to a grade: the parsed grade, and the probability-weighted grade.

G-Eval's form (Liu et al., 2023): the score is ``sum_g g * p(g)`` over the grades of the scale,
``p`` being the judge's next-token probabilities of the grade tokens renormalised over them, so
that two summaries the judge would both grade 3 are still told apart by how sure it is. Where
only the reply's text is known (a server that returns no log-probabilities), the grade is the
first whole number of the scale in the reply.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

#: a whole number standing alone (not part of a longer number or a word)
_NUMBER = re.compile(r"(?<![\w.])(\d+)(?![\w]|\.\d)")


class NoGradeError(ValueError):
    """A judge's reply holds no grade of its scale: the row cannot be scored (never a 0)."""


def parse_grade(reply: str, grades: Sequence[int]) -> int | None:
    """The first whole number in ``reply`` that is a grade of the scale, None when none is."""
    for match in _NUMBER.finditer(reply):
        value = int(match.group(1))
        if value in grades:
            return value
    return None


def no_grade(reply: str, grades: Sequence[int], hypothesis: str, where: str = "") -> NoGradeError:
    """The error of a reply with no grade, naming the row (its hypothesis) and the reply
    (``where``: in what the grade was looked for, when not the reply's text)."""
    return NoGradeError(f"the judge's reply to the row whose hypothesis starts "
                        f"{hypothesis[:60]!r} holds no grade from {grades[0]} to {grades[-1]}"
                        f"{where}: {reply[:200]!r}")


def require_grade(reply: str, grades: Sequence[int], hypothesis: str) -> int:
    """The reply's grade, or a :class:`NoGradeError` naming the row (its hypothesis) and the
    reply."""
    grade = parse_grade(reply, grades)
    if grade is None:
        raise no_grade(reply, grades, hypothesis)
    return grade


@dataclass(frozen=True)
class Weighted:
    """The probability-weighted grade, the most probable grade, and the probability mass the
    judge put on the grade tokens at all (low: it wanted to say something else)."""

    score: float
    grade: int
    mass: float


def weighted_grade(probabilities: Mapping[int, float]) -> Weighted | None:
    """G-Eval's weighted grade from each grade's probability (None when they are all 0)."""
    mass = sum(probabilities.values())
    if mass <= 0 or math.isnan(mass):
        return None
    score = sum(g * p for g, p in probabilities.items()) / mass
    best = max(sorted(probabilities), key=lambda g: probabilities[g])
    return Weighted(score, best, mass)


def grade_probabilities(top_logprobs: Mapping[str, float], grades: Sequence[int]
                        ) -> dict[int, float]:
    """Each grade's probability from a server's top log-probabilities of one position (token
    text -> log-probability); a grade missing from the top list counts 0."""
    found = {g: 0.0 for g in grades}
    for token, logprob in top_logprobs.items():
        text = token.strip()
        if text.isdigit() and int(text) in found:
            found[int(text)] += math.exp(logprob)
    return found
