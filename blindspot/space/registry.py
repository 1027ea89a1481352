"""The Space's tabs by name: adding a tab (e.g. adversarial search) is one registry entry.

An entry names its builder as ``"module:function"``; the builder is called inside the tab's
``gr.Tab`` with the :class:`SpaceContext` (the session workspace, the datasets folder and the
state shared between tabs) and creates the tab's components and events. Tabs appear by
``order``; builders are imported only when the app is built.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from blindspot.space.limits import DEFAULT_LIMITS, SpaceLimits


@dataclass
class SpaceContext:
    """What every tab builder may use."""

    workspace: Any          #: :class:`blindspot.space.session.Workspace`
    datasets_dir: Path      #: where folders built by ``blindspot build-dataset`` are looked for
    runs: Any = None        #: ``gr.State``: the session's finished runs ``[{label, results}]``
    demo: Any = None        #: the ``gr.Blocks`` being built (for ``demo.load`` events)
    limits: SpaceLimits = DEFAULT_LIMITS  #: what one visitor may upload and run


@dataclass(frozen=True)
class SpaceTab:
    """A registry entry: the tab's id, its title and where its builder lives."""

    name: str
    title: str
    builder: str  #: "module:function", (SpaceContext) -> None
    order: int = 100

    def build(self, context: SpaceContext) -> None:
        module, _, function = self.builder.partition(":")
        getattr(importlib.import_module(module), function)(context)


TABS: dict[str, SpaceTab] = {}


def register_tab(tab: SpaceTab) -> SpaceTab:
    """Add ``tab`` to the Space (a name can be registered once)."""
    if TABS.setdefault(tab.name, tab) is not tab:
        raise ValueError(f"Space tab {tab.name!r} is already registered")
    return tab


def tabs_in_order() -> list[SpaceTab]:
    """The registered tabs as the page shows them."""
    return sorted(TABS.values(), key=lambda t: (t.order, t.name))


register_tab(SpaceTab("perturb", "Perturb", "blindspot.space.tabs.perturb:build", 10))
register_tab(SpaceTab("stress", "Stress-test a metric", "blindspot.space.tabs.stress:build", 20))
register_tab(SpaceTab("search", "Adversarial search", "blindspot.space.tabs.search:build", 25))
register_tab(SpaceTab("compare", "Compare metrics", "blindspot.space.tabs.compare:build", 30))
register_tab(SpaceTab("browse", "Browse adversarial datasets",
                      "blindspot.space.tabs.browse:build", 40))
