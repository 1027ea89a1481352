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


def write_menli_slice(path: Path, per_type: int = 2) -> Path:
    """The first ``per_type`` rows of every error type of the shipped MENLI set (WMT20_de),
    written as a CSV of the same columns: 24 rows for the 12 types with 2 each."""
    import csv

    from conftest import SHARED_DATA

    with open(SHARED_DATA / "menli_wmt20_de_adversarial.csv", encoding="utf-8",
              newline="") as handle:
        reader = csv.DictReader(handle)
        counts: dict[str, int] = {}
        rows = []
        for row in reader:
            if counts.get(row["error"], 0) < per_type:
                counts[row["error"]] = counts.get(row["error"], 0) + 1
                rows.append(row)
        fields = reader.fieldnames
    with open(path, "w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=fields)
        writer.writeheader()
        writer.writerows(rows)
    return path
