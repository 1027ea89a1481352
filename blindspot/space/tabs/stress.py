"""Stress-test tab: judge metrics on a dataset with a registered protocol, watch it, stop it.

The data is the embedded demo corpus of a task, the gold config of a built adversarial dataset
(its noised configs are exactly what the run re-creates: same tests, seeds and per-row seeding),
or an uploaded jsonl/csv/parquet file with a column mapping. The run goes through
:func:`blindspot.protocols.registry.get_protocol` in its own process (``blindspot.space.worker``;
Stop terminates it), writes
the usual report folder into the session's folder, and the page shows the verdict table, the
score-vs-noise plots and the files to download.
"""

import json
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from blindspot.space.uploads import NONE, UploadError

DATA_KINDS = ("demo", "built dataset", "upload")
LEXICAL_METRICS = ("rouge", "chrf", "bleu", "ter", "rep_ngram", "ngram_entropy")
MODEL_METRICS = {"bertscore.f1@minilm": "minilm", "gpt_ppl@smollm2": "smollm2"}
ROLES = ("hypothesis", "references", "source", "id")
REPORT_FILES = ("results.json", "report.md", "report.html")


def metric_choices() -> list[str]:
    """Metrics that run on this machine: the lexical ones and those whose model is installed."""
    from blindspot.models import available_models

    installed = available_models()
    return [*LEXICAL_METRICS, *(m for m, model in MODEL_METRICS.items() if model in installed)]


def test_choices() -> list[str]:
    """Suites first, then every test."""
    from blindspot.perturbations.catalogue import suite_names
    from blindspot.space.tabs.perturb import test_names

    return [*suite_names(), *test_names()]


def protocol_choices() -> list[str]:
    from blindspot.protocols.registry import PROTOCOLS

    return sorted(PROTOCOLS)


def parse_seeds(text: str) -> list[int]:
    try:
        seeds = [int(s) for s in str(text).replace(" ", "").split(",") if s]
    except ValueError:
        raise ValueError(f"seeds must be comma-separated whole numbers, got {text!r}") from None
    if not seeds:
        raise ValueError("give at least one seed, e.g. 1 or 1,2,3")
    return seeds


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


def chosen_metrics(picked: Sequence[str], extra: str) -> list[str]:
    """The ticked metrics plus any typed specs (comma-separated), each once."""
    typed = [m.strip() for m in (extra or "").split(",") if m.strip()]
    metrics = list(dict.fromkeys([*(picked or []), *typed]))
    if not metrics:
        raise ValueError("pick at least one metric")
    return metrics


def data_source(kind: str, task: str, built: str | None, upload: str | None,
                mapping: dict[str, str | None], datasets_dir: Path, session_dir: Path
                ) -> tuple[str, str, dict[str, str | None] | None, str]:
    """``(data, task, columns, label)`` of the chosen data; bad choices raise ValueError."""
    from blindspot.demo import DEMO_TASKS
    from blindspot.space import adversarial
    from blindspot.space.uploads import check_roles, read_upload

    if kind == "demo":
        if task not in DEMO_TASKS:
            raise ValueError(f"the demo has no {task} corpus; pick one of {list(DEMO_TASKS)}")
        return "demo", task, None, f"demo {task}"
    if kind == "built dataset":
        if not built:
            raise ValueError("pick a built dataset (none found? build one with `blindspot "
                             "build-dataset --data demo --task summarization`)")
        folder = adversarial.resolve_folder(datasets_dir, built)
        record = adversarial.read_build(folder)
        columns = {r: record["columns"].get(r) for r in ROLES}
        return str(adversarial.gold_path(folder)), record["task"], columns, built
    if kind == "upload":
        if not upload:
            raise ValueError("upload a jsonl, csv or parquet file first")
        table = read_upload(upload)
        roles = check_roles(table, mapping)
        kept = session_dir / "uploads" / table.name
        kept.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(upload, kept)
        return str(kept), task, roles, table.name
    raise ValueError(f"unknown data choice {kind!r}; choose one of {list(DATA_KINDS)}")


