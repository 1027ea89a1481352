"""What a metric's ``evaluate`` module says beyond its scorer's other facts: the card's text, the
doctested examples, the citation, and a compute of its own where the module keeps a canonical
module's contract. A scorer declares one :class:`ModuleCard` (``Scorer.card``); its folder
``metrics/<name>/`` (script, card, requirements, Space app) is generated from it
(:mod:`blindspot.evaluate_modules`), and every field left out is read from the scorer class
(:func:`blindspot.scoring.facts.module_card`), so a new metric needs none.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

#: the emoji of a card that declares none
DEFAULT_EMOJI = "📏"


@dataclass(frozen=True)
class ModuleCard:
    """A metric module's own text and behaviour; "" or () means: derived from the scorer.

    ``examples`` are doctest lines (``>>>``) that load the module as ``blindspot/<name>``: the
    script's docstring and the card show them, and ``tests/test_metric_doctests.py`` runs them
    from a folder outside the checkout. ``sections`` are the card's own sections (markdown,
    ``##`` headings) between its description and its examples. ``compute`` replaces the
    module's default compute (the scorer's per-row scores, their mean with ``use_aggregator``):
    ``compute(module, predictions, references, **arguments)`` for a module that keeps a canonical
    ``evaluate`` module's arguments and outputs (``chrf``'s corpus score); ``sources`` come as an
    argument when the scorer reads them. ``aggregate="corpus"``: ``use_aggregator=True`` (the
    default) gives the scorer's corpus score, as the canonical module of that name does, instead
    of the mean of its per-row scores."""

    #: how the card names the metric ("chrF"); default: the metric's name
    title: str = ""
    #: one sentence: the card's ``description`` line and docs/metric-reference.md's table
    #: (default: the first paragraph of the scorer class's docstring)
    summary: str = ""
    #: what the module computes: the script's docstring, evaluate's ``description`` and the
    #: card's first section (default: the scorer class's docstring)
    description: str = ""
    examples: str = ""
    #: evaluate's ``inputs_description`` (default: written from the options and outputs)
    inputs: str = ""
    #: BibTeX
    citation: str = ""
    sections: str = ""
    emoji: str = DEFAULT_EMOJI
    #: what ``requirements.txt`` lists besides blindspot (default: the scorer's ``library``)
    requirements: tuple[str, ...] = ()
    aggregate: Literal["mean", "corpus"] = "mean"
    compute: Callable[..., dict[str, Any]] | None = None
