"""The progress bars of the long loops (perturbing, scoring, streaming, searching), made in one place.

Every long loop makes its bar with :func:`progress_bar`: a tqdm bar on stderr by default. A host
that shows progress elsewhere names its own tqdm class once with :func:`report_progress_with`; the
Space's run process (:mod:`blindspot.space.worker`) does, and sends each bar's position to the page.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from tqdm.auto import tqdm

_bar_class: type[tqdm] = tqdm


def report_progress_with(bar_class: type[tqdm]) -> None:
    """Make every later :func:`progress_bar` an instance of ``bar_class`` (a tqdm subclass)."""
    global _bar_class
    _bar_class = bar_class


def progress_bar(iterable: Iterable[Any] | None = None, **options: Any) -> tqdm:
    """A progress bar over ``iterable`` (or one updated by hand); ``options`` are tqdm's."""
    return _bar_class(iterable, **options)
