"""The inputs of the recorded reference outputs (tests/fixtures/reference/*.json): rows written for
blindspot kept in the fixture, and rows of ../shared/data named by position and read from there
(never copied). tests/test_reference_lexical.py compares our scores with the recorded ones;
tests/fixtures/reference/record_lexical.py re-records them from the authors' scripts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from engine_support import cnndm_rows, wmt21_rows

FIXTURES = Path(__file__).parent / "fixtures" / "reference"


def load_fixture(name: str) -> dict[str, Any]:
    return json.loads((FIXTURES / f"{name}.json").read_text(encoding="utf-8"))


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
