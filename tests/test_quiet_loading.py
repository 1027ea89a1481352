"""Tests that loading a data file shows no `datasets` bars ("Generating train split") while the
user's own `datasets` calls keep theirs.

The rows are real (the shared WMT21 file's first lines), written to fresh files so that no
`datasets` cache can hide a bar.
"""

from __future__ import annotations

import json
from pathlib import Path

import datasets
import pytest
from conftest import SHARED_DATA

from blindspot.io import read_table, write_table

pytestmark = [pytest.mark.quick, pytest.mark.shared_data]  # make check: no model load

BAR = "Generating train split"


def fresh_file(path: Path, count: int = 5) -> Path:
    with (SHARED_DATA / "wmt21_de_en_translation.jsonl").open(encoding="utf-8") as handle:
        rows = [json.loads(next(handle)) for _ in range(count)]
    path.write_text("".join(json.dumps({k: r[k] for k in ("id", "source", "gold")},
                                       ensure_ascii=False) + "\n" for r in rows),
                    encoding="utf-8")
    return path


def test_reading_and_writing_a_file_shows_no_datasets_bars(tmp_path: Path, capfd) -> None:
    ds = read_table(fresh_file(tmp_path / "mine.jsonl"))
    write_table(ds, tmp_path / "copy.jsonl")
    captured = capfd.readouterr()
    assert ds.num_rows == 5 and (tmp_path / "copy.jsonl").read_text().count("\n") == 5
    assert BAR not in captured.err and "Creating json" not in captured.err


def test_the_users_own_datasets_calls_keep_their_bars(tmp_path: Path, capfd) -> None:
    assert not datasets.are_progress_bars_disabled()
    read_table(fresh_file(tmp_path / "ours.jsonl"))
    assert not datasets.are_progress_bars_disabled()  # restored after our load
    capfd.readouterr()
    datasets.Dataset.from_json(str(fresh_file(tmp_path / "theirs.jsonl")), keep_in_memory=True)
    assert BAR in capfd.readouterr().err  # the capture sees a bar when there is one


def test_bars_the_user_turned_off_stay_off(tmp_path: Path) -> None:
    datasets.disable_progress_bars()
    try:
        read_table(fresh_file(tmp_path / "mine.jsonl"))
        assert datasets.are_progress_bars_disabled()
    finally:
        datasets.enable_progress_bars()
