"""Shared set-up of the Space tests: a tiny adversarial dataset folder built from the demo."""

from __future__ import annotations

from pathlib import Path

TINY_TESTS = "truncation"
TINY_SEEDS = (1,)
TINY_ROWS = 3


def build_tiny_dataset(out: Path) -> Path:
    """The builder's real output on the first demo summarization rows: one test, one seed."""
    from blindspot.datasets_scripts.build_adversarial import build_adversarial_dataset

    return build_adversarial_dataset("demo", "summarization", out, tests=TINY_TESTS,
                                     seeds=TINY_SEEDS, limit=TINY_ROWS, name="tiny-demo")
