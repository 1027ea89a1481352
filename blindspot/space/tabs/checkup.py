"""Check-up tab: ``blindspot checkup`` in the Space (issue 21).

The visitor picks one metric (the stress tab's choices, or a typed spec checked against the
Space's allow-list, :func:`blindspot.runner.metric_spec.check_visitor_metric`), the data (the
stress tab's picker: the demo corpus of a task, a built dataset's gold config, or an upload
checked by :mod:`blindspot.space.uploads` and kept in the session's folder) and how many rows to
check (at most the Space's ``max_rows``). The check-up runs in the session's worker slot
(:meth:`blindspot.space.session.Workspace.run_to_end`: one run at a time, counted against the
session's runs, stopped after the run time limit, Stop ends it) and writes its report folder
into the session's ``runs/<n>``; the page shows the verdict of every check, the sanity anchors
in score units and the report.
"""

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from blindspot.checkup.checks import anchors_table
from blindspot.errors import message
from blindspot.protocols.declarations import CHECKUP
from blindspot.runner.metric_spec import check_visitor_metric, resolve_metrics
from blindspot.space.controls import run_controls, wire_run
from blindspot.space.datapick import build_picker, data_source, mapping_of, show_upload
from blindspot.space.limits import DEFAULT_LIMITS, SpaceLimits
from blindspot.space.tab import SpaceTab, register_tab
from blindspot.space.tabs.stress import metric_choices, report_outputs, report_text

#: the columns of the verdict table
VERDICT_HEADER = ["check", "verdict", "summary"]


def checkup_request(metric: str, data: str, task: str, columns: dict[str, str | None] | None,
                    rows: float, limits: SpaceLimits = DEFAULT_LIMITS) -> dict[str, Any]:
    """The worker's request of the ``checkup`` protocol, checked before any process starts: one
    metric a visitor may run, and 2 to ``limits.max_rows`` rows (the declared, visitor-safe
    ``rows`` option)."""
    text = (metric or "").strip()
    if not text:
        raise ValueError("pick the metric to check up")
    check_visitor_metric(text, limits.allow_hub_models)
    if len(resolve_metrics(text)) != 1:
        raise ValueError(f"a check-up examines one metric at a time; {text!r} names several")
    if rows is None or int(rows) != rows or not 2 <= int(rows) <= limits.max_rows:
        raise ValueError(f"rows must be a whole number from 2 to {limits.max_rows:,} (the "
                         f"limit of this Space), got {rows!r}")
    options = CHECKUP.check_options({"rows": int(rows)}, visitor=True)
    return {"protocol": CHECKUP.name, "metrics": text, "data": data, "task": task,
            "columns": columns, "options": options, "out": None}


@dataclass
class CheckupView:
    """What the page shows of a finished check-up."""

    verdicts: list[list[str]]   #: one ``[check, verdict, summary]`` row per check
    anchors: list[list[Any]]    #: ``[anchor, mean score, minus gold]`` rows
    report: str                 #: report.md without its title
    files: list[str]            #: results.json and report.md


def checkup_view(folder: Path) -> CheckupView:
    """The view of the check-up report in ``folder``."""
    results, _, files = report_outputs(folder)
    checks = results["checks"]
    anchors = checks.get("anchors", {})
    rows = anchors_table(anchors["figures"])[1] if anchors.get("verdict") == "info" else []
    return CheckupView([[c["title"], c["verdict"], c["summary"]] for c in checks.values()],
                       rows, report_text(folder), files)


def run_checkup_tab(workspace: Any, session: str | None, metric: str, kind: str, task: str,
                    built: str | None, upload: str | None, mapping: dict[str, str | None],
                    rows: float, datasets_dir: Path, limits: SpaceLimits = DEFAULT_LIMITS,
                    progress: Any = None) -> tuple[str, CheckupView | None]:
    """Check the choices, run the check-up in the session's worker slot and read its report:
    ``("done", view)`` or ``("stopped", None)``. Bad choices raise ValueError (nothing is
    written but the kept upload); a failed run raises RuntimeError with its message."""
    ticket = workspace.ticket(session)
    session_dir = workspace.folder(session)
    data, task_used, columns, _ = data_source(kind, task, built, upload, mapping, datasets_dir,
                                              session_dir, limits=limits)
    request = checkup_request(metric, data, task_used, columns, rows, limits)
    folder = workspace.new_run_folder(session)  # counted only once all is checked
    outcome = workspace.run_to_end(session, {**request, "out": str(folder)}, folder, ticket,
                                   progress)
    if outcome == "failed":
        raise RuntimeError(f"the check-up failed: {workspace.failure(session)}")
    return outcome, checkup_view(folder) if outcome == "done" else None


def build(context: Any) -> None:
    """The tab's components and events."""
    import gradio as gr  # lazy: the UI library, only when the Space is built (as the other tabs)

    workspace, datasets_dir, limits = context.workspace, context.datasets_dir, context.limits
    gr.Markdown("Batch and order invariance, determinism across processes, the input length a "
                "metric is blind past, normalisation, reference handling and sanity anchors in "
                "the metric's own units (`blindspot checkup`).")
    with gr.Row():
        with gr.Column():
            picker = build_picker(context, prefix="checkup-", task_id="checkup-task")
        with gr.Column():
            metric = gr.Dropdown(metric_choices(), value="rouge", allow_custom_value=True,
                                 label="Metric (or a spec such as rouge.rouge2)",
                                 elem_id="checkup-metric")
            rows = gr.Number(value=min(CHECKUP.option("rows").default, limits.max_rows),
                             precision=0,
                             minimum=2, maximum=limits.max_rows,
                             label=f"Rows to check (2 to {limits.max_rows:,})",
                             elem_id="checkup-rows")
    run, stop, status = run_controls("Run check-up", "checkup-button", "checkup-stop",
                                     "checkup-status")
    verdicts = gr.Dataframe(headers=VERDICT_HEADER, label="Verdicts", wrap=True,
                            elem_id="checkup-verdicts")
    anchors = gr.Dataframe(headers=list(anchors_table({"anchors": {}})[0]),
                           label="Sanity anchors (score units)", elem_id="checkup-anchors")
    report = gr.Markdown(elem_id="checkup-report")
    files = gr.File(label="results.json and report", file_count="multiple",
                    elem_id="checkup-files")

    def on_run(kind_in: str, task_in: str, built_in: str | None, upload_in: str | None,
               hyp: str, ref: str, src: str, idc: str, metric_in: str, rows_in: float,
               request: gr.Request, progress: gr.Progress = gr.Progress()) -> tuple[Any, ...]:
        session = request.session_hash
        progress(0, desc="starting")
        try:
            outcome, view = run_checkup_tab(
                workspace, session, metric_in, kind_in, task_in, built_in, upload_in,
                mapping_of(hyp, ref, src, idc), rows_in, datasets_dir, limits, progress)
        except (ValueError, KeyError, FileNotFoundError, RuntimeError) as error:
            raise gr.Error(workspace.public(message(error), session),
                           duration=None) from None
        if view is None:
            return "Stopped.", None, None, "", None
        return (f"Check-up of **{metric_in}** ({outcome}).", view.verdicts, view.anchors,
                view.report, view.files)

    picker.upload.change(lambda path: show_upload(path, limits=limits), picker.upload,
                         [picker.status, *picker.mapping])
    wire_run(workspace, run, stop, status, on_run, [*picker.inputs, metric, rows],
             [status, verdicts, anchors, report, files], api_name="checkup")


TAB = register_tab(SpaceTab("checkup", "Check up a metric", build, 35))
