"""Per-row random streams.

A row's stream is derived from (seed, perturbation, level, row id) alone, never from a stream
shared across the corpus, so a row's output does not depend on row order, batch size, the
number of processes, or which other rows exist.
"""

from __future__ import annotations

import hashlib
import random


def row_key(*parts: object) -> int:
    """A 64-bit integer that is a stable hash of ``parts`` (stable across processes and runs)."""
    text = "\x1f".join(str(p) for p in parts)
    return int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "big")


def row_rng(seed: int, perturbation: str, level: str, row_id: object) -> random.Random:
    """The random stream of one row for one perturbation, level and seed."""
    return random.Random(row_key(seed, perturbation, level, row_id))


def parse_seeds(text: str, option: str = "--seeds") -> list[int]:
    """``"1,2, 3"`` as ``[1, 2, 3]``; a clear error naming ``option`` for anything else."""
    try:
        seeds = [int(s) for s in str(text).split(",") if s.strip()]
    except ValueError:
        raise ValueError(f"{option} must be comma-separated whole numbers, got {text!r}") from None
    if not seeds:
        raise ValueError(f"{option} is empty; give at least one seed, e.g. {option} 1,2,3,4,5")
    return seeds
