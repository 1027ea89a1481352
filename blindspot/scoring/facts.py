"""What the runner, the protocols and the Space know about a registered metric: its scorer
class's declared facts (:class:`~blindspot.scoring.scorer.Scorer`: ``kind``, ``outputs``,
``default_output``, ``lower_is_better``, ``natural_ranges``, ``corpus_level``, ``supports_idf``,
``output_selector``, ``search_panel``), read through one accessor, :func:`scorer_facts`; and
its ``evaluate`` module's card with every field filled (:func:`module_card`).
"""

from __future__ import annotations

import inspect
import textwrap
from dataclasses import replace

from blindspot.scoring.card import ModuleCard
from blindspot.scoring.scorer import SCORERS, Scorer

#: the width of the generated text (the project's line length)
WIDTH = 100


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


def module_card(metric: str) -> ModuleCard:
    """The card of ``metric``'s ``evaluate`` module: what its scorer declares (``Scorer.card``),
    every field it leaves out read from the class (its docstring, options, outputs, library)."""
    cls = scorer_facts(metric)
    declared = cls.card or ModuleCard()
    description = declared.description or inspect.cleandoc(cls.__doc__ or "") or \
        f"The {metric} metric."
    return replace(
        declared, title=declared.title or metric, description=description,
        summary=declared.summary or " ".join(description.split("\n\n")[0].split()),
        inputs=declared.inputs or default_inputs(cls),
        requirements=declared.requirements or ((cls.library,) if cls.library else ()))


def option_defaults(cls: type[Scorer]) -> dict[str, object]:
    """Each option of ``cls`` with its default (``inspect.Parameter.empty`` when it has none)."""
    parameters = inspect.signature(cls.__init__).parameters
    return {name: parameters[name].default if name in parameters else inspect.Parameter.empty
            for name in cls.option_names() or ()}


def default_inputs(cls: type[Scorer]) -> str:
    """evaluate's inputs description of a module that declares none: its columns, its options
    with their defaults, and its outputs with their direction and scale."""
    args = ["predictions (list of str): the texts to score."]
    if cls.uses_references != "none":
        args.append("references (list of str or list of list of str): one or several references "
                    "per prediction" + (", or none" if cls.uses_references == "optional" else "")
                    + ".")
    if cls.uses_source != "none":
        args.append("sources (list of str): the source of each prediction"
                    + (", or none" if cls.uses_source == "optional" else "") + ".")
    for option, default in option_defaults(cls).items():
        args.append(f"{option}: an option of the scorer"
                    + ("" if default is inspect.Parameter.empty else f", default {default!r}")
                    + ".")
    if not cls.corpus_level:
        args.append("use_aggregator (bool): True (default): the mean over rows; False: one score "
                    "per row.")
    returns = []
    for output in cls.outputs:
        scale = cls.natural_range(output)
        returns.append(f"{output}: {'higher' if cls.higher_is_better(output) else 'LOWER'} is "
                       f"better" + (f", in [{scale[0]:g}, {scale[1]:g}]" if scale else "") + ".")
    lines = ["Args:", *(_item(a) for a in args), "Returns:", *(_item(r) for r in returns)]
    return "\n".join(lines)


def _item(text: str) -> str:
    return textwrap.fill(text, WIDTH, initial_indent="    ", subsequent_indent="        ")
