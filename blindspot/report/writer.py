"""Writing a run's report folder: results.json, report.md, the plots and report.html.

results.json and the markdown are rendered before the first file is written (so invalid results,
e.g. with a NaN, write nothing), and every file is written atomically, so a killed run never
leaves a half-written one.
"""

from __future__ import annotations

import json
from pathlib import Path

from blindspot.report.files import atomic_write_text
from blindspot.report.html import render_html
from blindspot.report.markdown import render_markdown
from blindspot.report.plots import PLOT_FOLDER, plot_names, write_plots

RESULTS_FILE = "results.json"
MARKDOWN_FILE = "report.md"
HTML_FILE = "report.html"


def results_json(results: dict) -> str:
    """The canonical text of ``results.json``; raises ValueError on NaN or infinity."""
    return json.dumps(results, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def write_report(results: dict, out: Path) -> dict[str, Path]:
    """Write the whole report of ``results`` into the folder ``out`` and return the paths.

    Returns:
        ``results``, ``markdown``, ``html`` (the files), ``plots`` (their folder) and one entry
        ``"<dataset>/<test>"`` per plot.
    """
    out = Path(out)
    text = results_json(results)
    markdown = render_markdown(results, plot_names(results))
    out.mkdir(parents=True, exist_ok=True)
    plots = write_plots(results, out)
    page = render_html(results, plots, base=out)
    paths = {"results": atomic_write_text(out / RESULTS_FILE, text),
             "markdown": atomic_write_text(out / MARKDOWN_FILE, markdown),
             "html": atomic_write_text(out / HTML_FILE, page),
             "plots": out / PLOT_FOLDER}
    paths.update({key: out / name for key, name in plots.items()})
    return paths
