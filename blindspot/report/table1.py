"""Table 1 of a run for a paper: ``blindspot report results.json --format csv|latex|markdown``.

The blind-spots paper (He et al., 2023) summarises its findings in one table per dataset: tests as
rows, metrics as columns, a verdict and the relative change (in % of the gold score) per cell.
This module reads a finished run's ``results.json`` (schema :mod:`blindspot.report.schema`) and
writes that table as CSV, LaTeX or markdown. The verdicts are the report's own
(:func:`blindspot.report.views.verdict_cell`), each format only names them its way: CSV in words,
LaTeX with macros a paper can redefine, markdown with the report's symbols. A fail within the
noise keeps its mark in every format.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from blindspot.report import markdown, views
from blindspot.report.schema import SCHEMA_VERSION, STATUSES
from blindspot.report.writer import RESULTS_FILE

#: the results versions whose tests carry a ``status`` (what the table shows)
READABLE_VERSIONS = (1, SCHEMA_VERSION)

#: a cell's status (:class:`blindspot.report.views.Cell`) as a word, for CSV
WORDS = {"pass": "pass", "fail": "fail", views.WITHIN_NOISE: "fail (within noise)",
         "error": "error", "undecided": "undecided", "missing": ""}

#: the same in LaTeX; the macros are defined (``\providecommand``) above the table
LATEX_MARKS = {"pass": r"\bspass{}", "fail": r"\bsfail{}",
               views.WITHIN_NOISE: r"\bsfail\bsnoise{}",
               "error": "error", "undecided": "n/a", "missing": "--"}
LATEX_MACROS = (r"\providecommand{\bspass}{\ensuremath{\checkmark}}  % \checkmark: amssymb",
                r"\providecommand{\bsfail}{\ensuremath{\times}}",
                r"\providecommand{\bsnoise}{\ensuremath{^{\sim}}}")
LATEX_LEGEND = (r"\bspass{}: the test's verdict rule holds; \bsfail{}: it does not; "
                r"\bsfail\bsnoise{}: a fail within the noise (more rows or seeds could change "
                r"it); the percentage is the relative change in \% of the gold score, "
                r"$\Delta$ the absolute change where the gold score is 0; n/a: undecided.")

# the characters LaTeX reads as markup, and how to write them as text
_LATEX_SPECIAL = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#",
                  "_": r"\_", "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}",
                  "^": r"\textasciicircum{}", "<": r"\textless{}", ">": r"\textgreater{}",
                  "Δ": r"$\Delta$", views.MISSING: "--"}
_LATEX_PATTERN = re.compile("|".join(re.escape(c) for c in _LATEX_SPECIAL))


class ResultsFileError(ValueError):
    """A results file that cannot be read as a rank run's results (the message says why)."""


@dataclass(frozen=True)
class Table:
    """One dataset's Table 1: the metric columns and, per test, its category and cells."""

    dataset: str
    metrics: tuple[str, ...]
    rows: tuple[views.SummaryRow, ...]
    changes: tuple[tuple[str, ...], ...]  # per row, per metric: the change shown ("" if none)


def latex_escape(text: Any) -> str:
    """``text`` as literal LaTeX on one line: every special character written as text."""
    flat = " ".join(str(text).splitlines())
    return _LATEX_PATTERN.sub(lambda match: _LATEX_SPECIAL[match.group(0)], flat)


def _cell_change(result: Mapping[str, Any] | None) -> str:
    """The change a verdict cell shows (``-12.3%``, ``Δ+0.0123``), empty when it shows none."""
    if result is None or result.get("status") not in views.SYMBOLS:
        return ""
    shown = views.change(result.get("relative_change"), result.get("absolute_change"))
    return "" if shown == views.MISSING else shown


def dataset_table(name: str, data: Mapping[str, Any]) -> Table:
    """The Table 1 of one dataset of a run."""
    metrics = data.get("metrics", {})
    tests = views.dataset_tests(data)
    return Table(name, tuple(metrics), tuple(views.summary_rows(data)),
                 tuple(tuple(_cell_change(entry.get("tests", {}).get(test))
                             for entry in metrics.values()) for test in tests))


def tables(results: Mapping[str, Any]) -> list[Table]:
    """One table per dataset, in the file's order."""
    return [dataset_table(name, data) for name, data in results.get("datasets", {}).items()]


def _worded(status: str, shown: str, marks: Mapping[str, str]) -> str:
    return " ".join(part for part in (marks[status], shown) if part)


