""""Did you mean ...?" for every "unknown X" message: one helper, so every message suggests alike.

A misspelt test, metric, task, column or protocol gets the closest valid names (difflib's ratio,
case-insensitive) appended to its message; nothing when no valid name is close.
"""

from __future__ import annotations

from collections.abc import Iterable
from difflib import SequenceMatcher, get_close_matches

#: how many suggestions a message names, how close (difflib ratio) each must be, and how much
#: less close than the best one a second may be
MAX_SUGGESTIONS = 2
CUTOFF = 0.6
RUNNER_UP = 0.05


def close_names(given: str, valid: Iterable[str]) -> list[str]:
    """The valid names closest to ``given`` (best first), compared without case."""
    by_key: dict[str, str] = {}
    for name in valid:
        by_key.setdefault(str(name).lower(), str(name))
    key = str(given).strip().lower()
    found = get_close_matches(key, list(by_key), n=MAX_SUGGESTIONS, cutoff=CUTOFF)
    ratios = [SequenceMatcher(None, key, name).ratio() for name in found]
    return [by_key[name] for name, ratio in zip(found, ratios, strict=True) if ratio >= ratios[0] - RUNNER_UP]


def did_you_mean(given: str, valid: Iterable[str]) -> str:
    """``"; did you mean 'truncation'?"`` to end an "unknown X" message, or ``""``."""
    found = close_names(given, valid)
    if not found:
        return ""
    return "; did you mean " + " or ".join(repr(name) for name in found) + "?"
