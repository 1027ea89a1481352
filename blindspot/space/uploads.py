"""Checking what users upload to the Space, with an error that names the problem and the fix.

A gold-data upload (jsonl, json, csv or parquet) must be non-empty, under the size and row
limits (:class:`blindspot.space.limits.SpaceLimits`), a data file by its content as well as its
name (UTF-8 text without NUL bytes, JSON that starts as JSON, Parquet with its ``PAR1`` marks;
never a program, script or archive) and readable by :func:`blindspot.io.read_table` (CSV fields
may span lines when quoted); its column roles are then guessed with the runner's own rules and
can be changed.
A ``results.json`` upload must be a rank-protocol results file (``blindspot.report.schema``).
Every failure is an :class:`UploadError` whose message names the file by its name, never by the
server path it was stored under.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from blindspot.io import FORMATS, read_table
from blindspot.perturbations.dataset import column_values
from blindspot.protocols.preference_data import check_columns, load_preference_set
from blindspot.protocols.preference_run import parse_options
from blindspot.report.schema import SCHEMA_VERSION
from blindspot.runner.data import ROLE_CANDIDATES, guess_column
from blindspot.space.limits import DEFAULT_LIMITS, SpaceLimits

#: Uploads must be smaller than this by default; the page states the Space's limit.
MAX_UPLOAD_BYTES = DEFAULT_LIMITS.max_upload_bytes
TEXT_SUFFIXES = (".jsonl", ".json", ".csv")
JSON_SUFFIXES = (".jsonl", ".json")
PARQUET_MARK = b"PAR1"
#: Leading bytes of files that are never data, whatever their name says.
NOT_DATA: dict[bytes, str] = {b"\x7fELF": "a program (ELF executable)", b"#!": "a script",
                              b"PK\x03\x04": "a zip archive", b"\x1f\x8b": "a gzip archive",
                              b"%PDF": "a PDF document"}
NONE = "(none)"


class UploadError(ValueError):
    """An upload the Space cannot use; the message says why and what to do."""


@dataclass
class UploadedTable:
    """A readable gold-data upload: its rows and the column roles guessed for it."""

    path: Path
    name: str
    dataset: Any
    roles: dict[str, str | None]

    @property
    def columns(self) -> list[str]:
        return list(self.dataset.column_names)

    def describe(self) -> str:
        roles = ", ".join(f"{role}: {col or NONE}" for role, col in self.roles.items())
        return (f"{self.name}: {self.dataset.num_rows} rows, columns {self.columns}; "
                f"guessed roles: {roles}")


def _megabytes(size: int) -> str:
    return f"{size / 1_000_000:.1f} MB"


def check_file(path: str | Path, name: str | None = None,
               suffixes: tuple[str, ...] = tuple(FORMATS),
               limits: SpaceLimits = DEFAULT_LIMITS) -> Path:
    """``path`` if it is a non-empty data file of an accepted type under the size limit: by its
    name (the suffix) and by its content (:func:`check_content`)."""
    path = Path(path)
    name = name or path.name
    suffix = path.suffix.lower()
    if suffix not in suffixes:
        raise UploadError(f"{name}: unsupported file type {suffix or '(none)'!r}; upload one of "
                          f"{', '.join(suffixes)}")
    size = path.stat().st_size
    if size >= limits.max_upload_bytes:
        raise UploadError(f"{name} is {_megabytes(size)}; uploads must be smaller than "
                          f"{_megabytes(limits.max_upload_bytes)} on this Space: upload the "
                          "first rows only, or run `blindspot run` locally on the whole file")
    if size == 0:
        raise UploadError(f"{name} is empty; upload a file with one row per example")
    check_content(path.read_bytes(), name, suffix)
    return path


def check_content(data: bytes, name: str, suffix: str) -> None:
    """An UploadError unless ``data`` looks like a data file of type ``suffix``."""
    kind = next((what for mark, what in NOT_DATA.items() if data.startswith(mark)), None)
    if kind is not None:
        raise UploadError(f"{name} is {kind}, not a data file; upload the rows as "
                          f"{', '.join(FORMATS)}")
    if suffix == ".parquet":
        if not (data.startswith(PARQUET_MARK) and data.endswith(PARQUET_MARK)):
            raise UploadError(f"{name} is not a Parquet file (it lacks the PAR1 marks); upload "
                              "a .parquet written by pandas or pyarrow, or the rows as .csv or "
                              ".jsonl")
        return
    if not data.strip():
        raise UploadError(f"{name} is empty; upload a file with one row per example")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data[: error.start].count(b"\n") + 1
        raise UploadError(f"{name} is not UTF-8 text (byte 0x{data[error.start]:02x} on line "
                          f"{line}); save it with the UTF-8 encoding and upload it "
                          "again") from None
    if "\x00" in text:
        line = text[: text.index("\x00")].count("\n") + 1
        raise UploadError(f"{name} holds binary data (a NUL byte on line {line}), not text; "
                          f"upload the rows as {', '.join(FORMATS)}")
    if suffix in JSON_SUFFIXES and text.lstrip()[:1] not in ("{", "["):
        raise UploadError(f"{name} is not JSON: it does not start with {{ or [; upload one "
                          "JSON object per line (.jsonl), or rename a CSV file to .csv")


def guess_roles(columns: list[str]) -> dict[str, str | None]:
    """Each role's column by the runner's conventional names (``gold``, ``references``...)."""

    return {role: guess_column(role, columns) for role in ROLE_CANDIDATES}


def read_upload(path: str | Path, name: str | None = None,
                limits: SpaceLimits = DEFAULT_LIMITS) -> UploadedTable:
    """The rows of a gold-data upload and its guessed roles, or an :class:`UploadError`."""

    path = check_file(path, name, limits=limits)
    name = name or path.name
    try:
        dataset = read_table(path)
    except (ValueError, FileNotFoundError) as error:
        message = str(error).replace(str(path), name)
        raise UploadError(f"{message}. Check that every row is complete (in a CSV, quote fields "
                          "that contain commas or line breaks)") from None
    if dataset.num_rows == 0:
        raise UploadError(f"{name} has a header but no rows; nothing to perturb or score")
    if dataset.num_rows > limits.max_rows:
        raise UploadError(f"{name} has {dataset.num_rows:,} rows; this Space reads at most "
                          f"{limits.max_rows:,} rows per upload: upload the first "
                          f"{limits.max_rows:,} rows, or run `blindspot run` locally on the "
                          "whole file")
    return UploadedTable(path, name, dataset, guess_roles(list(dataset.column_names)))


def _role_text(text: str | None) -> str | None:
    return None if text in (None, "", NONE) else text


def chosen_roles(table: UploadedTable, chosen: Mapping[str, str | None]
                 ) -> dict[str, str | None]:
    """The column of every role as chosen in the page (``(none)`` is None); each must exist."""
    roles = {role: _role_text(chosen.get(role)) for role in table.roles}
    for role, column in roles.items():
        if column is not None and column not in table.columns:
            raise UploadError(f"{table.name}: {role} column {column!r} not found; the file has "
                              f"columns {table.columns}")
    return roles


def check_roles(table: UploadedTable, chosen: Mapping[str, str | None]) -> dict[str, str | None]:
    """The column of every role as chosen in the page; the text column must hold text."""

    roles = chosen_roles(table, chosen)
    hypothesis = roles["hypothesis"]
    if hypothesis is None:
        raise UploadError(f"{table.name} has no hypothesis column (the text to perturb); its "
                          f"columns are {table.columns}: pick one as 'hypothesis' in the column "
                          "mapping, or name a column gold")
    values = column_values(table.dataset, hypothesis)
    bad = [i + 1 for i, v in enumerate(values) if not (isinstance(v, str) and v.strip())]
    if bad:
        shown = ", ".join(map(str, bad[:5])) + (" ..." if len(bad) > 5 else "")
        raise UploadError(f"{table.name}: the hypothesis column {hypothesis!r} is empty or not "
                          f"text in {len(bad)} row(s) (row {shown}); fill them in or remove "
                          "those rows")
    return roles


def check_menli_upload(table: UploadedTable, chosen: Mapping[str, str | None],
                       options: Mapping[str, Any]) -> None:
    """A preference-protocol upload: a MENLI-style set with the columns its mode compares (the
    column names are MENLI's, so there is no mapping and no hypothesis column)."""

    try:
        settings = parse_options(dict(options))
        check_columns(load_preference_set(table.path, settings["fixed"]), settings["mode"])
    except ValueError as error:
        raise UploadError(f"{table.name}: {error}") from None
    return None


#: where the correlation protocol looks for the judged texts when no column is mapped
JUDGED_TEXT_COLUMNS = ("summary", "hypothesis", "gold")


def check_judgments_upload(table: UploadedTable, chosen: Mapping[str, str | None],
                           options: Mapping[str, Any]) -> dict[str, str | None]:
    """A correlation-protocol upload: one row per document x system with the judged text, an
    id, a system column and references (in the rows or in the references file)."""
    roles = chosen_roles(table, chosen)
    text = roles["hypothesis"] or next((c for c in JUDGED_TEXT_COLUMNS if c in table.columns),
                                       None)
    if text is None:
        raise UploadError(f"{table.name} has no column with the judged texts (summary, "
                          f"hypothesis or gold); its columns are {table.columns}: pick one as "
                          "'hypothesis' in the column mapping")
    ident = roles["id"] or ("id" if "id" in table.columns else None)
    system = str(options.get("system_column") or "system")
    missing = [name for name, column in (("id", ident), ("system", system))
               if column not in table.columns]
    if missing:
        raise UploadError(f"{table.name} has no {' or '.join(missing)} column (judgments are one "
                          f"row per document id and system); its columns are {table.columns}")
    references = options.get("reference_columns", "gold,references")
    if isinstance(references, str):
        references = [c.strip() for c in references.split(",")]
    if not options.get("references") and not set(references) & set(table.columns):
        raise UploadError(f"{table.name} has no reference column ({', '.join(references)}): "
                          "upload the references file (joined on id) as the protocol file")
    return {"hypothesis": text, "id": ident}


def _gold_upload(table: UploadedTable, chosen: Mapping[str, str | None],
                 options: Mapping[str, Any]) -> dict[str, str | None]:
    return check_roles(table, chosen)


#: protocols whose uploads are not gold data with a hypothesis column
UPLOAD_CHECKS = {"preference": check_menli_upload, "correlation": check_judgments_upload}


def check_upload(table: UploadedTable, protocol: str, chosen: Mapping[str, str | None],
                 options: Mapping[str, Any] | None = None) -> dict[str, str | None] | None:
    """The columns the protocol's run gets for an upload, checked the protocol's way."""
    return UPLOAD_CHECKS.get(protocol, _gold_upload)(table, chosen, options or {})


def read_results(path: str | Path, name: str | None = None,
                 limits: SpaceLimits = DEFAULT_LIMITS) -> dict[str, Any]:
    """A rank-protocol ``results.json`` upload as a dict, or an :class:`UploadError`."""

    path = check_file(path, name, suffixes=(".json",), limits=limits)
    name = name or path.name
    try:
        results = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise UploadError(f"{name} is not valid JSON (line {error.lineno}: {error.msg}); "
                          "upload the results.json a blindspot run wrote") from None
    protocol = results.get("protocol", "rank") if isinstance(results, dict) else None
    if protocol not in (None, "rank"):  # deviation, correlation and search have no 'datasets'
        raise UploadError(f"{name} holds results of the {protocol!r} protocol; the blind-spot "
                          "matrix shows rank-protocol results (pass/fail per test): open that "
                          "run's report.md instead")
    if not isinstance(results, dict) or not isinstance(results.get("datasets"), dict):
        raise UploadError(f"{name} is not a blindspot results.json (it has no 'datasets'); "
                          "upload the results.json a blindspot run wrote")
    if results.get("schema_version") != SCHEMA_VERSION:
        raise UploadError(f"{name} has results schema {results.get('schema_version')!r}; this "
                          f"Space reads schema {SCHEMA_VERSION}: rerun it with this version")
    return results