def make_request(protocol: str, data: str, task: str, columns: dict | None,
                 metrics: list[str], tests: Sequence[str], seeds: list[int], out: Path,
                 options: dict[str, Any]) -> dict[str, Any]:
    """The run's request (what the worker gets), checked before any process starts."""
    from blindspot.perturbations.catalogue import suite_tests
    from blindspot.protocols.registry import get_protocol
    from blindspot.runner.metric_spec import resolve_metrics

    name = get_protocol(protocol).name
    if not tests:
        raise ValueError("pick at least one test or suite")
    if not suite_tests(list(tests), task):
        raise ValueError(f"no test of {list(tests)} applies to the task {task!r}")
    resolve_metrics(metrics)
    return {"protocol": name, "data": data, "task": task, "columns": columns,
            "metrics": metrics, "tests": list(tests), "seeds": seeds, "out": str(out),
            "options": options}


def run_label(number: str, data_label: str, metrics: Sequence[str]) -> str:
    return f"run {number}: {data_label} · {', '.join(metrics)}"


def verdicts_html(results: dict[str, Any]) -> str:
    """Per dataset: the test x metric verdict table, skipped tests and metric errors."""
    import html

    from blindspot.report.views import metric_errors, skipped_tests, summary_rows
    from blindspot.space.matrix import cells_html

    parts = []
    for name, data in results["datasets"].items():
        parts.append(f"<h4>{html.escape(name)} ({html.escape(data['task'])}, {data['rows']} rows)"
                     "</h4>")
        rows = [(r.test, r.category, r.cells) for r in summary_rows(data)]
        parts.append(cells_html(list(data["metrics"]), rows))
        notes = [f"skipped {t}: {why}" for t, why in skipped_tests(data)]
        notes += [f"metric error {m}: {why}" for m, why in metric_errors(data)]
        parts += [f"<p>{html.escape(n)}</p>" for n in notes]
    parts.append("<p>✓ pass: the score strictly decreases as the noise grows; ✗ fail: a blind "
                 "spot. The percentage is the change at the noisiest judged level.</p>")
    return "".join(parts)


def report_outputs(folder: Path) -> tuple[dict[str, Any], list[str], list[str]]:
    """The results, the plot images and the downloadable files of a finished run folder."""
    results = json.loads((folder / "results.json").read_text(encoding="utf-8"))
    plots = sorted(str(p) for p in (folder / "plots").glob("*.png"))
    files = [str(folder / f) for f in REPORT_FILES if (folder / f).is_file()]
    return results, plots, files


def _progress_text(event: dict[str, Any]) -> str:
    return " ".join(x for x in (event.get("desc"), event.get("postfix")) if x)


