"""Min-max normalisation, written once (blindspot.minmax) and shared by the preference
protocol's combination, the MENLI scorer's and the deviation protocol's normalise=minmax."""

from __future__ import annotations

import math

from blindspot.minmax import Range, combine, minmax
from blindspot.protocols import deviation, preference
from blindspot.scorers import menli


def test_minmax_by_hand() -> None:
    assert minmax([2.0, 4.0, 3.0]) == [0.0, 1.0, 0.5]
    assert minmax([5.0, 5.0]) == [0.0, 0.0]  # range 0: everything 0
    low, high, missing = minmax([1.0, 3.0, math.nan])[0], minmax([1.0, 3.0, None])[1], \
        minmax([1.0, 3.0, None])[2]
    assert (low, high) == (0.0, 1.0) and math.isnan(missing)
    assert minmax([math.inf, 2.0, 6.0])[1:] == [0.0, 1.0]  # an infinity is no bound
    assert all(math.isnan(v) for v in minmax([math.nan, None]))
    assert Range.of([math.nan]) is None and Range(2.0, 6.0).scale(5.0) == 0.75


def test_every_caller_uses_the_one_function() -> None:
    assert preference.minmax is minmax and preference.combine is combine
    assert menli.combine_minmax is combine  # the MENLI scorer's combine: MENLI's default weight
    scores = [-80.0, -20.0, -50.0, math.nan]
    norm = deviation.normaliser("minmax", None, scores)
    assert norm == {"method": "minmax", "low": -80.0, "high": -20.0}
    assert [deviation.normalise(v, norm) for v in scores[:3]] == minmax(scores)[:3] == \
        [0.0, 1.0, 0.5]
