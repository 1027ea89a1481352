"""The blind-spot matrix: tests x metrics, pass/fail and relative change, across several runs.

Each column is one metric on one dataset of one run (a run of this session or an uploaded
``results.json``); each row one test. Cells use the report's own wording
(:func:`blindspot.report.views.verdict_cell`: ``✓ -12.3%``, ``✗ +0.8%``, ``✗~ +0.1%`` for a fail
within noise, ``error``, ``n/a``), so the Space, ``report.md`` and the terminal say the same thing.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from blindspot.report.views import FIRMER, MISSING, NOISE_MARK, WITHIN_NOISE, Cell, verdict_cell

#: Cell colours by status (pass green, fail red, a fail within noise amber), shared with the
#: verdict table of a run.
STATUS_STYLE = {"pass": "background:#d9f2dd", "fail": "background:#f9d0d0;font-weight:bold",
                WITHIN_NOISE: "background:#fbe7c6", "error": "background:#f3d9f7",
                "undecided": "color:#777", "missing": "color:#999"}
#: the statuses of a failed test (a blind spot, within noise or not)
FAILED = ("fail", WITHIN_NOISE)
#: the statuses of a judged test (the denominator of a column's blind-spot count)
JUDGED = ("pass", *FAILED)
#: what the footer's counts mean
FOOTER_NOTE = ("blind spots: the tests a column fails out of the tests it judged (pass or fail; "
               "tests it did not run, could not judge or erred on are not counted).")


@dataclass(frozen=True)
class Column:
    """One matrix column: a metric on a dataset of a run."""

    run: str
    dataset: str
    metric: str

    def header(self, show_run: bool, show_dataset: bool) -> str:
        parts = [self.metric]
        if show_dataset:
            parts.append(self.dataset)
        if show_run:
            parts.append(self.run)
        return " · ".join(parts)


@dataclass
class Matrix:
    """Rows of cells: ``rows[i] = (test, category, cells)``, one cell per column."""

    columns: list[Column]
    rows: list[tuple[str, str, list[Cell]]]

    def count(self, statuses: Sequence[str]) -> list[int]:
        """How many of each column's cells have one of ``statuses``."""
        return [sum(row[2][k].status in statuses for row in self.rows)
                for k in range(len(self.columns))]

    def failures(self) -> list[int]:
        """How many tests each column fails (its blind spots), within noise or not."""
        return self.count(FAILED)

    def judged(self) -> list[int]:
        """How many tests each column judged (pass or fail): the failures' denominator."""
        return self.count(JUDGED)


def blindspot_matrix(runs: Sequence[tuple[str, Mapping[str, Any]]]) -> Matrix:
    """The matrix of ``(run label, results dict)`` pairs, columns and tests in run order."""
    columns: list[Column] = []
    entries: list[Mapping[str, Any]] = []
    categories: dict[str, str] = {}
    for label, results in runs:
        for dataset, data in results.get("datasets", {}).items():
            for metric, entry in data.get("metrics", {}).items():
                columns.append(Column(label, dataset, metric))
                entries.append(entry)
                for test, result in entry.get("tests", {}).items():
                    categories.setdefault(test, str(result.get("category") or MISSING))
    rows = [(test, category,
             [verdict_cell(e.get("tests", {}).get(test), e.get("error")) for e in entries])
            for test, category in categories.items()]
    return Matrix(columns, rows)


def headers(columns: Sequence[Column]) -> list[str]:
    """Column titles: the metric, plus dataset and run only where they tell columns apart."""
    show_run = len({c.run for c in columns}) > 1
    show_dataset = len({c.dataset for c in columns}) > 1
    return [c.header(show_run, show_dataset) for c in columns]


def _title(cell: Cell) -> str:
    """The cell's explanation as a tooltip attribute (nothing when it has none)."""
    return f' title="{html.escape(cell.note)}"' if cell.note else ""


def cells_html(titles: Sequence[str], rows: Sequence[tuple[str, str, Sequence[Cell]]],
               footer: Sequence[str] | None = None, table_id: str = "verdicts",
               first: Sequence[str] = ("test", "category")) -> str:
    """A test x column HTML table with coloured verdict cells (the Space's verdict views);
    ``first`` names the two leading columns."""
    esc = html.escape
    head = "".join(f"<th>{esc(t)}</th>" for t in (*first, *titles))
    body = []
    for test, category, cells in rows:
        tds = "".join(f'<td class="{esc(c.status)}" style="{STATUS_STYLE.get(c.status, "")}"'
                      f'{_title(c)}>{esc(c.text)}</td>' for c in cells)
        body.append(f"<tr><td>{esc(test)}</td><td>{esc(category)}</td>{tds}</tr>")
    if footer is not None:
        tds = "".join(f"<td><b>{esc(f)}</b></td>" for f in footer)
        body.append(f"<tr><td><b>blind spots</b></td><td></td>{tds}</tr>")
    return (f'<table id="{esc(table_id)}" class="blindspot-verdicts" '
            f'style="border-collapse:collapse"><thead><tr>{head}</tr></thead>'
            f"<tbody>{''.join(body)}</tbody></table>")


def matrix_html(matrix: Matrix) -> str:
    """The whole matrix as an HTML table, with each column's count of failed tests last."""
    if not matrix.columns:
        return "<p>No runs yet: run a stress test or upload results.json files.</p>"
    failures = [f"{n} / {judged} judged" for n, judged in zip(matrix.failures(),
                                                               matrix.judged(), strict=True)]
    table = cells_html(headers(matrix.columns), matrix.rows, failures, table_id="matrix")
    table += f"<p>{html.escape(FOOTER_NOTE)}</p>"
    if any(c.status == WITHIN_NOISE for _, _, cells in matrix.rows for c in cells):
        table += (f"<p>✗{NOISE_MARK}: a fail within noise (the deciding step lies inside the "
                  f"seeds' spread or its bootstrap interval contains 0); {html.escape(FIRMER)}. "
                  "Hover a cell for the step that decided it.</p>")
    return table


def matrix_csv_rows(matrix: Matrix) -> list[list[str]]:
    """The matrix as plain rows (header first), for a CSV download."""
    out = [["test", "category", *headers(matrix.columns)]]
    out += [[test, category, *(c.text for c in cells)] for test, category, cells in matrix.rows]
    return out
