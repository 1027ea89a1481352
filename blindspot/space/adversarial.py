"""Reading the adversarial dataset folders ``blindspot build-dataset`` writes, for the Space.

A folder is recognised by its ``blindspot_build.json`` (see
:mod:`blindspot.datasets_scripts.build_adversarial`); its ``gold`` config holds the untouched
gold rows and every ``<test>-<level>`` config the noised rows of every seed. Only folders under
the Space's datasets folder are listed, so a page can never read other server files.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from blindspot.datasets_scripts.build_adversarial import BUILD_FILE, DATA_DIR, GOLD_CONFIG, SPLIT
from blindspot.paths import DATASETS_ENV


def dataset_folders(root: str | Path) -> list[Path]:
    """Every built dataset folder under ``root`` (itself or up to two levels down), sorted."""
    root = Path(root)
    if not root.is_dir():
        return []
    found = [p.parent for pattern in (BUILD_FILE, f"*/{BUILD_FILE}", f"*/*/{BUILD_FILE}")
             for p in root.glob(pattern)]
    return sorted(set(found))


def where_looked(root: str | Path, found: int) -> str:
    """The Browse tab's line on where it looked (the full path) and, when it found nothing, how
    to put a dataset there."""
    where = Path(root).absolute().as_posix()
    if found:
        return f"{found} folder(s) built with `blindspot build-dataset` under `{where}/`."
    return (f"No built dataset under `{where}/` (this Space's datasets folder: "
            f"`--datasets-dir` or ${DATASETS_ENV}, else `out/datasets` in the folder the Space "
            f"was started from). `blindspot build-dataset --data demo --task summarization` "
            f"run from the same folder, or with the same ${DATASETS_ENV}, writes one there; "
            f"then press Refresh list.")


def folder_label(root: str | Path, folder: Path) -> str:
    """How the page names a folder: its path under the datasets folder."""
    relative = folder.relative_to(root).as_posix()
    return relative if relative != "." else folder.name


def resolve_folder(root: str | Path, label: str) -> Path:
    """The folder a page label names; anything outside the datasets folder is refused."""
    for folder in dataset_folders(root):
        if folder_label(root, folder) == label:
            return folder
    raise ValueError(f"no built dataset {label!r} under {Path(root).name}/; build one with "
                     "`blindspot build-dataset --data demo --task summarization`")


def read_build(folder: Path) -> dict[str, Any]:
    """The folder's build record (name, version, task, columns, configs...)."""
    return json.loads((folder / BUILD_FILE).read_text(encoding="utf-8"))


def config_path(folder: Path, config: str) -> Path:
    """The parquet file of one config (``gold`` or ``<test>-<level>``)."""
    return folder / DATA_DIR / config / f"{SPLIT}.parquet"


def gold_path(folder: Path) -> Path:
    return config_path(folder, GOLD_CONFIG)


def summary_markdown(record: dict[str, Any]) -> str:
    """The build record as a few lines of markdown for the page."""
    columns = ", ".join(f"{k}={v}" for k, v in record["columns"].items() if v and k != "gold_only")
    lines = [f"**{record['name']}** {record['full_version']}, task **{record['task']}**, "
             f"{record['input']['rows']} gold rows from {record['input']['name']}, seeds "
             f"{', '.join(map(str, record['seeds']))}; columns: {columns}."]
    for test, why in record.get("skipped", {}).items():
        lines.append(f"- skipped {test}: {why}")
    return "\n".join(lines)


CONFIG_HEADER = ["config", "test", "category", "level", "seeds", "rows", "applied",
                 "noise ratio"]


def config_rows(record: dict[str, Any]) -> list[list[Any]]:
    """One table row per noised config: its test, level, seeds, size and noise statistics."""
    return [[c["config_name"], c["test"], c["category"], c["level"],
             ", ".join(map(str, c["seeds"])), c["rows"], f"{100 * c['applied']:.1f}%",
             f"{c['noise_ratio_mean']:.3f}"] for c in record["configs"]]


def gold_vs_noised(folder: Path, config: str, limit: int = 50) -> list[dict[str, Any]]:
    """The first ``limit`` rows of a noised config beside their gold text."""

    record = read_build(folder)
    known = [c["config_name"] for c in record["configs"]]
    if config not in known:
        raise ValueError(f"{record['name']} has no config {config!r}; its configs: {known}")
    text_col, id_col = record["columns"]["hypothesis"], record["columns"]["id"]
    table = pq.read_table(config_path(folder, config)).slice(0, limit).to_pylist()
    return [{"id": row.get(id_col), "seed": row["seed"], "gold": row[text_col],
             "perturbed": row["perturbed"], "applied": row["applied"],
             "noise_ratio": row["noise_ratio"]} for row in table]
