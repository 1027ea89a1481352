"""Where blindspot keeps its caches (parses, scores, assembled NLTK data)."""

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
