"""Positioned error (blind-spots paper, targeted test, §5.1 and Appendix C).

MAUVE embeds a text by the feature of its final token, so a feature model that mostly attends to
the near history (GPT-2) can miss errors far from the end. The test corrupts a window of 10
consecutive tokens of the causal LM's tokenization at the start (index 0), the middle
(max(0, L//2 - 5)) or the end (L - 10), either with 10 random vocabulary ids or by shuffling the
ids inside the window, and decodes the result. Levels: ``{start,middle,end}-{random,shuffle}``;
the paper runs the six on WikiText (open-ended generation) only.

Ambiguities resolved:
- Random ids are drawn uniformly, with replacement, from the whole vocabulary (added tokens
  included) minus every special token (EOS, BOS, chat and other added special tokens).
- A text of fewer than 10 tokens has one window: all of its tokens, at every position.
- A shuffle that happens to give back the same order is drawn again (at most 20 times) so that a
  window with two different ids always changes; a window of one repeated id cannot, and the row
  is left unchanged (not applied). Shuffle levels count as swaps for the noise ratio.
- The text is encoded without special tokens and decoded with ``clean_up_tokenization_spaces``
  off, so the text outside the window comes back as it was.
"""

from __future__ import annotations

import functools
import os
import random
from typing import Any

from blindspot.models import load_tokenizer
from blindspot.perturbations.perturbation import Choice, Perturbation, Row, register

WINDOW = 10
POSITIONS = ("start", "middle", "end")
MODES = ("random", "shuffle")
LEVELS = tuple(f"{p}-{m}" for p in POSITIONS for m in MODES)
_SHUFFLE_TRIES = 20


def window_bounds(position: str, length: int, width: int = WINDOW) -> tuple[int, int]:
    """[start, end) of the corrupted window in a text of ``length`` tokens."""
    if position == "start":
        start = 0
    elif position == "middle":
        start = max(0, length // 2 - width // 2)
    elif position == "end":
        start = length - width
    else:
        raise ValueError(f"unknown position {position!r}; choose one of {POSITIONS}")
    start = max(0, min(start, length - width))
    return start, min(length, start + width)


def shuffled(window: list[int], rng: random.Random) -> list[int] | None:
    """The window's ids in a new random order (None when no order differs)."""
    if len(set(window)) < 2:
        return None
    out = list(window)
    for _ in range(_SHUFFLE_TRIES):
        rng.shuffle(out)
        if out != window:
            return out
    return None


def corrupt_ids(ids: list[int], position: str, mode: str, rng: random.Random,
                vocabulary: tuple[int, ...]) -> list[int] | None:
    """``ids`` with its window at ``position`` replaced (``random``) or shuffled (``shuffle``)."""
    if not ids:
        return None
    start, end = window_bounds(position, len(ids))
    window = ids[start:end]
    if mode == "shuffle":
        new = shuffled(window, rng)
    else:
        new = [vocabulary[rng.randrange(len(vocabulary))] for _ in window]
    return None if new is None else ids[:start] + new + ids[end:]


def special_ids(tokenizer: Any) -> set[int]:
    """Every special token id of ``tokenizer``: the named ones and added tokens marked special."""
    out = set(tokenizer.all_special_ids)
    decoder = getattr(tokenizer, "added_tokens_decoder", {}) or {}
    out.update(i for i, token in decoder.items() if getattr(token, "special", False))
    return out


@functools.lru_cache(maxsize=8)
def replacement_vocabulary(name: str) -> tuple[int, ...]:
    """Ids a random replacement may use: the tokenizer's whole vocabulary minus special tokens."""
    tokenizer = load_tokenizer(name)
    banned = special_ids(tokenizer)
    return tuple(i for i in range(len(tokenizer)) if i not in banned)


@register
class PositionedError(Perturbation):
    name = "positioned_error"
    aliases = ("positioned error test",)
    category = "targeted"
    description = ("Replace 10 consecutive LM tokens at the start, middle or end with random "
                   "vocabulary tokens, or shuffle them in place.")
    level_kind = Choice(LEVELS)
    levels = {"open_ended": LEVELS}
    requires = ("lm",)
    #: §5.1: an error at every position must cost a significant drop
    verdict_rule = "per_position_drop"

    def __init__(self, task: str | None = None, **resources: Any) -> None:
        super().__init__(task, **resources)
        self._lm = os.fspath(self.resources["lm"])  # a Hub id, a folder or a short name

    def preload(self) -> None:
        """Load the tokenizer and its vocabulary now (a run does, before its first row, so a
        model that cannot load fails there; a run whose perturbations are cached loads none)."""
        replacement_vocabulary(self._lm)

    def is_swap(self, level: str) -> bool:
        return level.endswith("-shuffle")

    def perturb(self, row: Row, level: str, rng: random.Random) -> str | None:
        tokenizer = load_tokenizer(self._lm)
        ids = tokenizer.encode(row.text, add_special_tokens=False, verbose=False)
        position, mode = level.split("-")
        new = corrupt_ids(ids, position, mode, rng, replacement_vocabulary(self._lm))
        if new is None:
            return None
        return tokenizer.decode(new, clean_up_tokenization_spaces=False)
