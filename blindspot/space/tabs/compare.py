"""Compare tab: the blind-spot matrix of the session's runs and uploaded ``results.json`` files.

Rows are tests, columns metrics (per dataset and run where several are shown), cells the verdict
and relative change; the last row counts each metric's failed tests. The matrix downloads as CSV.
Only rank-protocol results have verdicts per test: the other protocols' runs are not offered and
their uploaded ``results.json`` files get a message saying so.
"""

import csv
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import gradio as gr

from blindspot.space.limits import DEFAULT_LIMITS, SpaceLimits
from blindspot.space.matrix import blindspot_matrix, matrix_csv_rows, matrix_html
from blindspot.space.tab import SpaceTab, register_tab
from blindspot.space.uploads import UploadError, read_results


def collect_runs(session_runs: Sequence[dict[str, Any]], chosen: Sequence[str],
                 uploads: Sequence[str] | None, limits: SpaceLimits = DEFAULT_LIMITS
                 ) -> tuple[list[tuple[str, dict]], list[str]]:
    """``(label, results)`` of the ticked session runs and readable uploads, and upload errors."""
    runs, errors = [], []
    for run in session_runs:
        if run["label"] in chosen:
            runs.append((run["label"], json.loads(Path(run["results"]).read_text("utf-8"))))
    for path in uploads or []:
        try:
            runs.append((Path(path).name, read_results(path, limits=limits)))
        except UploadError as error:
            errors.append(str(error))
    return runs, errors


def write_matrix_csv(rows: list[list[str]], path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8", newline="") as handle:
        csv.writer(handle).writerows(rows)
    return path


def build(context: Any) -> None:
    """The tab's components and events."""

    workspace = context.workspace
    gr.Markdown("Tick runs of this session and/or upload `results.json` files of earlier runs. "
                "The matrix is rank-protocol verdicts: other protocols' runs are not listed "
                "and their files are refused (their report shows in the stress tab).")
    chosen = gr.CheckboxGroup([], label="Runs of this session", elem_id="compare-runs")
    uploads = gr.File(label="results.json files", file_count="multiple", file_types=[".json"],
                      elem_id="compare-uploads")
    show = gr.Button("Show the blind-spot matrix", variant="primary", elem_id="compare-button")
    errors = gr.Markdown(elem_id="compare-errors")
    table = gr.HTML(elem_id="blindspot-matrix")
    download = gr.File(label="matrix.csv", elem_id="matrix-csv")

    def on_runs(runs: list[dict[str, Any]]) -> Any:
        labels = [r["label"] for r in runs]
        return gr.update(choices=labels, value=labels)

    def on_show(runs: list[dict[str, Any]], ticked: list[str], files: list[str] | None,
                request: gr.Request) -> tuple[str, str, str | None]:
        picked, problems = collect_runs(runs, ticked or [], files, context.limits)
        message = "\n".join(f"**Error:** {p}" for p in problems)
        if not picked:
            return message or "Nothing to compare yet.", matrix_html(blindspot_matrix([])), None
        matrix = blindspot_matrix(picked)
        path = workspace.folder(request.session_hash, "compare") / "matrix.csv"
        return message, matrix_html(matrix), str(write_matrix_csv(matrix_csv_rows(matrix), path))

    context.runs.change(on_runs, context.runs, chosen)
    show.click(on_show, [context.runs, chosen, uploads], [errors, table, download],
               api_name="compare")


TAB = register_tab(SpaceTab("compare", "Compare metrics", build, 30))
