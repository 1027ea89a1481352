"""Plots of a blind-spot run: for each dataset and test, score vs. noise ratio, one panel a metric.

Metrics have different scales, so each gets its own panel. Figures are built on
``matplotlib.figure.Figure`` directly (no pyplot, no global backend state) and saved without the
software tag, so the same results always give the same PNG bytes.
"""

from __future__ import annotations

import hashlib
import io
import math
import textwrap
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from matplotlib.axes import Axes
from matplotlib.figure import Figure

from blindspot.report.files import PLOT_FOLDER, slugify
from blindspot.report.views import NOISE_MARK, WITHIN_NOISE, dataset_tests, shorten

COLORS = {"pass": "#2ca02c", "fail": "#d62728", WITHIN_NOISE: "#d89b00", "undecided": "#7f7f7f",
          "error": "#ff7f0e", "missing": "#7f7f7f"}
PANEL_SIZE = (4.2, 3.4)  # inches, per panel
MAX_COLUMNS = 3


@dataclass(frozen=True)
class Margins:
    """Fixed room around each panel, in inches: enough for the titles, tick labels and axis
    labels the panels draw (at their font sizes). Fixed margins cost nothing to lay out, where
    matplotlib's constrained layout measured every text of every figure (about half of a
    report's plotting time)."""

    left: float = 0.85  # y tick labels and the y label
    right: float = 0.2
    top: float = 0.6  # the figure's title above the first row's panel titles
    bottom: float = 0.5  # x tick labels and the x label
    between_columns: float = 1.0  # the next panel's y labels
    between_rows: float = 0.85  # x labels above, the next panel's title below

    def grid(self, rows: int, columns: int) -> dict[str, float]:
        """``GridSpec`` keywords (fractions of the figure) for a figure of whole panels."""
        width, height = PANEL_SIZE[0] * columns, PANEL_SIZE[1] * rows
        axes_width = (width - self.left - self.right - self.between_columns * (columns - 1)) / columns
        axes_height = (height - self.top - self.bottom - self.between_rows * (rows - 1)) / rows
        return {"left": self.left / width, "right": 1 - self.right / width,
                "bottom": self.bottom / height, "top": 1 - self.top / height,
                "wspace": self.between_columns / axes_width,
                "hspace": self.between_rows / axes_height}


MARGINS = Margins()
DPI = 100


def _grid(n_panels: int) -> tuple[int, int]:
    """Rows and columns for ``n_panels`` panels, at most ``MAX_COLUMNS`` wide."""
    columns = max(1, min(MAX_COLUMNS, n_panels))
    return math.ceil(max(1, n_panels) / columns), columns


def _message_panel(ax: Axes, title: str, message: str, color: str) -> None:
    """A panel that shows a message instead of a curve (an error, a test not run)."""
    ax.set_title(title, color=color, fontsize=9)
    ax.text(0.5, 0.5, textwrap.fill(shorten(message, 300), 40), ha="center", va="center",
            fontsize=8, color=color, transform=ax.transAxes)
    ax.set_xticks([])
    ax.set_yticks([])


def _curve(ax: Axes, points: list[Mapping[str, Any]], color: str) -> None:
    """The mean curve, its seed std band and one marker a point (hollow when not judged)."""
    drawn = [p for p in points if p.get("score_mean") is not None]
    x = [p.get("noise_ratio") or 0.0 for p in drawn]
    y = [p["score_mean"] for p in drawn]
    std = [p.get("score_std") or 0.0 for p in drawn]
    ax.plot(x, y, color=color, linewidth=2 if color == COLORS["fail"] else 1.5, zorder=2)
    low = [m - s for m, s in zip(y, std, strict=True)]
    high = [m + s for m, s in zip(y, std, strict=True)]
    ax.fill_between(x, low, high, color=color, alpha=0.2, linewidth=0, zorder=1)
    for point, px, py in zip(drawn, x, y, strict=True):
        judged = point.get("judged", True)
        ax.plot([px], [py], marker="s" if point.get("level") == "gold" else "o",
                markersize=6, color=color, markeredgecolor=color,
                markerfacecolor=color if judged else "white", linestyle="none", zorder=3)


def _noise_cap_line(ax: Axes, points: list[Mapping[str, Any]], noise_cap: Any) -> None:
    """A dotted line at the noise cap when some point lies beyond it."""
    if noise_cap is not None and any(not p.get("judged", True) for p in points):
        ax.axvline(float(noise_cap), color="#999999", linestyle=":", linewidth=1, zorder=0)


