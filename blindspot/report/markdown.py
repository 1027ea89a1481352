"""The markdown report of a blind-spot run: one summary table per dataset, then the details.

The summary follows Table 1 of the blind-spots paper (He et al., 2023): tests as rows, metrics as
columns, a verdict and a relative change per cell. The text depends only on the results (and the
plot file names), so the same run always gives the same report.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import quote

from blindspot.report import views

# backslash-escape what markdown would read as markup; "_" only where it could start emphasis
_SPECIAL = re.compile(r"[\\`*\[\]<>|~&]|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])")


def escape(text: Any) -> str:
    """``text`` as literal markdown on one line: markup characters and pipes backslash-escaped."""
    flat = " ".join(str(text).splitlines())
    return _SPECIAL.sub(lambda match: "\\" + match.group(0), flat)


def table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    """A GitHub-flavoured markdown table; every cell is escaped."""
    lines = ["| " + " | ".join(escape(h) for h in header) + " |",
             "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(escape(c) for c in row) + " |" for row in rows]
    return lines


def bullets(items: Sequence[tuple[str, str]]) -> list[str]:
    """``- **label**: value`` lines."""
    return [f"- **{escape(label)}**: {escape(value)}" for label, value in items]


def summary(results: Mapping[str, Any], data: Mapping[str, Any]) -> list[str]:
    """The dataset's summary table and its legend."""
    header = ["test", "category", *data.get("metrics", {})]
    rows = [[row.test, row.category, *(cell.text for cell in row.cells)]
            for row in views.summary_rows(data)]
    if not rows:
        return ["No test was run on this dataset.", ""]
    return [*table(header, rows), "", *signature_lines(views.signatures(data)),
            *legend(views.legend(results)), ""]


def code(text: str) -> str:
    """``text`` as inline code, byte for byte (fenced by more backticks than it holds)."""
    fence = "`" * (max((len(run) for run in re.findall(r"`+", text)), default=0) + 1)
    return f"{fence} {text} {fence}" if fence != "`" else f"`{text}`"


def signature_lines(signatures: Sequence[tuple[str, str]]) -> list[str]:
    """Each metric's signature, as code so that it reads byte for byte as results.json has it."""
    if not signatures:
        return []
    return [escape(views.SIGNATURES_NOTE), "",
            *(f"- {escape(metric)}: {code(text)}" for metric, text in signatures), ""]


def legend(items: Sequence[views.LegendItem]) -> list[str]:
    """A bullet list, each item's details nested under it."""
    return [line for item in items
            for line in (f"- {escape(item.text)}", *(f"  - {escape(d)}" for d in item.details))]


def anchors(data: Mapping[str, Any]) -> list[str]:
    """Each metric's sanity anchors (mean scores of reference texts over the first gold rows),
    so a verdict's change reads against what, say, an unrelated text scores."""
    found = {metric: entry["anchors"] for metric, entry in data.get("metrics", {}).items()
             if entry.get("anchors")}
    if not found:
        return []
    names = list(dict.fromkeys(name for means in found.values() for name in means))
    rows = [[escape(name), *(views.number(means.get(name)) for means in found.values())]
            for name in names]
    return ["### Sanity anchors (score units)", "",
            "Mean score over the first gold rows of the reference as hypothesis, the gold, "
            "another row's gold, the copied source, an empty text, the gold's words shuffled "
            "and random characters: the scale to read each verdict's change against.", "",
            *table(["anchor", *map(escape, found)], rows), ""]


def problems(data: Mapping[str, Any]) -> list[str]:
    """The sections after the tables (:func:`views.problem_sections`): skipped tests, metric
    errors, flags and usage."""
    return [line for title, items in views.problem_sections(data)
            for line in (f"### {title}", "", *bullets(items), "")]


def expectations(data: Mapping[str, Any]) -> list[str]:
    """The examination paper's expectations per metric, when the run checked any."""
    rows = views.expectation_rows(data)
    if not rows:
        return []
    header = [*views.EXPECTATION_HEADER, *data.get("metrics", {})]
    return [f"### {views.EXPECTATIONS_TITLE}", "",
            *table(header, [[r.test, r.category, *(c.text for c in r.cells)] for r in rows]), "",
            *(f"- {escape(line)}" for line in views.expectations_legend()), "",
            *(f"- {escape(line)}" for line in views.expectation_lines(data)), ""]


def plot_image(name: str, test: str, plots: Mapping[str, str] | None) -> list[str]:
    """The markdown image of the test's plot, when there is one."""
    path = (plots or {}).get(f"{name}/{test}")
    if path is None:
        return []
    return [f"![{escape(test)} on {escape(name)}]({quote(path)})", ""]


def metric_details(metric: str, entry: Mapping[str, Any], result: Mapping[str, Any]) -> list[str]:
    """One metric's points, per-sample view and worst examples on one test."""
    lines = [f"#### {escape(metric)}", "", f"Verdict: {escape(views.verdict_line(result))}.", ""]
    note = views.direction_note(entry)
    if note:
        lines += [f"Note: {escape(note)}.", ""]
    points = result.get("points", [])
    if points:
        lines += [*table(views.POINT_HEADER, views.point_rows(points)), ""]
    per_sample = result.get("per_sample", [])
    if per_sample:
        lines += ["Per sample:", "", *(f"- {escape(views.per_sample_line(s))}" for s in per_sample),
                  ""]
    examples = result.get("worst_examples", [])
    if examples:
        lines += ["Worst examples (the rows the noise lowered least):", "",
                  *table(views.EXAMPLE_HEADER, [views.example_row(e) for e in examples]), ""]
    return lines


def test_details(name: str, data: Mapping[str, Any], test: str,
                 plots: Mapping[str, str] | None) -> list[str]:
    """The plot of one test, then each metric's details on it."""
    lines = [f"### {escape(test)} ({escape(views.test_category(data, test))})", "",
             *plot_image(name, test, plots)]
    for metric, entry in views.test_entries(data, test):
        lines += metric_details(metric, entry, entry["tests"][test])
    return lines


def dataset_section(results: Mapping[str, Any], name: str, data: Mapping[str, Any],
                    plots: Mapping[str, str] | None) -> list[str]:
    """Everything about one dataset."""
    lines = [f"## Dataset {escape(name)}", "", *bullets(views.dataset_items(data)), "",
             *summary(results, data), *anchors(data), *expectations(data), *problems(data)]
    for test in views.dataset_tests(data):
        lines += test_details(name, data, test, plots)
    return lines


def render_markdown(results: dict, plots: dict[str, str] | None = None) -> str:
    """The markdown report of ``results`` (the ``results.json`` schema).

    Args:
        results: a run's results, as documented in :mod:`blindspot.report.schema`.
        plots: ``"<dataset>/<test>"`` -> the plot's file name relative to the report, as
            :func:`blindspot.report.plots.plot_names` returns; without it, no images.
    """
    lines = ["# Blind-spot report", "", escape(views.tool_line(results)), "", "## Run", "",
             *table(views.RUN_HEADER, views.config_items(results)), ""]
    for name, data in results.get("datasets", {}).items():
        lines += dataset_section(results, name, data, plots)
    return "\n".join(lines).rstrip("\n") + "\n"
