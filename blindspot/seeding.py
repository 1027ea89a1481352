"""Per-row random streams: one rule for every entry point.

The rule: a row's random stream is derived from ``(seed, test, level, text)`` alone, where
``text`` is the text the test perturbs (the gold hypothesis), character for character. Nothing
else enters it: not the row's id, not its position, not a stream shared across the corpus. So a
row's noise does not depend on row order, batch or chunk size, the number of processes, the
engine (local or Ray), the entry point (``blindspot run``, ``run_blindspot``, the ``blindspot``
evaluate module's ``compute``, the Space) or on which other rows exist.

Why the text and not the id column: ids are optional (``compute(predictions=...)`` and the Space
often have none, and a text hash stood in for them there), so keying on ids gave the same rows
different noise depending on whether an id column was given. The text is always there.

Duplicates: two rows with the same text get the same noise, on purpose. Telling them apart would
need their position or an occurrence count, which streaming, sharding and filtering change; and a
duplicated gold adds no new sample to perturb (its gold score is the same too). A row's noise is
thus a pure function of its text (keyed on the text's SHA-1, :func:`text_row_id`), reproducible
one row at a time (``Perturbation.apply``).

Changing this rule changes the random tests' outputs, so results.json: rows that have an id
column got a new stream when the rule moved from ids to texts (data without ids kept theirs).
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


def text_row_id(text: str | None) -> str:
    """The SHA-1 of a text, ``"sha1:<hex>"``: what a row's stream is keyed on, and its id when
    the data has no id column."""
    return "sha1:" + hashlib.sha1((text or "").encode("utf-8")).hexdigest()


def row_rng(seed: int, perturbation: str, level: str, text: str | None) -> random.Random:
    """The random stream of the row whose perturbed text is ``text`` (the rule above)."""
    return random.Random(row_key(seed, perturbation, level, text_row_id(text)))


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
