"""The option ``definition`` of the metrics whose released implementation and paper differ (ROUGE-W /
ROUGE-S[U], Q-BLEU, PARENT): ``"released"``, the default, computes what the code behind the papers'
numbers computes (each scorer's ``reference`` names it); ``"paper"`` the paper's formulas as
written. Each scorer's docstring says where the two differ."""

from __future__ import annotations

from typing import Any

DEFINITIONS = ("released", "paper")


def check_definition(definition: Any, metric: str) -> str:
    """``definition`` when it is one of :data:`DEFINITIONS`, else a ValueError naming the option."""
    if definition not in DEFINITIONS:
        raise ValueError(f"{metric} option definition must be one of "
                         f"{', '.join(map(repr, DEFINITIONS))}, got {definition!r}")
    return str(definition)
