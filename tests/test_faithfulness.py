"""The faithfulness check's ROUGE-L figures, against facts that can be verified by hand.

On the first 10 CNN/DM documents, with truncation and one or two other registered tests:
the gold point is a plain rouge-score computation, truncation is reproducible with zero seed
spread, its noise ratio is what Eq. 1 gives for "drop floor(n*p) words, maybe append a period",
and punctuation-only noise leaves ROUGE-L (whose tokenizer drops punctuation) unchanged.
"""

from __future__ import annotations

import importlib.util
import math
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import datasets
import pytest
from engine_support import cnndm_rows
from rouge_score import rouge_scorer

from blindspot.perturbations import REGISTRY
from blindspot.perturbations.dataset import run_suite

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "faithfulness_rouge.py"
SEEDS = [1, 2]
TRUNCATION_LEVELS = ("0.1", "0.2", "0.3", "0.4", "0.5")


def _load_script() -> ModuleType:
    """benchmarks/ is not a package: import the script by its path."""
    spec = importlib.util.spec_from_file_location("faithfulness_rouge", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


fr = _load_script()
#: truncation plus the other cheap tests that are registered (no parse, no model)
TESTS = ["truncation"] + [n for n in ("noised_punctuation", "article_removal") if n in REGISTRY]


def _word_levenshtein(a: list[str], b: list[str]) -> int:
    """Textbook edit distance over word lists (insert, delete, substitute: cost 1 each)."""
    previous = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        current = [i]
        for j, y in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (x != y)))
        previous = current
    return previous[-1]


@pytest.fixture(scope="module")
def rows() -> list[dict[str, Any]]:
    return cnndm_rows(10)


@pytest.fixture(scope="module")
def references(rows: list[dict[str, Any]]) -> dict[str, list[str]]:
    return {r["id"]: r["references"] for r in rows}


def _suite(rows: list[dict[str, Any]]) -> datasets.Dataset:
    ds = datasets.Dataset.from_dict({"id": [r["id"] for r in rows],
                                     "gold": [r["gold"] for r in rows]})
    suite, plan = run_suite(ds, TESTS, "summarization", seeds=SEEDS, progress=False)
    assert not plan.skipped
    return suite


@pytest.fixture(scope="module")
def table(rows: list[dict[str, Any]], references: dict[str, list[str]]) -> list[dict[str, Any]]:
    return fr.rouge_l_table(_suite(rows), references)


def _cell(table: list[dict[str, Any]], test: str, level: str) -> dict[str, Any]:
    return next(row for row in table if row["test"] == test and row["level"] == level)


def test_gold_point_is_a_direct_rouge_score_computation(table, rows) -> None:
    plain = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=True)
    by_hand = [plain.score_multi(r["references"], r["gold"])["rougeL"].fmeasure for r in rows]
    assert table[0]["test"] == "gold" and table[0]["rows"] == len(rows)
    assert table[0]["rouge_l"] == pytest.approx(sum(by_hand) / len(by_hand), rel=1e-12, abs=0)
    # and a perturbed cell too: the memoised tokenizer changes nothing
    cell = _cell(table, "truncation", "0.5")
    texts = [" ".join(r["gold"].split()[:max(1, len(r["gold"].split())
                                            - math.floor(len(r["gold"].split()) * 0.5))])
             for r in rows]
    texts = [t if t.endswith(".") else t + "." for t in texts]
    direct = [plain.score_multi(r["references"], t)["rougeL"].fmeasure
              for r, t in zip(rows, texts, strict=True)]
    assert cell["rouge_l"] == pytest.approx(sum(direct) / len(direct), rel=1e-12, abs=0)
    assert cell["relative_change_pct"] == pytest.approx(
        (cell["rouge_l"] - table[0]["rouge_l"]) / table[0]["rouge_l"] * 100)


def test_truncation_is_reproducible_with_zero_seed_spread(table, rows, references) -> None:
    again = fr.rouge_l_table(_suite(rows), references)  # a second run, fresh memo
    first = [row for row in table if row["test"] == "truncation"]
    second = [row for row in again if row["test"] == "truncation"]
    assert [row["level"] for row in first] == list(TRUNCATION_LEVELS)
    assert first == second
    for row in first:
        assert row["seeds"] == [SEEDS[0]]  # deterministic: run once
        assert row["rouge_l_std"] == 0.0 and row["noise_ratio_std"] == 0.0


