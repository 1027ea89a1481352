"""What the runner, the protocols and the Space know about a registered metric: its scorer
class's declared facts (:class:`~blindspot.scoring.base.Scorer`: ``kind``, ``outputs``,
``default_output``, ``lower_is_better``, ``natural_ranges``, ``corpus_level``, ``supports_idf``,
``output_selector``, ``search_panel``), read through one accessor, :func:`scorer_facts`.
"""

from __future__ import annotations

import blindspot.scorers  # noqa: F401  (registers every scorer)
from blindspot.scoring.base import SCORERS, Scorer
from blindspot.suggest import did_you_mean


def scorer_facts(metric: str) -> type[Scorer]:
    """The registered scorer class of ``metric``, whose class attributes are its facts; a clear
    error lists the valid names."""
    cls = SCORERS.get(metric)
    if cls is None:
        raise ValueError(f"unknown metric {metric!r}; valid metrics: {', '.join(sorted(SCORERS))}"
                         f"{did_you_mean(metric, SCORERS)}")
    return cls


def registered_metrics() -> list[str]:
    """Every registered metric's name, in registration order."""
    return list(SCORERS)


def lexical_metrics() -> list[str]:
    """The metrics computed from the strings alone (no model), in registration order."""
    return [name for name, cls in SCORERS.items() if cls.kind == "lexical"]


def default_panel() -> tuple[str, ...]:
    """The metric specs of a search's default panel, in their declared places."""
    placed = sorted(cls.search_panel for cls in SCORERS.values() if cls.search_panel)
    return tuple(spec for _, spec in placed)
