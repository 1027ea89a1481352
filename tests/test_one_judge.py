"""One judge, one NaN policy: the `blindspot` module's judge (`runner.curves.judge_test`, what
`blindspot run` judges each test with) and `blindspot_accuracy` (`judging.judge_rows`) give the
same verdict on the same scores, NaN included (issue 17)."""

from __future__ import annotations

import math
from pathlib import Path

import evaluate
import pytest

from blindspot.perturbations.perturbation import REGISTRY
from blindspot.runner.curves import Cell, Gold, JudgeSettings, judge_test

ROOT = Path(__file__).resolve().parents[1]
NAN = math.nan
GOLD = [1.0, 0.9, 0.8]
IDS = [0, 1, 2]  # the rows' ids: their positions in the first cell of `predictions` below
#: (level, noise ratio, seed) -> the metric's scores of that cell's three rows
CELLS = {("0.1", 0.1, 1): [0.9, 0.8, 0.7], ("0.1", 0.1, 2): [0.85, 0.8, 0.7],
         ("0.3", 0.3, 1): [0.5, 0.4, 0.3], ("0.3", 0.3, 2): [0.5, 0.45, 0.3]}


def _both(cells: dict, gold: list[float], test: str = "truncation") -> tuple[dict, dict]:
    """The same scores judged by both entry points: (the run's entry, blindspot_accuracy's)."""
    rule = REGISTRY[test].verdict_rule
    settings = JudgeSettings(tolerance=1e-5, noise_cap=0.6, worst_examples=0, bootstrap_seed=0)
    entry = judge_test(test, "fluency", [
        Cell(test, level, seed, [ratio] * 3, [True] * 3, ["x"] * 3, scores=scores)
        for (level, ratio, seed), scores in cells.items()], Gold(IDS, ["g"] * 3, gold), settings,
        rule).to_dict()
    module = evaluate.load(str(ROOT / "metrics" / "blindspot_accuracy"))
    rows = [(level, ratio, seed, score, g) for (level, ratio, seed), scores in cells.items()
            for score, g in zip(scores, gold, strict=True)]
    out = module.compute(predictions=[r[3] for r in rows], references=[r[4] for r in rows],
                         tests=[test] * len(rows), levels=[r[0] for r in rows],
                         noise_ratios=[r[1] for r in rows], seeds=[r[2] for r in rows])[test]
    return entry, out


def test_same_verdict_without_nan() -> None:
    entry, out = _both(CELLS, GOLD)
    assert entry["status"] == out["status"] == "pass"
    assert entry["passed"] is out["passed"] is True
    assert entry["explanation"] == out["explanation"]


@pytest.mark.parametrize(("where", "message"), [
    ((("0.3", 0.3, 1), 1), "level 0.3, seed 1: the metric returned NaN on 1 of 3 rows (ids {})"),
    ((("0.1", 0.1, 2), 0), "level 0.1, seed 2: the metric returned NaN on 1 of 3 rows (ids {})"),
])
def test_same_verdict_with_a_nan_score(where: tuple, message: str) -> None:
    cell, row = where
    cells = {key: list(scores) for key, scores in CELLS.items()}
    cells[cell][row] = NAN
    entry, out = _both(cells, GOLD)
    # the run names the row by its id; the module by its position in `predictions`
    position = list(CELLS).index(cell) * 3 + row
    assert entry["passed"] is None and out["passed"] is None  # never a verdict on a NaN
    assert entry["status"] == out["status"] == "error"
    assert entry["error"] == message.format(IDS[row])
    assert out["error"] == message.format(position)


def test_same_verdict_with_a_nan_gold_score() -> None:
    entry, out = _both(CELLS, [1.0, NAN, 0.8])
    assert entry["passed"] is None and out["passed"] is None  # never a verdict on a NaN
    assert entry["status"] == out["status"] == "error"
    message = "on the gold rows: the metric returned NaN on {} of {} rows (ids {})"
    assert entry["error"] == message.format(1, 3, "1")
    # each of the four cells' rows carries the gold score: four NaN gold rows, the first five named
    assert out["error"] == message.format(4, 12, "1, 4, 7, 10")