def _test_panel(ax: Axes, metric: str, result: Mapping[str, Any], noise_cap: Any) -> None:
    """One metric's panel for one test: its curve, or its error."""
    status = str(result.get("status") or "undecided")
    title = status.upper()
    if status == "fail" and result.get("within_noise"):
        status, title = WITHIN_NOISE, f"FAIL{NOISE_MARK} (within noise)"
    color = COLORS.get(status, COLORS["undecided"])
    if status == "error":
        _message_panel(ax, f"{metric}: ERROR", str(result.get("error") or "error"), color)
        return
    points = list(result.get("points", []))
    _curve(ax, points, color)
    _noise_cap_line(ax, points, noise_cap)
    ax.set_title(f"{metric}: {title}", color=color, fontsize=9)
    ax.set_xlabel("noise ratio", fontsize=8)
    ax.set_ylabel(metric, fontsize=8)
    ax.tick_params(labelsize=7)
    if status == "undecided" and result.get("reason"):
        ax.text(0.5, 0.02, textwrap.fill(shorten(result["reason"]), 50), ha="center",
                va="bottom", fontsize=6, color=color, transform=ax.transAxes,
                bbox={"facecolor": "white", "alpha": 0.8, "edgecolor": "none"})


def _metric_panel(ax: Axes, metric: str, entry: Mapping[str, Any], test: str,
                  noise_cap: Any) -> None:
    """The panel of ``metric``: its test result, its metric-level error, or 'not run'."""
    result = entry.get("tests", {}).get(test)
    if result is not None:
        _test_panel(ax, metric, result, noise_cap)
    elif entry.get("error"):
        _message_panel(ax, f"{metric}: ERROR", str(entry["error"]), COLORS["error"])
    else:
        _message_panel(ax, metric, "this metric did not run this test", COLORS["missing"])


def build_figure(results: dict, dataset: str, test: str) -> Figure:
    """The figure of one test on one dataset: one axes per metric of the dataset, in file order."""
    metrics = results["datasets"][dataset].get("metrics", {})
    rows, columns = _grid(len(metrics))
    height = PANEL_SIZE[1] * rows
    figure = Figure(figsize=(PANEL_SIZE[0] * columns, height), dpi=DPI)
    axes = list(figure.subplots(rows, columns, squeeze=False,
                                gridspec_kw=MARGINS.grid(rows, columns)).flat)
    noise_cap = results.get("config", {}).get("noise_cap")
    for ax, (metric, entry) in zip(axes, metrics.items(), strict=False):
        _metric_panel(ax, metric, entry, test, noise_cap)
    for ax in axes[len(metrics):]:
        ax.remove()
    figure.suptitle(f"{test} on {dataset}", fontsize=10, y=1 - 0.12 / height, va="top")
    return figure


def render_png(figure: Figure) -> bytes:
    """The figure as PNG bytes with no software tag or date, so equal figures give equal bytes."""
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=DPI, metadata={"Software": None})
    return buffer.getvalue()


def _file_name(dataset: str, test: str, taken: set[str]) -> str:
    """``<dataset>--<test>.png`` as slugs; a hash of the names keeps colliding slugs apart."""
    stem = f"{slugify(dataset)}--{slugify(test)}"
    if stem.lower() in taken:  # case-insensitive file systems merge names differing by case
        stem += "--" + hashlib.sha256(f"{dataset}/{test}".encode()).hexdigest()[:8]
    taken.add(stem.lower())
    return f"{stem}.png"


def plot_names(results: dict) -> dict[str, str]:
    """``"<dataset>/<test>"`` -> ``"plots/<file>.png"`` for every test of every dataset."""
    names: dict[str, str] = {}
    taken: set[str] = set()
    for dataset, data in results.get("datasets", {}).items():
        for test in dataset_tests(data):
            names[f"{dataset}/{test}"] = f"{PLOT_FOLDER}/{_file_name(dataset, test, taken)}"
    return names


def render_plots(results: dict) -> dict[str, bytes]:
    """``"<dataset>/<test>"`` -> the PNG of that test (saved under :func:`plot_names`' name)."""
    return {f"{dataset}/{test}": render_png(build_figure(results, dataset, test))
            for dataset, data in results.get("datasets", {}).items()
            for test in dataset_tests(data)}
