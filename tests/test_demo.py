"""The embedded demo corpus: every file loads, has its documented columns, and has text that every
perturbation can work on (sentences, named entities, German sources)."""

from __future__ import annotations

import json
import re

import datasets
import pytest

from blindspot.demo import DEMO_TASKS, demo_columns, demo_path, load_demo
from blindspot.parsing import get_parser

EXPECTED_COLUMNS = {
    "open_ended": {"id", "gold", "reference"},
    "summarization": {"id", "source", "gold", "references"},
    "translation": {"id", "source", "gold", "reference"},
}
MIN_GOLD_SENTENCES = {"open_ended": 6, "summarization": 2, "translation": 1}
GERMAN_WORDS = {"der", "die", "das", "den", "dem", "des", "und", "ist", "sind", "hat", "mit", "von",
                "im", "am", "zum", "zur", "ein", "eine", "einen", "nach", "wegen", "für", "auf"}


@pytest.fixture(scope="module", params=DEMO_TASKS)
def task(request):
    return request.param


@pytest.fixture(scope="module")
def ds(task):
    return load_demo(task)


def _strings(row):
    for value in row.values():
        if isinstance(value, list):
            yield from value
        elif value is not None:
            yield value


def test_file_is_valid_jsonl(task):
    lines = demo_path(task).read_text(encoding="utf-8").splitlines()
    rows = [json.loads(line) for line in lines]
    assert all(isinstance(row, dict) for row in rows)


def test_loads_as_dataset_with_documented_columns(task, ds):
    assert isinstance(ds, datasets.Dataset)
    assert set(ds.column_names) == EXPECTED_COLUMNS[task]
    assert 20 <= ds.num_rows <= 40


def test_row_order_is_file_order(task, ds):
    ids = [json.loads(line)["id"] for line in demo_path(task).read_text("utf-8").splitlines()]
    assert ds["id"] == ids


def test_ids_unique_and_well_formed(task, ds):
    ids = ds["id"]
    assert len(set(ids)) == len(ids)
    assert all(re.fullmatch(rf"demo-{task}-\d{{3}}", i) for i in ids)


def test_no_empty_strings(ds):
    for row in ds:
        for text in _strings(row):
            assert isinstance(text, str) and text.strip(), row["id"]
            assert text == text.strip(), row["id"]


def test_gold_sentence_counts(task, ds):
    parser = get_parser()
    for row in ds:
        assert len(parser.parse(row["gold"]).sents) >= MIN_GOLD_SENTENCES[task], row["id"]


def test_open_ended_paragraphs():
    ds = load_demo("open_ended")
    parser = get_parser()
    golds = ds["gold"]
    assert len(set(golds) | set(ds["reference"])) == 2 * ds.num_rows  # all paragraphs distinct
    for row in ds:
        parsed = parser.parse(row["gold"])
        assert len(parsed.ents) >= 3, row["id"]
        assert {label for _, _, label in parsed.ents} & {"PERSON", "GPE", "ORG", "LOC", "FAC"}
        assert any(ch.isdigit() for ch in row["gold"]), row["id"]
        assert len(parser.parse(row["reference"]).sents) >= 6, row["id"]


def test_summarization_references():
    ds = load_demo("summarization")
    for row in ds:
        refs = row["references"]
        assert isinstance(refs, list) and len(refs) >= 3, row["id"]
        assert row["gold"] not in refs and len(set(refs)) == len(refs), row["id"]
        assert len(row["source"].split()) > 2 * len(row["gold"].split()), row["id"]


def test_translation_sources_are_german():
    ds = load_demo("translation")
    for row in ds:
        words = set(re.findall(r"\w+", row["source"].lower()))
        assert words & GERMAN_WORDS, row["id"]
        assert row["source"] != row["gold"] and row["gold"] != row["reference"], row["id"]
    assert any(ch in "äöüß" for ch in "".join(ds["source"]))


def test_demo_columns_name_real_columns(task, ds):
    roles = demo_columns(task)
    assert roles["hypothesis"] == "gold"
    for key in ("id", "hypothesis", "references", "source"):
        assert roles[key] is None or roles[key] in ds.column_names
    assert roles["references_is_list"] == isinstance(ds[0][roles["references"]], list)
    assert (roles["source"] is None) == (task == "open_ended")
    roles["hypothesis"] = "changed"
    assert demo_columns(task)["hypothesis"] == "gold"  # a fresh dict each call


def test_open_ended_alias_and_unknown_task():
    assert load_demo("open-ended")["id"] == load_demo("open_ended")["id"]
    assert demo_columns("open-ended") == demo_columns("open_ended")
    with pytest.raises(ValueError, match="summarization"):
        load_demo("poetry")
    with pytest.raises(ValueError, match="open_ended"):
        demo_path("translation_paragraph")
