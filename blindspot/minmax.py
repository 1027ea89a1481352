"""Min-max normalisation, written once: the range of a batch of scores and the linear map of a
score into [0, 1] by it.

MENLI's metric combination (``w * minmax(N) + (1 - w) * minmax(M)``: the preference protocol and
the MENLI scorer) and the deviation protocol's ``normalise=minmax`` both use it. The range is that
of the finite scores (NaN and infinities are left out of it); a missing score (None, NaN) stays
NaN; a batch of one value (range 0) maps to 0.0 everywhere.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Range:
    """The interval ``[low, high]`` a linear map sends to ``[0, 1]``."""

    low: float
    high: float

    @classmethod
    def of(cls, values: Iterable[float | None]) -> Range | None:
        """The range of the finite ``values``; None when there is none."""
        finite = [v for v in map(_number, values) if math.isfinite(v)]
        return cls(min(finite), max(finite)) if finite else None

    def scale(self, value: float | None) -> float:
        """``(value - low) / (high - low)``; 0.0 for an empty range, NaN for a missing value."""
        value = _number(value)
        if math.isnan(value):
            return math.nan
        span = self.high - self.low
        return (value - self.low) / span if span > 0 else 0.0


def minmax(values: Sequence[float | None]) -> list[float]:
    """``values`` min-max normalised over themselves (all NaN when none is finite)."""
    found = Range.of(values)
    if found is None:
        return [math.nan] * len(values)
    return [found.scale(v) for v in values]


def combine(first: Sequence[float | None], second: Sequence[float | None], weight: float, *,
            weight_name: str = "weight") -> list[float]:
    """MENLI's combination ``weight * minmax(first) + (1 - weight) * minmax(second)`` over one
    batch scored by two metrics (one score of each per row)."""
    if not 0.0 <= float(weight) <= 1.0:
        raise ValueError(f"{weight_name} must be in [0, 1], got {weight!r}")
    if len(first) != len(second):
        raise ValueError(f"the two metrics must score the same batch (one score of each per row): "
                         f"{len(first)} and {len(second)} scores")
    w = float(weight)
    return [w * a + (1 - w) * b for a, b in zip(minmax(first), minmax(second), strict=True)]


def _number(value: float | None) -> float:
    return math.nan if value is None else float(value)
