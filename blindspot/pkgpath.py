"""Where an installed package's files are, without importing it (some model packages' own
``__init__`` imports dependencies we deliberately do not install)."""

from __future__ import annotations

import importlib.util
from pathlib import Path


def package_dir(name: str) -> Path | None:
    """The folder of the installed package ``name``, or None when it is not installed."""
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0])
