"""Stress-test tab: judge metrics on a dataset with a registered protocol, watch it, stop it.

The data is the embedded demo corpus of a task, the gold config of a built adversarial dataset
(its noised configs are exactly what the run re-creates: same tests, seeds and per-row seeding),
or an uploaded jsonl/csv/parquet file with a column mapping (:mod:`blindspot.space.datapick`).
Each protocol gets the inputs its form names (:mod:`blindspot.space.forms`: tests and seeds for
rank, a MENLI-style upload for preference, judgments plus a references file for correlation...).
The run goes through :func:`blindspot.protocols.interface.get_protocol` in its own process
(``blindspot.space.worker``; Stop terminates it) and writes the protocol's report folder into the
session's folder; the page shows the verdict table of a rank run or the protocol's own report
tables, every plot the protocol drew, and the files to download. Only rank runs are offered to
the compare tab (its blind-spot matrix is rank verdicts).

What a visitor types is checked against allow-lists declared once: the protocol options field
accepts only the options the protocol marks ``visitor_safe`` (:mod:`blindspot.protocols.options`;
a file option comes only from the "protocol file" upload), typed metric specs only registered
metrics with offline models (:func:`blindspot.runner.metric_spec.check_visitor_metric`), and
uploads only data files within the Space's limits (:mod:`blindspot.space.limits`).
"""

import html
import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from blindspot import seeding
from blindspot.errors import message
from blindspot.models import available_models
from blindspot.perturbations.suites import suite_names, suite_tests
from blindspot.protocols.interface import PROTOCOLS
from blindspot.report import views
from blindspot.report.html import esc, legend_list, lines_list
from blindspot.report.writer import HTML_FILE, MARKDOWN_FILE, RESULTS_FILE
from blindspot.runner.metric_spec import check_visitor_metric, resolve_metrics
from blindspot.scoring.facts import lexical_metrics
from blindspot.space.controls import run_controls, wire_run
from blindspot.space.datapick import build_picker, data_source, keep_upload, mapping_of, show_upload
from blindspot.space.forms import form_for, stress_protocols
from blindspot.space.limits import DEFAULT_LIMITS, SpaceLimits, judge_options
from blindspot.space.matrix import cells_html
from blindspot.space.tab import SpaceTab, register_tab
from blindspot.space.tabs.perturb import test_names
from blindspot.space.uploads import check_file

#: the model metrics the Space offers, with the offline model each needs (the lexical ones, which
#: need none, come from the scorers' declared ``kind``)
MODEL_METRICS = {"bertscore.f1@minilm": "minilm", "gpt_ppl@smollm2": "smollm2"}
REPORT_FILES = (RESULTS_FILE, MARKDOWN_FILE, HTML_FILE)


def metric_choices() -> list[str]:
    """Metrics that run on this machine: the lexical ones and those whose model is installed."""
    installed = available_models()
    return [*lexical_metrics(), *(m for m, model in MODEL_METRICS.items() if model in installed)]


def test_choices() -> list[str]:
    """Suites first, then every test."""
    return [*suite_names(), *test_names()]


def parse_seeds(text: str) -> list[int]:
    """The seeds field (``1, 2,3``)."""
    return seeding.parse_seeds(text, "seeds")


def parse_options(text: str) -> dict[str, Any]:
    """Protocol options, one ``key=value`` per line (values are JSON when they parse)."""
    options: dict[str, Any] = {}
    for line in (text or "").splitlines():
        if not line.strip():
            continue
        key, sep, value = line.partition("=")
        if not (sep and key.strip()):
            raise ValueError(f"protocol option {line.strip()!r} must look like key=value")
        try:
            options[key.strip()] = json.loads(value)
        except ValueError:
            options[key.strip()] = value.strip()
    return options


def visitor_options(protocol: str, text: str, limits: SpaceLimits = DEFAULT_LIMITS
                    ) -> dict[str, Any]:
    """The options field read and checked against the protocol's visitor-safe options."""
    return PROTOCOLS.get(protocol).check_options(parse_options(text), visitor=True,
                                                 allow_hub_models=limits.allow_hub_models)


