"""The data picker the run tabs share (stress test, adversarial search): the embedded demo corpus
of a task, the gold config of a built adversarial dataset, or an upload with a column mapping.

:func:`data_source` turns the page's choice into what a protocol request takes (checked the
protocol's way, the upload kept in the session's folder); :func:`build_picker` creates the
components, ``prefix`` keeping the element ids of two tabs apart.
"""

from __future__ import annotations

import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gradio as gr

from blindspot.demo import DEMO_TASKS
from blindspot.space import adversarial
from blindspot.space.forms import DATA_KINDS, check_data_kind
from blindspot.space.limits import DEFAULT_LIMITS, SpaceLimits
from blindspot.space.tabs.perturb import TASKS
from blindspot.space.uploads import NONE, UploadError, check_upload, read_upload

ROLES = ("hypothesis", "references", "source", "id")


def data_source(kind: str, task: str, built: str | None, upload: str | None,
                mapping: Mapping[str, str | None], datasets_dir: Path, session_dir: Path,
                protocol: str = "rank", options: Mapping[str, Any] | None = None,
                limits: SpaceLimits = DEFAULT_LIMITS
                ) -> tuple[str, str, dict[str, str | None] | None, str]:
    """``(data, task, columns, label)`` of the chosen data; bad choices raise ValueError."""

    if kind not in DATA_KINDS:
        raise ValueError(f"unknown data choice {kind!r}; choose one of {list(DATA_KINDS)}")
    check_data_kind(protocol, kind)
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
    if not upload:
        raise ValueError("upload a jsonl, csv or parquet file first")
    table = read_upload(upload, limits=limits)
    roles = check_upload(table, protocol, mapping, options)
    return str(keep_upload(upload, table.name, session_dir)), task, roles, table.name


def keep_upload(path: str | Path, name: str, session_dir: Path) -> Path:
    """A copy of an upload in the session's ``uploads`` folder (gradio's copy may be cleaned),
    under its bare file name: nothing lands outside that folder."""
    bare = Path(name).name
    if bare in ("", ".", ".."):
        raise UploadError(f"the upload's name {name!r} is not a file name; rename it")
    kept = session_dir / "uploads" / bare
    kept.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(path, kept)
    return kept


def upload_message(path: str | None, protocol: str = "rank",
                   options: Mapping[str, Any] | None = None,
                   limits: SpaceLimits = DEFAULT_LIMITS
                   ) -> tuple[str, list[str], dict[str, str | None]]:
    """The status line of an upload, its mapping choices and guessed roles (for the page)."""

    empty: dict[str, str | None] = dict.fromkeys(ROLES)
    if not path:
        return "", [NONE], empty
    try:
        table = read_upload(path, limits=limits)
    except UploadError as error:
        return f"**Error:** {error}", [NONE], empty
    try:
        check_upload(table, protocol, table.roles, options)
        message = f"Read {table.describe()}. Check the column mapping below."
    except UploadError as error:  # e.g. no text column found: the mapping can fix it
        message = f"**Error:** {error}"
    return message, [NONE, *table.columns], dict(table.roles)


@dataclass
class DataPicker:
    """The picker's components; :attr:`inputs` feed :func:`data_source` in this order."""

    kind: Any
    task: Any
    built: Any
    upload: Any
    status: Any
    mapping: list[Any]
    mapping_row: Any

    @property
    def inputs(self) -> list[Any]:
        return [self.kind, self.task, self.built, self.upload, *self.mapping]


def mapping_of(*columns: str | None) -> dict[str, str | None]:
    """The column mapping from the values of :attr:`DataPicker.mapping`, in :data:`ROLES` order."""
    return dict(zip(ROLES, columns, strict=True))


def build_picker(context: Any, prefix: str = "", task_id: str = "stress-task",
                 task: str = "summarization") -> DataPicker:
    """The data choice, task, built-dataset list and upload with its column mapping."""


    datasets_dir, limits = context.datasets_dir, context.limits

    def built_choices() -> list[str]:
        return [adversarial.folder_label(datasets_dir, f)
                for f in adversarial.dataset_folders(datasets_dir)]

    kind = gr.Radio(list(DATA_KINDS), value="demo", label="Data", elem_id=f"{prefix}data-kind")
    task_box = gr.Dropdown(list(TASKS), value=task, label="Task", elem_id=task_id)
    with gr.Group(visible=False) as built_group:
        built = gr.Dropdown(built_choices(), label="Built adversarial dataset (its gold config "
                            "and task)", elem_id=f"{prefix}built-dataset")
        refresh = gr.Button("Refresh list", size="sm")
    with gr.Group(visible=False) as upload_group:
        upload = gr.File(label=f"Data: jsonl, csv, json or parquet (under "
                         f"{limits.max_upload_mb:g} MB, up to {limits.max_rows:,} rows)",
                         file_types=[".jsonl", ".csv", ".json", ".parquet"],
                         elem_id=f"{prefix}data-upload")
        status = gr.Markdown(elem_id=f"{prefix}upload-status")
        with gr.Row() as mapping_row:
            mapping = [gr.Dropdown([NONE], value=NONE, label=f"{role} column",
                                   allow_custom_value=False) for role in ROLES]

    def on_kind(choice: str) -> tuple[Any, Any]:
        return gr.update(visible=choice == "built dataset"), gr.update(visible=choice == "upload")

    kind.change(on_kind, kind, [built_group, upload_group], queue=False)
    refresh.click(lambda: gr.update(choices=built_choices()), None, built, queue=False)
    return DataPicker(kind, task_box, built, upload, status, mapping, mapping_row)


def show_upload(path: str | None, protocol: str = "rank",
                options: Mapping[str, Any] | None = None,
                limits: SpaceLimits = DEFAULT_LIMITS) -> list[Any]:
    """Updates of the status line and the mapping dropdowns after an upload."""

    message, choices, roles = upload_message(path, protocol, options, limits)
    return [message, *(gr.update(choices=choices, value=roles[role] or NONE) for role in ROLES)]
