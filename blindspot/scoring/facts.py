"""What the runner, the protocols and the Space know about a registered metric: its scorer
class's declared facts (:class:`~blindspot.scoring.scorer.Scorer`: ``kind``, ``outputs``,
``default_output``, ``lower_is_better``, ``natural_ranges``, ``corpus_level``, ``supports_idf``,
``output_selector``, ``search_panel``), read through one accessor, :func:`scorer_facts`.
"""

from __future__ import annotations

from blindspot.scoring.scorer import SCORERS, Scorer


def scorer_facts(metric: str) -> type[Scorer]:
    """The registered scorer class of ``metric``, whose class attributes are its facts; a clear
    error lists the valid names."""
    return SCORERS.get(metric)


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
