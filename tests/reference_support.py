"""What the parity tests (tests/test_reference_*.py) share: the fixtures of outputs recorded from
the reference implementations that no registry ships (tests/fixtures/reference/<metric>.json,
written by record_lexical.py and record_model_metrics.py beside them), the inputs they name, and
the one agreement check.

A fixture names its inputs; rows of ../shared/data are named (by position, or by file, row id and
field) and read from there, never copied; short examples written for blindspot are kept in the
fixture. Each parity test scores the same inputs with our default on the same local weights and
asserts the agreement its scorer declares (``Scorer.reference``: max |diff| over N rows), which
docs/metrics.md shows.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from conftest import SHARED_DATA
from engine_support import cnndm_rows, wmt21_rows

#: the folder of the recorded fixtures (and of the scripts that record them)
FIXTURES = Path(__file__).resolve().parent / "fixtures" / "reference"


@functools.cache
def data_rows(file: str) -> dict[str, dict[str, Any]]:
    with open(SHARED_DATA / file, encoding="utf-8") as fh:
        return {row["id"]: row for row in map(json.loads, fh)}


def text_of(value: str | dict[str, str]) -> str:
    """An input as written, or the field of a shared data row it names
    (``{"data": file, "id": row id, "field": name}``)."""
    if isinstance(value, str):
        return value
    return str(data_rows(value["data"])[value["id"]][value["field"]])


def data_row(file: str, row_id: str, field: str) -> dict[str, str]:
    """How a fixture names a field of a shared data row."""
    return {"data": file, "id": row_id, "field": field}


def load_fixture(metric: str) -> dict[str, Any]:
    """A metric's fixture; where it lists ``rows``, their inputs (``hypothesis``, ``reference``,
    ``source``) are read."""
    fixture = json.loads((FIXTURES / f"{metric}.json").read_text(encoding="utf-8"))
    for row in fixture.get("rows", ()):
        for key in ("hypothesis", "reference", "source"):
            if key in row:
                row[key] = text_of(row[key])
    return fixture


def qbleu_rows(fixture: dict[str, Any]) -> list[tuple[str, str]]:
    """(hypothesis question, reference question) pairs: the written ones, then WMT21 rows."""
    inputs = fixture["inputs"]
    shared = inputs["wmt21"]
    return ([(h, r) for h, r in inputs["written"]]
            + [(row[shared["hypothesis"]], row[shared["reference"]])
               for row in wmt21_rows(shared["rows"])])


def parent_rows(fixture: dict[str, Any]) -> list[tuple[str, list[str], str]]:
    """(generation, references, table) rows: the written ones, then CNN/DM rows whose source
    article is a one-record table (``|||article``, the script's pair with an empty attribute)."""
    inputs = fixture["inputs"]
    shared = inputs["cnndm"]
    return ([(row["generation"], row["references"], row["table"]) for row in inputs["written"]]
            + [(row[shared["generation"]], row["references"][:shared["references"]],
                "|||" + " ".join(row["source"].split()))
               for row in cnndm_rows(shared["rows"])])


def max_abs_diff(ours: Sequence[float], theirs: Sequence[float]) -> float:
    """The agreement of two score lists, row by row."""
    assert len(ours) == len(theirs), (len(ours), len(theirs))
    return max(abs(float(a) - float(b)) for a, b in zip(ours, theirs, strict=True))


def assert_declared(scorer: Any, measured: float, rows: int) -> None:
    """The measured agreement is within what the scorer declares, on as many rows."""
    declared = scorer.reference
    assert declared is not None and declared.max_abs_diff is not None, scorer.name
    assert declared.rows == rows, (scorer.name, declared.rows, rows)
    assert measured <= declared.max_abs_diff, (scorer.name, measured, declared.max_abs_diff)