#: what Markdown would read as markup in an option's help text (``*_fixed``, ``->``, ``{...}``)
_MARKUP = re.compile(r"([\\`*_{}\[\]<>#|])")


def _plain(text: str) -> str:
    """``text`` as Markdown shows it, letter for letter (its markup characters escaped)."""
    return _MARKUP.sub(r"\\\1", text)


def options_hint(protocol: str) -> str:
    """The options a visitor may type for ``protocol``, from its declaration: one bullet each,
    its name as code and its help as text (a whole line as code rendered as an empty bullet
    above a box)."""
    chosen = PROTOCOLS.get(protocol)
    lines = [f"- `{s.name}`: {_plain(s.describe().removeprefix(s.name + ': '))}"
             for s in chosen.options if s.visitor_safe and not s.file]
    return "Options you can set (key=value per line):\n" + "\n".join(lines) if lines else ""


def chosen_metrics(picked: Sequence[str], extra: str) -> list[str]:
    """The ticked metrics plus any typed specs (comma-separated), each once."""
    typed = [m.strip() for m in (extra or "").split(",") if m.strip()]
    metrics = list(dict.fromkeys([*(picked or []), *typed]))
    if not metrics:
        raise ValueError("pick at least one metric")
    return metrics


def make_request(protocol: str, data: str, task: str, columns: dict | None,
                 metrics: list[str], tests: Sequence[str], seeds: list[int], out: Path | None,
                 options: dict[str, Any], limits: SpaceLimits = DEFAULT_LIMITS
                 ) -> dict[str, Any]:
    """The run's request (what the worker gets), checked before any process starts; tests and
    seeds go in only for protocols that read them (:mod:`blindspot.space.forms`). Every metric
    must be one a visitor may run; ``options`` were checked by :func:`visitor_options`."""
    name = PROTOCOLS.get(protocol).name
    form = form_for(name)
    request: dict[str, Any] = {"protocol": name, "data": data, "task": task, "columns": columns,
                               "metrics": metrics, "out": str(out) if out else None,
                               "options": options}
    if form.tests:
        if not tests:
            raise ValueError("pick at least one test or suite")
        if not suite_tests(list(tests), task):
            raise ValueError(f"no test of {list(tests)} applies to the task {task!r}")
        request["tests"] = list(tests)
    if form.seeds:
        request["seeds"] = seeds
    for metric in metrics:
        check_visitor_metric(metric, limits.allow_hub_models)
    resolve_metrics(metrics)
    operator = judge_options(limits, metrics)
    if operator:
        request["metric_options"] = operator
    return request


def protocol_file_option(protocol: str, path: str | None, options: dict[str, Any],
                         session_dir: Path, limits: SpaceLimits = DEFAULT_LIMITS
                         ) -> dict[str, Any]:
    """``options`` with the protocol's file option set to the kept "protocol file" upload."""
    option = form_for(protocol).file_option
    if not path or option is None:
        return options
    name = Path(path).name
    check_file(path, name, limits=limits)
    return {**options, option: str(keep_upload(path, name, session_dir))}


def run_label(number: str, data_label: str, metrics: Sequence[str]) -> str:
    return f"run {number}: {data_label} · {', '.join(metrics)}"


def expectations_html(data: dict[str, Any]) -> str:
    """The examination paper's expectation x metric table and its lines, as the report shows
    them (empty when the run checked none)."""
    rows = [(r.test, r.category, r.cells) for r in views.expectation_rows(data)]
    if not rows:
        return ""
    return (f"<h4>{esc(views.EXPECTATIONS_TITLE)}</h4>"
            + cells_html(list(data["metrics"]), rows, table_id="expectations",
                         first=views.EXPECTATION_HEADER)
            + lines_list(views.expectations_legend() + views.expectation_lines(data)))


