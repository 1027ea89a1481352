"""The report cards the package ships: one folder per metric (``results.json`` and ``card.md``),
written by ``make cards`` (``benchmarks/shipped_cards.py``) and read by the leaderboard
(``blindspot card --leaderboard``, the Space's leaderboard tab)."""

from __future__ import annotations

from pathlib import Path

#: the folder of the shipped cards, inside the installed package
SHIPPED_CARDS = Path(__file__).resolve().parent

__all__ = ["SHIPPED_CARDS"]
