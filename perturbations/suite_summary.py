"""Summaries of a perturbed suite: per test and level, the noise ratio, how often it applied,
and an example (what the demo prints and the dataset cards tabulate)."""

from __future__ import annotations

from dataclasses import dataclass
from statistics import fmean, pstdev
from typing import Any


@dataclass(frozen=True)
class CellSummary:
    """One (test, level) of a suite: noise ratio mean over rows, then mean/std over seeds."""

    test: str
    level: str
    seeds: int
    rows: int
    applied: float  # fraction of rows changed, over all seeds
    noise_ratio: float  # mean over seeds of the mean over rows
    noise_ratio_std: float  # population std over seeds
    example_gold: str
    example_perturbed: str


def summarise_suite(ds: Any, column: str = "gold") -> list[CellSummary]:
    """One summary per (test, level), in the order the cells appear in ``ds``."""
    cells: dict[tuple[str, str], dict[int, list[int]]] = {}
    table = ds.select_columns([column, "perturbed", "applied", "noise_ratio", "perturbation",
                               "level", "seed"]).to_dict()
    for i, (test, level, seed) in enumerate(zip(table["perturbation"], table["level"],
                                                table["seed"], strict=True)):
        cells.setdefault((test, level), {}).setdefault(seed, []).append(i)
    out = []
    for (test, level), by_seed in cells.items():
        per_seed = [fmean(table["noise_ratio"][i] for i in rows) for rows in by_seed.values()]
        every = [i for rows in by_seed.values() for i in rows]
        example = next((i for i in every if table["applied"][i]), every[0])
        out.append(CellSummary(
            test, level, len(by_seed), len(next(iter(by_seed.values()))),
            sum(bool(table["applied"][i]) for i in every) / len(every),
            fmean(per_seed), pstdev(per_seed) if len(per_seed) > 1 else 0.0,
            table[column][example] or "", table["perturbed"][example] or ""))
    return out
