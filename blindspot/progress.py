"""The progress bars of the long loops (perturbing, scoring, streaming, searching), made in one place.

Every long loop makes its bar with :func:`progress_bar`: a tqdm bar on stderr by default. A host
that shows progress elsewhere names its own tqdm class once with :func:`report_progress_with`; the
Space's run process (:mod:`blindspot.space.worker`) does, and sends each bar's position to the page.
A bar's forecast (its remaining time) counts only steps like the ones to come:
:func:`restart_clock` leaves out one-off work (a parse, a model load).
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


def restart_clock(bar: tqdm) -> None:
    """Measure ``bar``'s rate afresh from here, its count and elapsed time kept: what it waited
    for so far was one-off (parsing the texts, loading a test's word lists or a metric's model),
    and a forecast that spread it over the steps to come would be wild (the demo's first bar once
    said 1:27:24 for a minute's work). The remaining time shows as unknown until the next step."""
    if bar.disable:
        return
    done, started = bar.n, bar.start_t
    bar.reset()  # a fresh rate (tqdm's moving averages) measured from now
    bar.n = bar.last_print_n = bar.initial = done
    bar.start_t = started
    bar.refresh()
