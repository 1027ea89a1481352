"""Reading and writing tables (jsonl, json, csv, parquet) as ``datasets.Dataset``, format by extension.

A file that cannot be read is refused with a :class:`~blindspot.errors.BlindspotInputError` that
names the file, the line when one is at fault (a malformed JSON line, bytes that are not UTF-8)
and the fix. The line-by-line diagnosis runs only once reading has failed, never on the happy
path; a JSON file's encoding is checked once per table by Arrow.
"""

from __future__ import annotations

import csv
import json
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from blindspot.errors import BlindspotInputError
from blindspot.faults import atomic_path

FORMATS = {".jsonl": "json", ".json": "json", ".csv": "csv", ".parquet": "parquet"}

#: What each format's rows look like, for the fixes of unreadable files.
FORMAT_HINTS = {
    "json": 'one JSON object per line, e.g. {"id": "1", "gold": "A summary."}',
    "csv": "a header line naming the columns (e.g. id,gold) and one line per row",
    "parquet": "a Parquet file, e.g. written by Dataset.to_parquet or pandas.DataFrame.to_parquet",
}
JSON_LINE_FIX = 'Each line must hold one JSON object, e.g. {"id": "1", "gold": "A summary."}'


def table_format(path: str | Path) -> str:
    """The ``datasets`` builder name for ``path``'s extension, or a clear error."""
    suffix = Path(path).suffix.lower()
    if suffix not in FORMATS:
        raise BlindspotInputError(f"unsupported file type {suffix or '(none)'!r}", file=path,
                                  fix=f"Use one of {', '.join(sorted(FORMATS))} (convert a .tsv "
                                      "with e.g. pandas.read_csv(path, sep='\\t').to_csv(...))")
    return FORMATS[suffix]


def check_readable(path: Path) -> str:
    """The format of ``path``, a data file that exists and is not empty, or a clear error."""
    if path.is_dir():
        raise BlindspotInputError("this is a folder, not a data file", file=path,
                                  fix=f"Pass one {'/'.join(sorted(FORMATS))} file")
    kind = table_format(path)
    if not path.is_file():
        raise FileNotFoundError(f"input file not found: {path}")
    if path.stat().st_size == 0:
        raise BlindspotInputError("the file is empty", file=path,
                                  fix=f"Give it rows: {FORMAT_HINTS[kind]}")
    return kind


def read_table(path: str | Path) -> Any:
    """The rows of a jsonl/json/csv/parquet file as a Dataset, in file order."""
    import datasets

    path = Path(path)
    kind = check_readable(path)
    try:
        with quiet_datasets():  # no bars; the error below says it once, with the line
            if kind == "json":
                ds = datasets.Dataset.from_json(str(path), keep_in_memory=True)
            elif kind == "csv":
                ds = datasets.Dataset.from_csv(str(path), keep_in_memory=True)
            else:
                ds = datasets.Dataset.from_parquet(str(path), keep_in_memory=True)
    except Exception as error:  # pyarrow/json errors differ by format; all mean "unreadable"
        raise unreadable(path, kind, error) from error
    if kind == "json":  # Arrow's JSON reader keeps bytes that are not UTF-8: check them once
        try:
            ds.data.table.validate(full=True)
        except pa.ArrowInvalid as error:
            raise unreadable(path, kind, error) from error
    return ds


def table_columns(path: str | Path) -> list[str]:
    """The column names of a jsonl/json/csv/parquet file, read from its head (a JSON-lines
    file's first row, a csv header, a Parquet schema), not its rows: what a check before any
    work needs. A JSON array (.json) is read whole; a file that cannot be read fails as
    :func:`read_table` fails."""
    path = Path(path)
    kind = check_readable(path)
    try:
        if kind == "parquet":
            return list(pq.read_schema(path).names)
        with open(path, encoding="utf-8-sig", newline="") as fh:
            head = next((line for line in fh if line.strip()), "")
            if kind == "csv" and head:
                return next(csv.reader([head]))
        if kind == "json" and head.lstrip().startswith("{"):
            first = next(json_rows(path), None)
            if first is not None:
                return list(first)
    except (UnicodeDecodeError, pa.ArrowInvalid, OSError):
        pass  # read whole below: read_table names the line at fault
    return list(read_table(path).column_names)


@contextmanager
def quiet_datasets() -> Iterator[None]:
    """``datasets`` as blindspot loads files with it: no "Generating train split" bars (our run
    shows its own progress) and no reader failure logged ("Failed to load JSON from file..."; the
    caller reports it once, with the line). Only inside this block: the user's own
    ``datasets`` calls keep their bars and logging."""
    import datasets
    from datasets.utils import logging as datasets_logging

    level = datasets_logging.get_verbosity()
    bars_were_on = not datasets.are_progress_bars_disabled()
    datasets_logging.set_verbosity(datasets_logging.CRITICAL)
    with warnings.catch_warnings():  # HF_DATASETS_DISABLE_PROGRESS_BARS=0 keeps them, quietly
        warnings.simplefilter("ignore")
        datasets.disable_progress_bars()
    try:
        yield
    finally:
        datasets_logging.set_verbosity(level)
        if bars_were_on:
            datasets.enable_progress_bars()