def verdicts_html(results: dict[str, Any]) -> str:
    """Per dataset: the test x metric verdict table, the examination paper's expectations,
    skipped tests, metric errors and flags (an uninformative judge): the report's sections,
    without the details."""
    parts = []
    for name, data in results["datasets"].items():
        parts.append(f"<h4>{html.escape(name)} ({html.escape(data['task'])}, {data['rows']} rows)"
                     "</h4>")
        rows = [(r.test, r.category, r.cells) for r in views.summary_rows(data)]
        parts.append(cells_html(list(data["metrics"]), rows))
        parts.append(expectations_html(data))
        notes = [f"skipped {t}: {why}" for t, why in views.skipped_tests(data)]
        notes += [f"metric error {m}: {why}" for m, why in views.metric_errors(data)]
        notes += [f"flag {m}: {why}" for m, why in views.metric_flags(data)]
        parts += [f"<p>{html.escape(n)}</p>" for n in notes]
    parts.append(legend_list(views.legend(results)))  # the legend: the run's tolerance and cap
    return "".join(parts)


def report_outputs(folder: Path) -> tuple[dict[str, Any], list[str], list[str]]:
    """The results, the plot images (every PNG the protocol wrote: rank and preference under
    ``plots/``, deviation's heatmap beside results.json) and the downloadable files."""
    results = json.loads((folder / RESULTS_FILE).read_text(encoding="utf-8"))
    plots = sorted(str(p) for p in folder.rglob("*.png")
                   if not any(part.startswith(".") for part in p.relative_to(folder).parts))
    files = [str(folder / f) for f in REPORT_FILES if (folder / f).is_file()]
    return results, plots, files


def report_text(folder: Path) -> str:
    """report.md without its title and image links (the gallery shows the images)."""
    path = folder / MARKDOWN_FILE
    if not path.is_file():
        return ""
    lines = path.read_text(encoding="utf-8").splitlines()
    if lines and lines[0].startswith("# "):
        lines = lines[1:]
    return "\n".join(line for line in lines if not line.lstrip().startswith("!["))


def result_views(results: dict[str, Any], folder: Path) -> tuple[str, str]:
    """``(html, markdown)`` of a finished run: the verdict table of a rank run, the protocol's
    own report.md (its tables) for the others."""
    if results.get("protocol", "rank") == "rank":
        return verdicts_html(results), ""
    return "", report_text(folder)


