"""Reading and writing tables (jsonl, json, csv, parquet) as ``datasets.Dataset``, format by extension."""

from __future__ import annotations

from pathlib import Path
from typing import Any

FORMATS = {".jsonl": "json", ".json": "json", ".csv": "csv", ".parquet": "parquet"}


def table_format(path: str | Path) -> str:
    """The ``datasets`` builder name for ``path``'s extension, or a clear error."""
    suffix = Path(path).suffix.lower()
    if suffix not in FORMATS:
        raise ValueError(f"unsupported file type {suffix or '(none)'!r} for {path}; "
                         f"use one of {sorted(FORMATS)}")
    return FORMATS[suffix]


def read_table(path: str | Path) -> Any:
    """The rows of a jsonl/json/csv/parquet file as a Dataset, in file order."""
    import datasets

    path = Path(path)
    kind = table_format(path)
    if not path.is_file():
        raise FileNotFoundError(f"input file not found: {path}")
    try:
        if kind == "json":
            ds = datasets.Dataset.from_json(str(path), keep_in_memory=True)
        elif kind == "csv":
            ds = datasets.Dataset.from_csv(str(path), keep_in_memory=True)
        else:
            ds = datasets.Dataset.from_parquet(str(path), keep_in_memory=True)
    except Exception as error:  # pyarrow/json errors differ by format; all mean "unreadable"
        raise ValueError(f"could not read {path} as {kind}: {type(error).__name__}: "
                         f"{str(error)[:300]}") from error
    return ds


def write_table(ds: Any, path: str | Path) -> Path:
    """Write a Dataset to jsonl/json/csv/parquet by extension; returns the path."""
    path = Path(path)
    kind = table_format(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "json":
        ds.to_json(str(path), lines=True, force_ascii=False)
    elif kind == "csv":
        ds.to_csv(str(path), index=False)
    else:
        ds.to_parquet(str(path))
    return path
