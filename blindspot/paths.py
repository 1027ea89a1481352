"""Where blindspot keeps its caches (parses, scores, assembled NLTK data) and its built datasets."""

from __future__ import annotations

import os
from pathlib import Path


def cache_dir() -> Path:
    """``$BLINDSPOT_CACHE``, else ``$XDG_CACHE_HOME/blindspot``, else ``~/.cache/blindspot``."""
    explicit = os.environ.get("BLINDSPOT_CACHE")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "blindspot"


#: the environment variable naming the folder of built adversarial datasets
DATASETS_ENV = "BLINDSPOT_DATASETS_DIR"


def datasets_dir() -> Path:
    """Where ``build-dataset``/``build-menli`` write and the Space's Browse tab looks:
    ``$BLINDSPOT_DATASETS_DIR``, else ``out/datasets`` under the current folder (absolute, so
    both say the same full path)."""
    return Path(os.environ.get(DATASETS_ENV) or Path("out") / "datasets").absolute()