@pytest.mark.parametrize("level", TRUNCATION_LEVELS)
def test_truncation_noise_ratio_by_hand(table, rows, level: str) -> None:
    p = float(level)
    ratios = []
    for r in rows:
        words = r["gold"].split()
        n = len(words)
        keep = max(1, n - math.floor(n * p))
        kept = " ".join(words[:keep])
        # floor(n*p) deletions, plus one substituted word when a "." had to be appended to it
        distance = (n - keep) + (0 if kept.endswith(".") else 1)
        noised = (kept if kept.endswith(".") else kept + ".").split()
        assert _word_levenshtein(words, noised) == distance
        ratios.append(distance / n)
    assert _cell(table, "truncation", level)["noise_ratio"] == pytest.approx(
        sum(ratios) / len(ratios), rel=1e-12)


@pytest.mark.skipif("noised_punctuation" not in REGISTRY,
                    reason="noised_punctuation is not registered")
def test_punctuation_noise_leaves_rouge_l_unchanged_and_fails(table) -> None:
    # rouge-score's tokenizer keeps only [a-z0-9] runs, so swapping . , ! ? : changes no token
    cells = [row for row in table if row["test"] == "noised_punctuation"]
    assert cells and all(row["noise_ratio"] > 0 for row in cells)
    for row in cells:
        assert row["rouge_l"] == table[0]["rouge_l"]
        assert row["seeds"] == SEEDS and row["rouge_l_std"] == 0.0
    verdict = fr.monotonicity(table)["noised_punctuation"]
    assert verdict["passed"] is False and verdict["paper"] == "fail"


def _point(test: str, level: str, noise: float, score: float) -> dict[str, Any]:
    return {"test": test, "level": level, "noise_ratio": noise, "rouge_l": score}


def test_monotonicity_rule() -> None:
    gold = _point("gold", "-", 0.0, 0.30)
    table = [gold,
             _point("down", "2", 0.20, 0.28), _point("down", "1", 0.10, 0.29),  # sorted by noise
             _point("down", "9", 0.70, 0.99),  # above the cap: ignored
             _point("flat", "1", 0.10, 0.30 - 5e-6),  # within the tolerance: not a decrease
             _point("up", "1", 0.10, 0.31),
             _point("capped", "1", 0.65, 0.10)]
    verdicts = fr.monotonicity(table)
    assert verdicts["down"]["passed"] is True
    assert [p[0] for p in verdicts["down"]["points"]] == ["gold", "1", "2"]
    assert verdicts["flat"]["passed"] is False and verdicts["flat"]["violations"] == [("gold", "1")]
    assert verdicts["up"]["passed"] is False
    assert verdicts["capped"]["passed"] is None
    assert fr.monotonicity([gold, _point("truncation", "0.1", 0.1, 0.2)])["truncation"]["paper"] \
        == "fail"


def test_release_comparison_uses_the_wider_seed_range() -> None:
    row = {"test": "local_swap", "level": "0.3", "noise_ratio": 0.20, "rouge_l": 0.26,
           "noise_ratio_per_seed": {1: 0.19, 2: 0.21}, "rouge_l_per_seed": {1: 0.259, 2: 0.261}}
    release = {("local_swap", "0.3"): {"noise": (0.16, 0.17, 0.18), "rouge_l": (0.25, 0.27)}}
    (entry,) = fr.release_comparison([_point("gold", "-", 0.0, 0.3), row], release)
    # noise: ours 0.20, theirs 0.17, ranges 0.02 and 0.02 -> |0.03| > 0.02: outside seed noise
    assert entry["noise"]["release"] == pytest.approx(0.17)
    assert entry["noise"]["diff"] == pytest.approx(0.03)
    assert entry["noise"]["seed_range"] == pytest.approx(0.02)
    assert entry["noise"]["within_noise"] is False
    # ROUGE-L: ours 0.26, theirs 0.26, their range 0.02 -> within
    assert entry["rouge_l"]["within_noise"] is True
    assert "NO (noise)" in fr.format_release_comparison([entry])
    # a (test, level) the release has no figures for is left out
    assert fr.release_comparison([{**row, "level": "0.9"}], release) == []


def test_release_figures_cover_the_aligned_tests_at_their_paper_levels() -> None:
    from blindspot.perturbations.perturbation import level_str

    for name in ("local_swap", "middle_swap", "sentence_replacement", "generic_named_entity"):
        levels = {level_str(x) for x in REGISTRY[name].levels["summarization"]}
        assert {lv for t, lv in fr.RELEASE_FIGURES if t == name} == levels
    assert all(len(f["noise"]) == len(f["rouge_l"]) == 5 for f in fr.RELEASE_FIGURES.values())