def render_csv(results: Mapping[str, Any]) -> str:
    """Every dataset's table in one CSV: ``dataset, test, category`` then one column per metric,
    a cell in words and the change, e.g. ``fail (within noise) +1.0%``."""
    found = tables(results)
    metrics = list(dict.fromkeys(m for table in found for m in table.metrics))
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["dataset", "test", "category", *metrics])
    for table in found:
        for row, changes in zip(table.rows, table.changes, strict=True):
            cells = {m: _worded(c.status, shown, WORDS)
                     for m, c, shown in zip(table.metrics, row.cells, changes, strict=True)}
            writer.writerow([table.dataset, row.test, row.category,
                             *(cells.get(m, "") for m in metrics)])
    return buffer.getvalue()


def _latex_table(table: Table, label: int) -> list[str]:
    header = ["test", "category", *table.metrics]
    lines = [r"\begin{table}[t]", r"\centering",
             r"\begin{tabular}{ll" + "c" * len(table.metrics) + "}", r"\hline",
             " & ".join(latex_escape(h) for h in header) + r" \\", r"\hline"]
    for row, changes in zip(table.rows, table.changes, strict=True):
        cells = [_worded(c.status, latex_escape(shown), LATEX_MARKS)
                 for c, shown in zip(row.cells, changes, strict=True)]
        lines.append(" & ".join([latex_escape(row.test), latex_escape(row.category), *cells])
                     + r" \\")
    lines += [r"\hline", r"\end{tabular}",
              rf"\caption{{Blind-spot tests on {latex_escape(table.dataset)}. {LATEX_LEGEND}}}",
              rf"\label{{tab:blindspot-{label}}}", r"\end{table}", ""]
    return lines


def render_latex(results: Mapping[str, Any]) -> str:
    """One LaTeX ``table`` per dataset, after the verdict macros (``\\providecommand``: a paper
    that defines them first keeps its own)."""
    lines = [f"% Table 1 of a blind-spot run ({views.tool_line(results)})", *LATEX_MACROS, ""]
    for number, table in enumerate(tables(results), start=1):
        lines += _latex_table(table, number)
    return "\n".join(lines)


def render_markdown(results: Mapping[str, Any]) -> str:
    """Each dataset's summary table and legend, exactly as report.md shows them."""
    lines: list[str] = []
    for name, data in results.get("datasets", {}).items():
        lines += [f"## Dataset {markdown.escape(name)}", "", *markdown.summary(results, data)]
    return "\n".join(lines).rstrip("\n") + "\n"


#: ``--format`` -> the renderer
FORMATS: dict[str, Callable[[Mapping[str, Any]], str]] = {
    "csv": render_csv, "latex": render_latex, "markdown": render_markdown}


def _check_tests(path: Path, results: Mapping[str, Any]) -> None:
    datasets = results.get("datasets")
    if not isinstance(datasets, Mapping):
        raise ResultsFileError(f"{path}: field 'datasets' is missing or not an object; pass the "
                               "results.json of a `blindspot run`")
    for dataset, data in datasets.items():
        for metric, entry in (data.get("metrics") or {}).items():
            for test, result in (entry.get("tests") or {}).items():
                if result.get("status") not in STATUSES:
                    raise ResultsFileError(
                        f"{path}: dataset {dataset!r}, metric {metric!r}, test {test!r}: field "
                        f"'status' is {result.get('status')!r}, expected one of "
                        f"{', '.join(STATUSES)}; rerun `blindspot run` to rewrite the file")


def load_results(path: Path) -> dict[str, Any]:
    """A rank run's results from ``path``; :class:`ResultsFileError` says what is wrong."""
    path = Path(path)
    if path.is_dir():
        path = path / RESULTS_FILE
    try:
        results = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ResultsFileError(f"{path}: no such file; pass the results.json in a run's report "
                               "folder (blindspot run --out)") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ResultsFileError(f"{path}: not a readable JSON file ({error}); pass the "
                               "results.json a `blindspot run` wrote") from None
    if not isinstance(results, dict):
        raise ResultsFileError(f"{path}: a JSON {type(results).__name__}, not a results object")
    version = results.get("schema_version")
    if version not in READABLE_VERSIONS:
        raise ResultsFileError(f"{path}: field 'schema_version' is {version!r}; this blindspot "
                               f"reads {', '.join(map(str, READABLE_VERSIONS))} (rerun `blindspot "
                               "run` with this version to rewrite it)")
    protocol = results.get("protocol", "rank")
    if protocol != "rank":
        raise ResultsFileError(f"{path}: results of the {protocol!r} protocol; Table 1 "
                               "summarises the rank protocol's verdicts (its report.md has "
                               "this protocol's tables)")
    _check_tests(path, results)
    return results
