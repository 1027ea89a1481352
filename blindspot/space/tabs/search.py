"""Adversarial search tab: look for word edits a metric penalises least, judged by a panel.

The data comes from the same picker as the stress tab (demo corpus, built dataset, upload with a
column mapping); the run is the ``search`` protocol (:func:`blindspot.search.run_search`, He et
al. 2023, App. J) in the same child-process worker (progress bar, Stop), with small defaults
so the demo returns in seconds. The page shows per example the gold, the perturbed text as a word
diff, the edit trail and the targeted metric's relative change beside the panel's; then the
ranked edit patterns, the bar plot and the files to download (results.json, report.md).
"""

import html
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import gradio as gr

from blindspot.errors import message
from blindspot.protocols.interface import PROTOCOLS
from blindspot.report.search_report import PLOT_FILE, metric_table, pattern_table
from blindspot.report.writer import MARKDOWN_FILE, RESULTS_FILE
from blindspot.runner.metric_spec import check_visitor_metric, resolve_metrics
from blindspot.search.job import SearchSettings
from blindspot.space.controls import run_controls, wire_run
from blindspot.space.datapick import build_picker, data_source, mapping_of, show_upload
from blindspot.space.tab import SpaceTab, register_tab
from blindspot.space.tabs.stress import metric_choices
from blindspot.space.worddiff import diff_html

#: Small defaults: on the demo (chrF, 5 rows) the search reaches the noise ratio on every row
#: with about 3,000 calls, in seconds.
DEFAULTS: dict[str, Any] = {"metric": "chrf", "panel": ["bleu", "rouge"], "noise_ratio": 0.1,
            "max_calls": 5000, "max_seconds": 60.0, "seed": 0, "limit": 5}
SEARCH_FILES = (RESULTS_FILE, MARKDOWN_FILE)

#: what the budget means, beside its input
CALLS_INFO = ("one call = one candidate text scored; one step of one row costs a call per "
              "candidate edit (each word deleted, or replaced by each candidate): about words x "
              "(1 + candidates). A budget too small for a single step is refused.")
#: what stopped a search, in words (``budget.stopped_by``)
STOPPED_BY = {None: "nothing (finished)",
              "max_calls": "the call budget (max {max_calls} metric calls; the next step "
                           "needed more)",
              "max_seconds": "the time budget (max {max_seconds:g} s)"}


def _given(value: Any) -> bool:
    """False for an empty field (no limit), True for anything typed, 0 included."""
    return value not in (None, "")


def _whole(name: str, value: Any, low: int) -> int:
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a whole number, got {value!r}") from None
    if number != value and not (isinstance(value, float) and value.is_integer()):
        raise ValueError(f"{name} must be a whole number, got {value!r}")
    if number < low:
        raise ValueError(f"{name} must be at least {low}, got {number}")
    return number


def search_request(data: str, task: str, columns: Mapping[str, str | None] | None, metric: str,
                   panel: Sequence[str], noise_ratio: float, max_calls: Any, max_seconds: Any,
                   seed: Any, limit: Any, out: Path | None, allow_hub_models: bool = False
                   ) -> dict[str, Any]:
    """The worker's request for a search, checked before any process starts: the target and the
    panel against the visitor's metric allow-list, the settings against the search protocol's
    visitor-safe options."""

    metric = (metric or "").strip()
    if not metric:
        raise ValueError("pick the metric to search against")
    check_visitor_metric(metric, allow_hub_models)
    target = resolve_metrics(metric)
    if len(target) != 1:
        raise ValueError(f"the search targets one metric; {metric!r} gives "
                         f"{[s.name for s in target]}: name one output, e.g. rouge.rougeL")
    panel = [p for p in dict.fromkeys(panel or []) if p != metric]
    for member in panel:  # before any scorer is made: a model is never loaded for a bad spec
        check_visitor_metric(member, allow_hub_models)
    if panel:
        resolve_metrics(panel)
    options: dict[str, Any] = {"noise_ratio": float(noise_ratio), "panel": panel,
               "max_calls": _whole("max calls", max_calls, 1) if _given(max_calls) else None,
               "max_seconds": float(max_seconds) if _given(max_seconds) else None,
               "seed": _whole("seed", seed, 0) if _given(seed) else 0,
               "limit": _whole("rows", limit, 1) if _given(limit) else None}
    options = PROTOCOLS.get("search").check_options(options, visitor=True,
                                                    allow_hub_models=allow_hub_models)
    SearchSettings(**{k: v for k, v in options.items() if k != "panel"}).check()
    return {"protocol": "search", "data": data, "task": task,
            "columns": dict(columns) if columns else None, "metrics": [metric],
            "out": str(out) if out else None, "options": options}


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value:+.1f}%"