def encoding_error(path: Path, line: int) -> BlindspotInputError:
    return BlindspotInputError(
        "the file is not UTF-8 text (e.g. Latin-1 or Windows-1252)", file=path, line=line,
        fix=f"Re-encode it as UTF-8, e.g. iconv -f latin1 -t utf-8 {path.name} > "
            f"{path.stem}.utf8{path.suffix}, and pass the new file")


def json_row(raw: bytes, path: Path, line: int) -> dict[str, Any] | None:
    """One line of a JSON-lines file as its object (None for a blank line), or a clear error."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise encoding_error(path, line) from None
    if not text.strip():
        return None
    try:
        row = json.loads(text)
    except json.JSONDecodeError as error:
        raise BlindspotInputError(f"not valid JSON ({error.msg} at column {error.colno})",
                                  file=path, line=line,
                                  fix=JSON_LINE_FIX) from None
    if not isinstance(row, dict):
        raise BlindspotInputError(f"a JSON {type(row).__name__}, not an object", file=path,
                                  line=line, fix=JSON_LINE_FIX)
    return row


def json_rows(path: Path) -> Iterator[dict[str, Any]]:
    """The objects of a JSON-lines file in order, skipping blank lines; a clear error names the
    first bad line."""
    with open(path, "rb") as fh:
        for number, raw in enumerate(fh, 1):
            row = json_row(raw, path, number)
            if row is not None:
                yield row


def _first_bad_line(path: Path, kind: str) -> BlindspotInputError | None:
    """The first line of a text file that is not UTF-8 or (JSON) not one JSON object."""
    text_lines = 0
    with open(path, "rb") as fh:
        for number, raw in enumerate(fh, 1):
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError:
                return encoding_error(path, number)
            text_lines += bool(raw.strip())
    if text_lines == 0:
        return BlindspotInputError("the file has only blank lines, no rows", file=path,
                                   fix=f"Give it rows: {FORMAT_HINTS[kind]}")
    if kind == "csv" and text_lines == 1:
        return BlindspotInputError("the file has a header line but no rows", file=path,
                                   fix=f"Give it rows: {FORMAT_HINTS[kind]}")
    if kind == "json":
        return _json_problem(path)
    return None


def _json_problem(path: Path) -> BlindspotInputError | None:
    """Why a UTF-8 JSON file could not be read: a bad line, or a bad whole document (.json)."""
    first = next((line for line in path.read_bytes().splitlines() if line.strip()), b"")
    if first.lstrip().startswith(b"[") and not first.rstrip().endswith(b"}"):
        try:  # a whole-file JSON array (.json), not JSON lines
            json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as error:
            return BlindspotInputError(f"not valid JSON ({error.msg} at column {error.colno})",
                                       file=path, line=error.lineno,
                                       fix="Fix the JSON there (or write JSON lines: "
                                           f"{FORMAT_HINTS['json']})")
        return None
    try:
        for _ in json_rows(path):
            pass
    except BlindspotInputError as error:
        return error
    return None


def _root_cause(error: BaseException) -> BaseException:
    cause = error.__cause__ or error.__context__
    while cause is not None:
        error, cause = cause, cause.__cause__ or cause.__context__
    return error


def unreadable(path: Path, kind: str, error: BaseException) -> BlindspotInputError:
    """The clearest error for a file ``datasets`` could not read: the bad line when one is
    found, else what the reader said."""
    found = _first_bad_line(path, kind) if kind != "parquet" else None
    if found is not None:
        return found
    cause = _root_cause(error)
    return BlindspotInputError(f"could not be read as {kind} ({type(cause).__name__}: "
                               f"{str(cause).strip()[:300]})", file=path,
                               fix=f"Check that it is {FORMAT_HINTS[kind]}")


def write_table(ds: Any, path: str | Path) -> Path:
    """Write a Dataset to jsonl/json/csv/parquet by extension, all at once (a temporary file
    renamed into place: never a half-written file, even on a full disk); returns the path."""
    path = Path(path)
    kind = table_format(path)
    with atomic_path(path) as temporary, quiet_datasets():  # no "Creating json from Arrow" bar
        if kind == "json":
            ds.to_json(str(temporary), lines=True, force_ascii=False)
        elif kind == "csv":
            ds.to_csv(str(temporary), index=False)
        else:
            ds.to_parquet(str(temporary))
    return path
