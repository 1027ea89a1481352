"""Per-row random streams.

A row's stream is derived from (seed, perturbation, level, row id) alone, never from a stream
shared across the corpus, so a row's output does not depend on row order, batch size, the
number of processes, or which other rows exist.
"""

from __future__ import annotations

import hashlib
import numbers
import random
import re
from collections.abc import Iterable


def row_key(*parts: object) -> int:
    """A 64-bit integer that is a stable hash of ``parts`` (stable across processes and runs)."""
    text = "\x1f".join(str(p) for p in parts)
    return int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "big")


def row_rng(seed: int, perturbation: str, level: str, row_id: object) -> random.Random:
    """The random stream of one row for one perturbation, level and seed."""
    return random.Random(row_key(seed, perturbation, level, row_id))


#: Seeds are stored as 64-bit integers (the suite's ``seed`` column): the accepted range.
SEED_RANGE = (0, 2**63 - 1)
_WHOLE = re.compile(r"[+-]?[0-9]+")


def _seed(value: object, option: str, given: object) -> int:
    if isinstance(value, str) and _WHOLE.fullmatch(value.strip()):
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ValueError(f"{option} must be whole numbers (comma-separated in a string), "
                         f"got {given!r}")
    if not SEED_RANGE[0] <= int(value) <= SEED_RANGE[1]:
        raise ValueError(f"{option}: seed {int(value)} is out of range; seeds are whole numbers "
                         f"from {SEED_RANGE[0]} to {SEED_RANGE[1]} (2**63 - 1)")
    return int(value)


def parse_seeds(seeds: str | int | Iterable[int], option: str = "--seeds") -> list[int]:
    """The seeds of a run, with one meaning everywhere (CLI, ``compute``, Space, dataset
    builder): ``"1,2, 3"``, ``3`` or ``[1, 2, 3]``; a clear error naming ``option`` for anything
    else (``"12"`` is seed 12, never seeds 1 and 2).

        >>> parse_seeds("1,2, 3"), parse_seeds(12), parse_seeds("12"), parse_seeds((4, 5))
        ([1, 2, 3], [12], [12], [4, 5])
    """
    if isinstance(seeds, str):
        items: list[object] = [s.strip() for s in seeds.split(",") if s.strip()]
    elif isinstance(seeds, Iterable):
        items = list(seeds)
    else:
        items = [seeds]
    chosen = [_seed(item, option, seeds) for item in items]
    if not chosen:
        raise ValueError(f"{option} is empty; give at least one seed, e.g. {option} 1,2,3,4,5")
    return chosen
