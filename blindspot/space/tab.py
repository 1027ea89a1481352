"""The Space's tabs by name: adding a tab (e.g. adversarial search) is one module in
``blindspot/space/tabs/`` that registers a :class:`SpaceTab` with :func:`register_tab`.

A tab's builder is called inside the tab's ``gr.Tab`` with the :class:`SpaceContext` (the session
workspace, the datasets folder and the state shared between tabs) and creates the tab's components
and events. Tabs appear by ``order``. :data:`TABS` is a :class:`blindspot.registry.Registry`
filled by :mod:`blindspot.catalog` (every public module of ``blindspot.space.tabs``) on its first
read, which only building the app does.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from blindspot.registry import Registry, lowercase
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
    """A registry entry: the tab's id, its title, its builder and its place on the page."""

    name: str
    title: str
    builder: Callable[[SpaceContext], None]
    order: int = 100

    def build(self, context: SpaceContext) -> None:
        self.builder(context)


#: the Space's tabs by name
TABS: Registry[SpaceTab] = Registry("Space tab", normalise=lowercase)


def register_tab(tab: SpaceTab) -> SpaceTab:
    """Add ``tab`` to the Space (a name can be registered once)."""
    return TABS.register(tab.name, tab)


def tabs_in_order() -> list[SpaceTab]:
    """The registered tabs as the page shows them."""
    return sorted(TABS.values(), key=lambda t: (t.order, t.name))