def build(context: Any) -> None:
    """The tab's components and events."""
    import gradio as gr

    from blindspot.demo import DEMO_TASKS
    from blindspot.space import adversarial
    from blindspot.space.tabs.perturb import TASKS
    from blindspot.space.uploads import MAX_UPLOAD_BYTES, check_roles, read_upload

    workspace, datasets_dir = context.workspace, context.datasets_dir

    def built_choices() -> list[str]:
        return [adversarial.folder_label(datasets_dir, f)
                for f in adversarial.dataset_folders(datasets_dir)]

    with gr.Row():
        with gr.Column():
            kind = gr.Radio(list(DATA_KINDS), value="demo", label="Data", elem_id="data-kind")
            task = gr.Dropdown(list(TASKS), value="summarization", label="Task",
                               elem_id="stress-task")
            with gr.Group(visible=False) as built_group:
                built = gr.Dropdown(built_choices(), label="Built adversarial dataset "
                                    "(its gold config and task)", elem_id="built-dataset")
                refresh = gr.Button("Refresh list", size="sm")
            with gr.Group(visible=False) as upload_group:
                upload = gr.File(label=f"Gold data: jsonl, csv, json or parquet (under "
                                 f"{MAX_UPLOAD_BYTES // 1_000_000} MB)",
                                 file_types=[".jsonl", ".csv", ".json", ".parquet"],
                                 elem_id="data-upload")
                upload_status = gr.Markdown(elem_id="upload-status")
                with gr.Row():
                    mapping = [gr.Dropdown([NONE], value=NONE, label=f"{role} column",
                                           allow_custom_value=False) for role in ROLES]
        with gr.Column():
            metrics = gr.CheckboxGroup(metric_choices(), value=["rouge"], label="Metrics",
                                       elem_id="stress-metrics")
            extra = gr.Textbox(label="More metric specs (comma-separated, e.g. "
                               "rouge.rouge2, bertscore.f1@minilm)")
            tests = gr.Dropdown(test_choices(), value=["truncation"], multiselect=True,
                                label="Tests and suites", elem_id="stress-tests")
            seeds = gr.Textbox(value="1", label="Seeds (comma-separated)", elem_id="stress-seeds")
            with gr.Row():
                protocol = gr.Dropdown(protocol_choices(), value="rank", label="Protocol")
                options = gr.Textbox(label="Protocol options (key=value per line)", lines=1)
    with gr.Row():
        run = gr.Button("Run stress test", variant="primary", elem_id="run-button")
        stop = gr.Button("Stop", variant="stop", elem_id="stop-button")
    status = gr.Markdown(elem_id="run-status")
    verdicts = gr.HTML(elem_id="verdict-table")
    plots = gr.Gallery(label="Score vs. noise ratio", columns=3, height=420,
                       object_fit="contain", preview=False, elem_id="plots")
    files = gr.File(label="results.json and report", file_count="multiple",
                    elem_id="report-files")

    def on_kind(choice: str) -> tuple[Any, Any]:
        return gr.update(visible=choice == "built dataset"), gr.update(visible=choice == "upload")

    def on_upload(path: str | None) -> list[Any]:
        if not path:
            return ["", *(gr.update(choices=[NONE], value=NONE) for _ in ROLES)]
        try:
            table = read_upload(path)
        except UploadError as error:
            return [f"**Error:** {error}", *(gr.update(choices=[NONE], value=NONE)
                                              for _ in ROLES)]
        choices = [NONE, *table.columns]
        try:
            check_roles(table, table.roles)
            message = f"Read {table.describe()}. Check the column mapping below."
        except UploadError as error:  # e.g. no text column found: the mapping can fix it
            message = f"**Error:** {error}"
        return [message, *(gr.update(choices=choices, value=table.roles[role] or NONE)
                           for role in ROLES)]

    def on_run(kind_in: str, task_in: str, built_in: str | None, upload_in: str | None,
               hyp: str, ref: str, src: str, idc: str, picked: list[str], extra_in: str,
               tests_in: list[str], seeds_in: str, protocol_in: str, options_in: str,
               runs: list[dict[str, Any]], request: gr.Request,
               progress: gr.Progress = gr.Progress()) -> tuple[Any, ...]:
        session = request.session_hash
        ticket = workspace.ticket(session)
        try:
            mapping_in = dict(zip(ROLES, (hyp, ref, src, idc)))
            data, task_used, columns, label = data_source(
                kind_in, task_in, built_in, upload_in, mapping_in, datasets_dir,
                workspace.folder(session))
            metrics_in = chosen_metrics(picked, extra_in)
            folder = workspace.new_run_folder(session)
            run_request = make_request(protocol_in, data, task_used, columns, metrics_in,
                                       tests_in, parse_seeds(seeds_in), folder,
                                       parse_options(options_in))
        except (ValueError, KeyError, FileNotFoundError) as error:
            raise gr.Error(str(error).strip("'\""), duration=None) from None
        progress(0, desc="starting")
        job = workspace.start(session, run_request, folder, ticket)
        if job is None:  # Stop was pressed before the run started
            return "Stopped.", "", [], None, runs
        for event in job.events():
            if event["event"] == "progress" and event.get("total"):
                progress((event["n"], event["total"]), desc=_progress_text(event))
        if job.cancelled:  # Stop ended the process; its finished cells stay in its folder
            return "Stopped.", "", [], None, runs
        if job.returncode != 0 or not (folder / "results.json").is_file():
            raise gr.Error(f"the run failed: {job.error or job.log_tail()}", duration=None)
        results, images, downloads = report_outputs(folder)
        label_out = run_label(folder.name, label, metrics_in)
        runs = [*runs, {"label": label_out, "results": str(folder / "results.json")}]
        done = f"**{label_out}** finished: {len(images)} plot(s); download the report below."
        return done, verdicts_html(results), images, downloads, runs

    def on_stop(request: gr.Request) -> str:
        stopped = workspace.cancel(request.session_hash)
        return "Stopped." if stopped else "No run is going on."

    kind.change(on_kind, kind, [built_group, upload_group], queue=False)
    refresh.click(lambda: gr.update(choices=built_choices()), None, built, queue=False)
    upload.change(on_upload, upload, [upload_status, *mapping])
    event = run.click(on_run, [kind, task, built, upload, *mapping, metrics, extra, tests, seeds,
                               protocol, options, context.runs],
                      [status, verdicts, plots, files, context.runs],
                      concurrency_limit=1, concurrency_id="stress-run", api_name="stress_test")
    stop.click(on_stop, None, status, cancels=[event], queue=False)
