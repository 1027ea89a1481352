"""The report of a deviation run (perturbation checklists): results.json, a heatmap of the
deviations (templates x metrics, diverging colours centred on 0, as the paper's Figure 4) and
report.md, rendered as one :class:`~blindspot.report.files.ReportFiles`; the same results give
the same bytes (PNG without metadata)."""

from __future__ import annotations

import math
from typing import Any

from matplotlib.colors import TwoSlopeNorm
from matplotlib.figure import Figure

from blindspot.report import markdown as md
from blindspot.report import views
from blindspot.report.files import MARKDOWN_FILE, ReportFiles
from blindspot.report.plots import render_png

HEATMAP_FILE = "deviation_heatmap.png"
#: the colour scale's limit: |s| <= 2 by construction, +-1 already means "off by the whole range"
LIMIT = 1.0


def _rows(results: dict[str, Any]) -> list[str]:
    return [f"{t['criterion']}/{t['template']}" for t in results["templates"]]


def deviation_matrix(results: dict[str, Any]) -> tuple[list[str], list[str], list[list[float]]]:
    """Row labels (templates), column labels (metrics) and s per cell (NaN: not computed)."""
    rows, metrics = _rows(results), list(results["metrics"])
    values = [[results["metrics"][m]["templates"].get(r, {}).get("deviation", math.nan)
               for m in metrics] for r in rows]
    return rows, metrics, values


def build_heatmap(results: dict[str, Any]) -> Figure:
    """The templates x metrics heatmap of s, annotated; grey cells were not computed."""
    rows, metrics, values = deviation_matrix(results)
    figure = Figure(figsize=(2.2 + 1.3 * max(1, len(metrics)), 1.2 + 0.32 * max(1, len(rows))))
    ax = figure.add_subplot(1, 1, 1)
    ax.set_facecolor("#d9d9d9")
    masked = [[v if math.isfinite(v) else math.nan for v in row] for row in values]
    image = ax.imshow(masked, cmap="RdBu_r", aspect="auto",
                      norm=TwoSlopeNorm(vcenter=0.0, vmin=-LIMIT, vmax=LIMIT))
    for i, row in enumerate(values):
        for j, v in enumerate(row):
            text = f"{v:+.2f}" if math.isfinite(v) else "n/a"
            ax.text(j, i, text, ha="center", va="center", fontsize=7,
                    color="white" if math.isfinite(v) and abs(v) > 0.6 * LIMIT else "black")
    ax.set_xticks(range(len(metrics)), metrics, rotation=30, ha="right", fontsize=8)
    ax.set_yticks(range(len(rows)), rows, fontsize=7)
    ax.set_title(f"deviation s, {results['config']['task']}\n"
                 f"(> 0: metric dropped more than humans)", fontsize=9)
    figure.colorbar(image, ax=ax, shrink=0.8)
    figure.tight_layout()
    return figure


def _fmt(value: Any) -> str:
    return f"{value:+.3f}" if isinstance(value, float) and math.isfinite(value) else "-"


def render_markdown(results: dict[str, Any]) -> str:
    """report.md: configuration, the deviation table, skipped templates and examples."""
    cfg, data = results["config"], results["dataset"]
    metrics = list(results["metrics"])
    lines = [f"# Perturbation checklist: deviation from humans ({cfg['task']})", "",
             f"Data: `{data['name']}`, {data['rows']} rows. Human scores: {cfg['human_scores']}. "
             f"Normalisation: {cfg['normalise']}. Seeds: {cfg['seeds']}.", "",
             "s = (h(p') - h(p)) - (f(p') - f(p)) (Sai et al. 2021, Eq. 1): s > 0 the metric "
             "dropped more than humans, s < 0 it under-reacted. Verdicts: a `drop` template is "
             "detected/missed, an `invariant` one kept/dropped.", "",
             f"![deviation heatmap]({HEATMAP_FILE})", ""]
    rows = []
    for t in results["templates"]:
        key = f"{t['criterion']}/{t['template']}"
        cells = []
        for m in metrics:
            r = results["metrics"][m]["templates"].get(key)
            cells.append("-" if r is None else f"{_fmt(r['deviation'])} ({r['verdict']})")
        rows.append([key, f"{t['test']} ({t['level']})", t["expectation"],
                     f"{t['human_score']:.2f}", f"{t['applied']}/{t['rows']}", *cells])
    lines += md.table(["criterion/template", "test (level)", "expects", "h(p')", "applied",
                       *metrics], rows)
    lines += ["", *md.signature_lines(views.signatures(results))]
    skipped = [t for t in results["templates"] if t["status"] == "skipped"]
    if skipped:
        lines += ["", "## Skipped templates", ""]
        lines += [f"- {t['criterion']}/{t['template']}: {t['reason']}" for t in skipped]
    errors = [(m, e["error"]) for m, e in results["metrics"].items() if e["error"]]
    if errors:
        lines += ["", "## Metric errors", ""] + [f"- {m}: {e}" for m, e in errors]
    lines += ["", "## Normalisation", ""]
    for m, e in results["metrics"].items():
        n = e["normalisation"]
        if n:
            lines.append(f"- {m}: {n['method']} [{n['low']:g}, {n['high']:g}]")
    lines += ["", "## Examples", ""]
    for t in results["templates"]:
        for ex in t["examples"]:
            lines += [f"- **{t['criterion']}/{t['template']}** (`{ex['id']}`)",
                      f"  - gold: {md.escape(ex['gold'])}",
                      f"  - perturbed: {md.escape(ex['perturbed'])}"]
    return "\n".join(lines) + "\n"


def render_deviation_report(results: dict[str, Any]) -> ReportFiles:
    """The report folder: results.json, report.md and the heatmap."""
    return ReportFiles(results, {MARKDOWN_FILE: render_markdown(results),
                                 HEATMAP_FILE: render_png(build_heatmap(results))})