def trail_text(trail: Sequence[Mapping[str, Any]]) -> str:
    """The edits in order: ``old → new [pattern]``, a deletion as ``old → ∅``."""
    steps = [f"{s['old']} → {'∅' if s['new'] is None else s['new']} [{s['pattern']}]"
             for s in trail]
    return "; ".join(steps) or "no edit"


def example_rows(results: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Per example: its id, status, noise ratio, texts, edits and every metric's relative
    change (perturbed vs. gold, the search's own view), target first."""
    names = list(results["summary"]["metrics"])
    rows = []
    for example in results["examples"]:
        changes = {n: example["metrics"].get(n, {}).get("gold", {}).get("relative_change")
                   for n in names}
        rows.append({"id": example["id"], "status": example["status"],
                     "noise_ratio": example["noise_ratio"], "gold": example["gold"],
                     "perturbed": example["perturbed"], "edits": trail_text(example["trail"]),
                     "changes": changes})
    return rows


def examples_html(results: Mapping[str, Any]) -> str:
    """The per-example table: gold → perturbed as a word diff, the edit trail, the target's
    relative change beside the panel's."""

    names = list(results["summary"]["metrics"])
    target = results["config"]["metric"]["name"]
    head = "".join(f"<th>{html.escape(n)}{' (target)' if n == target else ''}</th>"
                   for n in names)
    body = []
    for row in example_rows(results):
        cells = "".join(f"<td>{_pct(row['changes'][n])}</td>" for n in names)
        ratio = "n/a" if row["noise_ratio"] is None else f"{row['noise_ratio']:.3f}"
        body.append(f"<tr><td>{html.escape(str(row['id']))}</td>"
                    f"<td>{html.escape(row['status'])} ({ratio})</td>"
                    f"<td>{diff_html(row['gold'], row['perturbed'])}</td>"
                    f"<td>{html.escape(row['edits'])}</td>{cells}</tr>")
    return (f'<table class="blindspot-verdicts" id="search-examples"><tr><th>id</th>'
            f"<th>status (noise ratio)</th><th>gold → perturbed</th><th>edits</th>{head}</tr>"
            + "".join(body) + "</table><p>Relative change of each metric's score on the "
            "perturbed text against the gold (the gold as reference), in percent.</p>")


def summary_markdown(results: Mapping[str, Any]) -> str:
    """How far the search got, and each metric's mean relative change over reached examples."""

    summary, budget = results["summary"], results["budget"]
    stopped = STOPPED_BY[budget["stopped_by"]].format(**budget)
    lines = [f"{summary['reached']} of {summary['examples']} examples reached noise ratio "
             f"{results['config']['noise_ratio']:g} (statuses {summary['statuses']}); "
             f"{budget['calls_used']} metric calls, stopped by {stopped}.", ""]
    note = results["config"]["candidates"]["note"]
    if note:
        lines += [f"Note: {note}.", ""]
    return "\n".join([*lines, "Mean over the examples that reached it:", "",
                      *metric_table(results)])


def patterns_markdown(results: Mapping[str, Any]) -> str:
    """The ranked edit patterns (the report's table), or why there are none."""

    if not results["patterns"]:
        return "No edit was kept (raise the call or time budget, or the noise ratio)."
    return "\n".join(pattern_table(results))


def search_outputs(folder: Path) -> tuple[dict[str, Any], str | None, list[str]]:
    """The results, the plot and the downloadable files of a finished search folder."""

    results = json.loads((folder / RESULTS_FILE).read_text(encoding="utf-8"))
    plot = folder / PLOT_FILE
    files = [str(folder / f) for f in SEARCH_FILES if (folder / f).is_file()]
    return results, str(plot) if plot.is_file() else None, files


def build(context: Any) -> None:
    """The tab's components and events."""


    workspace, datasets_dir, limits = context.workspace, context.datasets_dir, context.limits
    choices = metric_choices()
    gr.Markdown("Greedy word edits (deletions, embedding-neighbour replacements) that the target "
                "metric penalises least, up to the noise ratio; a panel of other metrics scores "
                "the same perturbed texts (He et al., 2023, App. J).")
    with gr.Row():
        with gr.Column():
            picker = build_picker(context, prefix="search-", task_id="search-task",
                                  task="translation")
        with gr.Column():
            metric = gr.Dropdown(choices, value=DEFAULTS["metric"], allow_custom_value=True,
                                 label="Target metric (a spec)", elem_id="search-metric")
            panel = gr.Dropdown(choices, value=DEFAULTS["panel"], multiselect=True,
                                allow_custom_value=True, label="Panel (other metrics)",
                                elem_id="search-panel")
            noise = gr.Slider(0.02, 0.5, value=DEFAULTS["noise_ratio"], step=0.01,
                              label="Target noise ratio", elem_id="search-noise")
            with gr.Row():
                max_calls = gr.Number(DEFAULTS["max_calls"], precision=0, minimum=1,
                                      label="Max metric calls", info=CALLS_INFO,
                                      elem_id="search-calls")
                max_seconds = gr.Number(DEFAULTS["max_seconds"], minimum=1,
                                        label="Max seconds", elem_id="search-seconds")
            with gr.Row():
                seed = gr.Number(DEFAULTS["seed"], precision=0, minimum=0, label="Seed",
                                 elem_id="search-seed")
                limit = gr.Number(DEFAULTS["limit"], precision=0, minimum=1,
                                  label="Rows (the first N)", elem_id="search-rows")
    run, stop, status = run_controls("Run search", "search-button", "search-stop",
                                     "search-status")
    summary = gr.Markdown(elem_id="search-summary")
    examples = gr.HTML(elem_id="search-table")
    patterns = gr.Markdown(elem_id="search-patterns")
    plot = gr.Image(label="Mean relative change per metric", type="filepath",
                    interactive=False, elem_id="search-plot")
    files = gr.File(label="results.json and report.md", file_count="multiple",
                    elem_id="search-files")

    def on_run(kind_in: str, task_in: str, built_in: str | None, upload_in: str | None,
               hyp: str, ref: str, src: str, idc: str, metric_in: str, panel_in: list[str],
               noise_in: float, calls_in: Any, seconds_in: Any, seed_in: Any, limit_in: Any,
               request: gr.Request, progress: gr.Progress = gr.Progress()) -> tuple[Any, ...]:
        session = request.session_hash
        ticket = workspace.ticket(session)
        try:
            data, task_used, columns, label = data_source(
                kind_in, task_in, built_in, upload_in, mapping_of(hyp, ref, src, idc),
                datasets_dir, workspace.folder(session), "search", None, limits)
            checked = search_request(data, task_used, columns, metric_in, panel_in, noise_in,
                                     calls_in, seconds_in, seed_in, limit_in, None,
                                     limits.allow_hub_models)
            folder = workspace.new_run_folder(session)  # counted only once all is checked
        except (ValueError, KeyError, FileNotFoundError) as error:  # UploadError included
            raise gr.Error(workspace.public(message(error), session),
                           duration=None) from None
        run_request = {**checked, "out": str(folder)}
        progress(0, desc="starting")
        outcome = workspace.run_to_end(session, run_request, folder, ticket, progress)
        if outcome == "stopped":
            return "Stopped.", "", "", "", None, None
        if outcome == "failed":
            raise gr.Error(f"the search failed: {workspace.failure(session)}", duration=None)
        results, image, downloads = search_outputs(folder)
        done = (f"**search {folder.name}: {label} · {metric_in}** finished; download "
                "results.json and report.md below.")
        return (done, summary_markdown(results), examples_html(results),
                patterns_markdown(results), image, downloads)

    picker.upload.change(lambda path: show_upload(path, "search", None, limits), picker.upload,
                         [picker.status, *picker.mapping])
    wire_run(workspace, run, stop, status, on_run,
             [*picker.inputs, metric, panel, noise, max_calls, max_seconds, seed, limit],
             [status, summary, examples, patterns, plot, files], api_name="search")


TAB = register_tab(SpaceTab("search", "Adversarial search", build, 25))
