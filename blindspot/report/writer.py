"""The report folder of a rank run: results.json, report.md, the plots and report.html.

:func:`render_report` renders every file (the plots included) before anything is written, as
:class:`~blindspot.report.files.ReportFiles`; :func:`blindspot.report.files.write_folder` writes
it, atomically, results.json first.
"""

from __future__ import annotations

from typing import Any

from blindspot.report.files import (
    HTML_FILE,
    MARKDOWN_FILE,
    RESULTS_FILE,
    ReportFiles,
    results_json,
)
from blindspot.report.html import render_html
from blindspot.report.markdown import render_markdown
from blindspot.report.plots import plot_names, render_plots


def render_report(results: dict[str, Any]) -> ReportFiles:
    """The whole report of ``results``: report.md, report.html (the plots embedded) and one
    ``plots/<dataset>--<test>.png`` per test of every dataset."""
    names = plot_names(results)
    images = render_plots(results)
    return ReportFiles(results, {MARKDOWN_FILE: render_markdown(results, names),
                                 HTML_FILE: render_html(results, images),
                                 **{names[key]: png for key, png in images.items()}})


# the file names and the JSON text, for the modules that read a rank report folder
__all__ = ["HTML_FILE", "MARKDOWN_FILE", "RESULTS_FILE", "render_report", "results_json"]
