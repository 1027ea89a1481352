"""The HTML report of a blind-spot run: one self-contained page that still works when moved.

It shows the same summary as the markdown report with coloured cells, and embeds every plot as a
base64 data URI; all CSS is inline and there is no JavaScript. Every text from the results is
escaped, since worst examples are arbitrary model inputs.
"""

from __future__ import annotations

import base64
import html
from collections.abc import Mapping, Sequence
from typing import Any

from blindspot.report import views

STYLE = """
body { font-family: sans-serif; margin: 2em; color: #222; }
table { border-collapse: collapse; margin: 0.5em 0 1em; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: left; vertical-align: top; }
th { background: #f3f3f3; }
td.pass { background: #d8f0d8; } td.fail { background: #f8d4d4; }
td.fail_within_noise { background: #fbe7c6; }
td.error { background: #fde3c4; } td.undecided, td.missing { background: #eeeeee; color: #666; }
img { max-width: 100%; }
.note { color: #555; font-size: 0.9em; }
"""


def esc(text: Any) -> str:
    """``text`` escaped for HTML content and attribute values."""
    return html.escape(str(text), quote=True)


def table(header: Sequence[str], rows: Sequence[Sequence[str]],
          classes: Sequence[Sequence[str]] | None = None,
          titles: Sequence[Sequence[str]] | None = None) -> str:
    """An HTML table; ``classes`` gives each cell's CSS class and ``titles`` its tooltip (row by
    row) where wanted."""
    head = "".join(f"<th>{esc(h)}</th>" for h in header)
    body = []
    for index, row in enumerate(rows):
        row_classes = classes[index] if classes else [""] * len(row)
        row_titles = titles[index] if titles else [""] * len(row)
        cells = "".join(f"<td{_attributes(c, title)}>{esc(text)}</td>"
                        for text, c, title in zip(row, row_classes, row_titles, strict=True))
        body.append(f"<tr>{cells}</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def _attributes(css: str, title: str) -> str:
    """A cell's class and title attributes, each only when it has one."""
    return (f' class="{esc(css)}"' if css else "") + (f' title="{esc(title)}"' if title else "")


def items(pairs: Sequence[tuple[str, str]]) -> str:
    """A list of ``label: value`` pairs."""
    return "<ul>" + "".join(f"<li><b>{esc(k)}</b>: {esc(v)}</li>" for k, v in pairs) + "</ul>"


def lines_list(lines: Sequence[str]) -> str:
    """A plain bullet list."""
    return "<ul>" + "".join(f"<li>{esc(line)}</li>" for line in lines) + "</ul>"


def legend_list(items: Sequence[views.LegendItem]) -> str:
    """A bullet list, each item's details a list nested in it."""
    return "<ul>" + "".join(f"<li>{esc(item.text)}"
                            + (lines_list(item.details) if item.details else "") + "</li>"
                            for item in items) + "</ul>"


def summary(results: Mapping[str, Any], data: Mapping[str, Any]) -> str:
    """The dataset's summary table with coloured cells, and its legend."""
    rows = views.summary_rows(data)
    if not rows:
        return "<p>No test was run on this dataset.</p>"
    header = ["test", "category", *data.get("metrics", {})]
    texts = [[row.test, row.category, *(c.text for c in row.cells)] for row in rows]
    classes = [["", "", *(c.status for c in row.cells)] for row in rows]
    titles = [["", "", *(c.note for c in row.cells)] for row in rows]
    legend = legend_list(views.legend(results))
    return (table(header, texts, classes, titles) + signature_list(views.signatures(data))
            + f'<div class="note">{legend}</div>')


def signature_list(signatures: Sequence[tuple[str, str]]) -> str:
    """Each metric's signature under the summary table."""
    if not signatures:
        return ""
    return (f'<div class="note"><p>{esc(views.SIGNATURES_NOTE)}</p><ul>'
            + "".join(f"<li><b>{esc(metric)}</b>: <code>{esc(text)}</code></li>"
                      for metric, text in signatures) + "</ul></div>")


def expectations(data: Mapping[str, Any]) -> str:
    """The examination paper's expectations per metric, when the run checked any."""
    rows = views.expectation_rows(data)
    if not rows:
        return ""
    header = [*views.EXPECTATION_HEADER, *data.get("metrics", {})]
    texts = [[row.test, row.category, *(c.text for c in row.cells)] for row in rows]
    classes = [["", "", *(c.status for c in row.cells)] for row in rows]
    notes = lines_list(views.expectations_legend() + views.expectation_lines(data))
    return (f"<h3>{esc(views.EXPECTATIONS_TITLE)}</h3>" + table(header, texts, classes)
            + f'<div class="note">{notes}</div>')


def problems(data: Mapping[str, Any]) -> str:
    """The sections after the tables (:func:`views.problem_sections`): skipped tests, metric
    errors, flags and usage."""
    return "".join(f"<h3>{esc(title)}</h3>{items(pairs)}"
                   for title, pairs in views.problem_sections(data))


def data_uri(png: bytes) -> str:
    """The PNG ``png`` as a ``data:`` URI, so the page needs no file beside it."""
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


def plot_image(key: str, images: Mapping[str, bytes]) -> str:
    """The embedded plot of ``"<dataset>/<test>"``, when there is one."""
    png = images.get(key)
    if png is None:
        return ""
    return f'<p><img alt="{esc(key)}" src="{data_uri(png)}"></p>'


def metric_details(metric: str, entry: Mapping[str, Any], result: Mapping[str, Any]) -> str:
    """One metric's verdict, points, per-sample view and worst examples on one test."""
    parts = [f"<h4>{esc(metric)}</h4>", f"<p>Verdict: {esc(views.verdict_line(result))}.</p>"]
    note = views.direction_note(entry)
    if note:
        parts.append(f'<p class="note">{esc(note)}.</p>')
    if result.get("points"):
        parts.append(table(views.POINT_HEADER, views.point_rows(result["points"])))
    if result.get("per_sample"):
        parts.append("<p>Per sample:</p>"
                     + lines_list([views.per_sample_line(s) for s in result["per_sample"]]))
    if result.get("worst_examples"):
        rows = [views.example_row(e) for e in result["worst_examples"]]
        parts.append("<p>Worst examples (the rows the noise lowered least):</p>"
                     + table(views.EXAMPLE_HEADER, rows))
    return "".join(parts)


def test_details(name: str, data: Mapping[str, Any], test: str,
                 images: Mapping[str, bytes]) -> str:
    """One test: its plot, then each metric's details, folded under a summary line."""
    title = f"{test} ({views.test_category(data, test)})"
    body = plot_image(f"{name}/{test}", images) + "".join(
        metric_details(metric, entry, entry["tests"][test])
        for metric, entry in views.test_entries(data, test))
    return f"<details open><summary><b>{esc(title)}</b></summary>{body}</details>"


def dataset_section(results: Mapping[str, Any], name: str, data: Mapping[str, Any],
                    images: Mapping[str, bytes]) -> str:
    """Everything about one dataset."""
    details = "".join(test_details(name, data, test, images)
                      for test in views.dataset_tests(data))
    return (f"<section><h2>Dataset {esc(name)}</h2>{items(views.dataset_items(data))}"
            f"{summary(results, data)}{expectations(data)}{problems(data)}"
            f"<h3>Details</h3>{details}</section>")


def render_html(results: dict, images: Mapping[str, bytes] | None) -> str:
    """The self-contained HTML report of ``results``.

    Args:
        results: a run's results, as documented in :mod:`blindspot.report.schema`.
        images: ``"<dataset>/<test>"`` -> its PNG (as
            :func:`blindspot.report.plots.render_plots` returns), embedded. None: no images.
    """
    images = images or {}
    sections = "".join(dataset_section(results, name, data, images)
                       for name, data in results.get("datasets", {}).items())
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>Blind-spot report</title><style>{STYLE}</style></head><body>"
            f"<h1>Blind-spot report</h1><p>{esc(views.tool_line(results))}</p>"
            f"<h2>Run</h2>{table(views.RUN_HEADER, views.config_items(results))}{sections}"
            "</body></html>\n")