def build(context: Any) -> None:
    """The tab's components and events."""
    import gradio as gr  # lazy: the UI library, only when the Space is built (as the other tabs)

    workspace, datasets_dir, limits = context.workspace, context.datasets_dir, context.limits

    with gr.Row():
        with gr.Column():
            picker = build_picker(context)
        with gr.Column():
            metrics = gr.CheckboxGroup(metric_choices(), value=["rouge"], label="Metrics",
                                       elem_id="stress-metrics")
            extra = gr.Textbox(label="More metric specs (comma-separated, e.g. "
                               "rouge.rouge2, bertscore.f1@minilm)")
            with gr.Row():
                protocol = gr.Dropdown(stress_protocols(), value="rank", label="Protocol",
                                       elem_id="stress-protocol")
                options = gr.Textbox(label="Protocol options (key=value per line)", lines=1,
                                     elem_id="stress-options")
            hint = gr.Markdown(f"{form_for('rank').hint}\n\n{options_hint('rank')}",
                               elem_id="protocol-hint")
            tests = gr.Dropdown(test_choices(), value=["truncation"], multiselect=True,
                                label="Tests and suites", elem_id="stress-tests")
            seeds = gr.Textbox(value="1", label="Seeds (comma-separated)", elem_id="stress-seeds")
            protocol_file = gr.File(label=f"Protocol file (under "
                                    f"{limits.max_upload_mb:g} MB)", visible=False,
                                    file_types=[".jsonl", ".csv", ".json", ".parquet"],
                                    elem_id="protocol-file")
    run, stop, status = run_controls("Run stress test", "run-button", "stop-button",
                                     "run-status")
    verdicts = gr.HTML(elem_id="verdict-table")
    report = gr.Markdown(elem_id="protocol-report")
    # preview: one plot at full width with the others as thumbnails (the grid view crops a
    # single wide plot into a square cell)
    plots = gr.Gallery(label="Plots", columns=3, height=480, object_fit="contain",
                       preview=True, elem_id="plots")
    files = gr.File(label="results.json and report", file_count="multiple",
                    elem_id="report-files")

    def options_or_empty(protocol_in: str, text: str) -> dict[str, Any]:
        try:
            return visitor_options(protocol_in, text, limits)
        except ValueError:
            return {}

    def on_upload(path: str | None, protocol_in: str, options_in: str) -> list[Any]:
        return show_upload(path, protocol_in, options_or_empty(protocol_in, options_in), limits)

    def on_protocol(protocol_in: str, path: str | None, options_in: str) -> list[Any]:
        form = form_for(protocol_in)
        file_label = f"Protocol file: the {form.file_option} option" if form.file_option else ""
        return [f"{form.hint}\n\n{options_hint(protocol_in)}", gr.update(visible=form.tests),
                gr.update(visible=form.seeds),
                gr.update(visible=form.mapping),
                gr.update(visible=form.file_option is not None, label=file_label or None),
                *on_upload(path, protocol_in, options_in)]

    def on_run(kind_in: str, task_in: str, built_in: str | None, upload_in: str | None,
               hyp: str, ref: str, src: str, idc: str, picked: list[str], extra_in: str,
               tests_in: list[str], seeds_in: str, protocol_in: str, options_in: str,
               file_in: str | None, runs: list[dict[str, Any]], request: gr.Request,
               progress: gr.Progress = gr.Progress()) -> tuple[Any, ...]:
        mapping_in = mapping_of(hyp, ref, src, idc)
        session = request.session_hash
        ticket = workspace.ticket(session)
        try:
            session_dir = workspace.folder(session)
            typed = visitor_options(protocol_in, options_in, limits)
            run_options = protocol_file_option(protocol_in, file_in, typed, session_dir, limits)
            data, task_used, columns, label = data_source(
                kind_in, task_in, built_in, upload_in, mapping_in, datasets_dir, session_dir,
                protocol_in, run_options, limits)
            metrics_in = chosen_metrics(picked, extra_in)
            checked = make_request(protocol_in, data, task_used, columns, metrics_in, tests_in,
                                   parse_seeds(seeds_in), None, run_options, limits)
            folder = workspace.new_run_folder(session)  # counted only once all is checked
        except (ValueError, KeyError, FileNotFoundError) as error:  # UploadError included
            raise gr.Error(workspace.public(message(error), session),
                           duration=None) from None
        run_request = {**checked, "out": str(folder)}
        progress(0, desc="starting")
        outcome = workspace.run_to_end(session, run_request, folder, ticket, progress)
        if outcome == "stopped":  # Stop ended the process; its finished cells stay in its folder
            return "Stopped.", "", "", [], None, runs
        if outcome == "failed":
            raise gr.Error(f"the run failed: {workspace.failure(session)}", duration=None)
        results, images, downloads = report_outputs(folder)
        label_out = run_label(folder.name, label, metrics_in)
        if results.get("protocol", "rank") == "rank":  # the compare tab reads rank runs
            runs = [*runs, {"label": label_out, "results": str(folder / RESULTS_FILE)}]
        done = (f"**{label_out}** ({run_request['protocol']} protocol) finished: "
                f"{len(images)} plot(s); download the report below.")
        shown = gr.update(value=images, selected_index=0 if images else None)
        return (done, *result_views(results, folder), shown, downloads, runs)

    upload_outputs = [picker.status, *picker.mapping]
    picker.upload.change(on_upload, [picker.upload, protocol, options], upload_outputs)
    protocol.change(on_protocol, [protocol, picker.upload, options],
                    [hint, tests, seeds, picker.mapping_row, protocol_file, *upload_outputs])
    wire_run(workspace, run, stop, status, on_run,
             [*picker.inputs, metrics, extra, tests, seeds, protocol, options, protocol_file,
              context.runs], [status, verdicts, report, plots, files, context.runs],
             api_name="stress_test")


TAB = register_tab(SpaceTab("stress", "Stress-test a metric", build, 20))
