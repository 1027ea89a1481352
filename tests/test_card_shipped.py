"""The shipped report cards (``blindspot/cards/``, written by ``make cards``): at least 20, one per
card of ``benchmarks/shipped_cards.py``, each readable with its ``card.md`` as the code renders it
now, and every lexical card current: what its numbers follow from (the verdict rules' code, the
metric's signature and scorer, each test's version, the demo data, the settings, SummEval's
judgments) is recomputed without scoring and must be what the card records. A stale card is
named with the inputs that changed; ``make cards`` writes it again."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest
from conftest import SHARED_DATA

from blindspot.cards import SHIPPED_CARDS
from blindspot.protocols.card import read_card, shipped_cards, stale_inputs
from blindspot.report.card_report import CARD_FILE, card_summary, render_card
from blindspot.report.files import RESULTS_FILE

ROOT = Path(__file__).resolve().parents[1]


def _benchmark():
    spec = importlib.util.spec_from_file_location("shipped_cards",
                                                  ROOT / "benchmarks" / "shipped_cards.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


BENCHMARK = _benchmark()
LEXICAL = [c for c in BENCHMARK.CARDS if not c.model]


def test_every_card_of_the_target_is_shipped_and_reads_as_the_code_renders_it() -> None:
    folders = sorted(p.parent.name for p in SHIPPED_CARDS.glob("*/results.json"))
    assert folders == sorted(c.name for c in BENCHMARK.CARDS) and len(folders) >= 20
    for name in folders:
        card = read_card(SHIPPED_CARDS / name / RESULTS_FILE)
        assert card is not None, name
        assert card["summary"] == card_summary(card["tasks"]), f"{name}: its summary is stale"
        assert (SHIPPED_CARDS / name / CARD_FILE).read_text(encoding="utf-8") == \
            render_card(card), (f"{name}: card.md is stale: `python benchmarks/shipped_cards.py "
                                "--render` writes it again")
    assert len(shipped_cards()) == len(folders)


@pytest.mark.parametrize("card", LEXICAL, ids=[c.name for c in LEXICAL])
def test_the_lexical_cards_are_current(card) -> None:
    changed = BENCHMARK.stale(card, SHIPPED_CARDS)
    assert changed == {}, (f"the shipped card {card.name} is stale ({', '.join(changed or [])} "
                           "changed): `make cards` writes the cards again")


def test_the_staleness_check_can_fail() -> None:
    card = read_card(SHIPPED_CARDS / LEXICAL[0].name / RESULTS_FILE)
    files = {"human": SHARED_DATA / BENCHMARK.JUDGMENTS,
             "human_references": SHARED_DATA / BENCHMARK.REFERENCES}
    older = {**card, "inputs": {**card["inputs"], "signature": "blindspot:0.0.1|...",
                                "tests": {}}}
    assert list(stale_inputs(older, **files)) == ["signature", "tests"]
