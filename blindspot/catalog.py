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
                                                                ``blindspot.scorers``
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
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Iterator
from dataclasses import dataclass

#: modules of a provider package that register nothing (shared helpers; ``dataset`` and
#: ``catalogue`` read the registry and pull in ``datasets``, which listing the tests does not need)
SUPPORT_MODULES = frozenset({"base", "text_utils", "catalogue", "dataset"})


@dataclass(frozen=True)
class Providers:
    """The modules that fill one registry: every public module of ``packages``, and ``modules``."""

    packages: tuple[str, ...] = ()
    modules: tuple[str, ...] = ()

    def module_names(self) -> Iterator[str]:
        for package in self.packages:
            found = importlib.import_module(package)
            for info in pkgutil.iter_modules(found.__path__):
                if not info.name.startswith("_") and info.name not in SUPPORT_MODULES:
                    yield f"{package}.{info.name}"
        yield from self.modules


PROVIDERS: dict[str, Providers] = {
    "test": Providers(packages=("blindspot.perturbations",)),
    "metric": Providers(packages=("blindspot.scorers",)),
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
    for name in names:
        importlib.import_module(name)
    return names
