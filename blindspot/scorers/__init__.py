"""Every metric's :class:`~blindspot.scoring.base.Scorer`, one module per metric family;
importing this package registers them all."""

from __future__ import annotations

import importlib
import pkgutil

for _module in pkgutil.iter_modules(__path__):
    if not _module.name.startswith("_"):
        importlib.import_module(f"{__name__}.{_module.name}")
