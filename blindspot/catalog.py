"""Where every registry is filled: the one list of the modules that provide each kind of thing.

A :class:`blindspot.registry.Registry` calls :func:`fill` with its kind on its first read, so the
registry is complete whatever the caller imported before (no "import this package for its side
effects" lines). A provider package lends all its public modules: adding a test or a metric is
one new module in its package, found here without an edit; adding a protocol is one declaration
in ``blindspot.protocols.declarations`` and the module it names.

==========  ==================================================  ======================================
kind        registry                                            providers
==========  ==================================================  ======================================
test        ``blindspot.perturbations.perturbation.REGISTRY``   every public module of
                                                                ``blindspot.perturbations``
metric      ``blindspot.scoring.scorer.SCORERS``                every public module of
                                                                ``blindspot.scorers``, then the
                                                                modules of the entry-point group
                                                                ``blindspot.scorers`` (plugins)
protocol    ``blindspot.protocols.interface.PROTOCOLS``         ``blindspot.protocols.declarations``
                                                                (declarations only: each names the
                                                                module that runs it, imported when
                                                                it runs)
task        ``blindspot.perturbations.perturbation.TASKS``      (declared where it is defined)
checklist   ``blindspot.checklists.templates.TASKS``            (declared where it is defined)
task
Space tab   ``blindspot.space.tab.TABS``                        every public module of
                                                                ``blindspot.space.tabs``
verdict     ``blindspot.judging.RULES``,                        (declared where they are defined)
rule,       ``blindspot.runner.engines.ENGINES``
engine
==========  ==================================================  ======================================

Providers are named as module paths and imported on first need, so listing the tests loads no
metric and no model code, and listing the protocols loads none of their execution code.

A plugin is an installed distribution that declares a module in a kind's entry-point group
(``[project.entry-points."blindspot.scorers"] my_metric = "my_package.my_metric"``): that module
is imported after the project's own providers, and registers its entries as they do (a metric:
one ``@register_scorer`` class), so the CLI, the evaluate modules and the docs' tables find it
without an edit here. A plugin that fails to import, or takes a name already registered, stops
the first read with one line naming it and its distribution.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import pkgutil
from collections.abc import Iterator
from dataclasses import dataclass

from blindspot.errors import BlindspotInputError

#: modules of a provider package that register nothing (shared helpers; ``dataset`` and
#: ``catalogue`` read the registry and pull in ``datasets``, which listing the tests does not need)
SUPPORT_MODULES = frozenset({"base", "text_utils", "catalogue", "dataset"})


@dataclass(frozen=True)
class Providers:
    """The modules that fill one registry: every public module of ``packages``, ``modules``, and
    the module of every entry point of the group ``plugins`` (installed distributions')."""

    packages: tuple[str, ...] = ()
    modules: tuple[str, ...] = ()
    plugins: str | None = None

    def module_names(self) -> Iterator[str]:
        for package in self.packages:
            found = importlib.import_module(package)
            for info in pkgutil.iter_modules(found.__path__):
                if not info.name.startswith("_") and info.name not in SUPPORT_MODULES:
                    yield f"{package}.{info.name}"
        yield from self.modules
        yield from (entry.module for entry in plugin_entry_points(self.plugins))


#: the entry-point group of metric plugins: each entry names a module that registers scorers
METRIC_PLUGINS = "blindspot.scorers"


def plugin_entry_points(group: str | None) -> list[importlib.metadata.EntryPoint]:
    """The installed entry points of ``group``, by name (none for no group)."""
    if group is None:
        return []
    return sorted(importlib.metadata.entry_points(group=group), key=lambda entry: entry.name)


PROVIDERS: dict[str, Providers] = {
    "test": Providers(packages=("blindspot.perturbations",)),
    "metric": Providers(packages=("blindspot.scorers",), plugins=METRIC_PLUGINS),
    # every protocol's declaration, in the order ``blindspot protocols`` lists them
    "protocol": Providers(modules=("blindspot.protocols.declarations",)),
    "Space tab": Providers(packages=("blindspot.space.tabs",)),
}


def fill(kind: str) -> list[str]:
    """Import every provider of ``kind`` (each registers its entries) and return their module
    names in catalogue order (the registry's order); none for a kind declared in place."""
    providers = PROVIDERS.get(kind)
    if providers is None:
        return []
    names = list(providers.module_names())
    plugins = {entry.module: entry for entry in plugin_entry_points(providers.plugins)}
    for name in names:
        if name not in plugins:
            importlib.import_module(name)
            continue
        try:
            importlib.import_module(name)
        except Exception as error:  # a plugin's own fault: named, not a traceback
            entry = plugins[name]
            distribution = entry.dist.name if entry.dist is not None else "an unknown distribution"
            raise BlindspotInputError(
                f"the {kind} plugin {entry.name!r} ({entry.value}, entry point of "
                f"{distribution!r} in group {entry.group!r}) failed to load: "
                f"{type(error).__name__}: {error}",
                fix=f"fix the plugin, or uninstall it (pip uninstall {distribution})") from None
    return names
