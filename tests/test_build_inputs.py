"""Tests of what `build-dataset` keeps from its input: a `reference` column (as `references`) and
the input's licence, with where it came from in the card.

The rows are the shared TED-MT data (real text with a `reference` column), read in place.
"""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml
from conftest import SHARED_DATA
from typer.testing import CliRunner

from blindspot.cli import app
from blindspot.datasets_scripts.build_adversarial import build_adversarial_dataset

pytestmark = pytest.mark.quick  # make check: no model load

TED = SHARED_DATA / "ted_mt_zh_en_translation.jsonl"


def ted_rows(count: int) -> list[dict]:
    with TED.open(encoding="utf-8") as handle:
        return [json.loads(next(handle)) for _ in range(count)]


def write_rows(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows),
                    encoding="utf-8")
    return path


def build(data: Path, out: Path, **options) -> tuple[dict, str]:
    folder = build_adversarial_dataset(str(data), "translation_paragraph", out,
                                       tests="truncation", seeds=(1,), **options)
    card = (folder / "README.md").read_text(encoding="utf-8")
    return yaml.safe_load(card.split("---", 2)[1]), card


@pytest.mark.shared_data
def test_a_reference_column_is_kept_as_references(tmp_path: Path) -> None:
    rows = ted_rows(3)
    data = write_rows(tmp_path / "mine.jsonl", rows)
    front, card = build(data, tmp_path / "out")
    gold = pq.read_table(tmp_path / "out" / "data" / "gold" / "test.parquet")
    assert gold.column_names == ["id", "source", "gold", "references"]
    assert gold.column("references").to_pylist() == [r["reference"] for r in rows]
    noised = pq.read_table(tmp_path / "out" / "data" / "truncation-0.1" / "test.parquet")
    assert noised.column("references").to_pylist()[:3] == [r["reference"] for r in rows]
    assert "references `references`" in card


@pytest.mark.shared_data
def test_an_unknown_licence_says_so_and_how_to_give_it(tmp_path: Path) -> None:
    front, card = build(write_rows(tmp_path / "mine.jsonl", ted_rows(2)), tmp_path / "out")
    assert front["license"] == "other"
    assert "not known: the input carries no licence; pass --license" in card


@pytest.mark.shared_data
def test_the_licence_given_wins(tmp_path: Path) -> None:
    front, card = build(write_rows(tmp_path / "mine.jsonl", ted_rows(2)), tmp_path / "out",
                        license="cc-by-4.0")
    assert front["license"] == "cc-by-4.0" and "(`cc-by-4.0`:\ngiven with --license)" in card


@pytest.mark.shared_data
def test_the_licence_of_a_dataset_card_beside_the_file(tmp_path: Path) -> None:
    data = write_rows(tmp_path / "mine.jsonl", ted_rows(2))
    (tmp_path / "README.md").write_text("---\nlicense: cc-by-sa-4.0\n---\n# my data\n")
    front, card = build(data, tmp_path / "out")
    assert front["license"] == "cc-by-sa-4.0"
    assert "the dataset card beside the input (README.md)" in card


@pytest.mark.shared_data
def test_a_shared_gold_file_read_in_place_has_its_sources_licence(tmp_path: Path) -> None:
    front, card = build(TED, tmp_path / "out", limit=2)
    assert front["license"] == "cc-by-nc-nd-4.0"
    assert "the licence of the ted_mt_zh_en gold source's upstream data" in card


@pytest.mark.shared_data
def test_a_misspelt_licence_is_refused_before_any_work(tmp_path: Path) -> None:
    """The Hub shows an id it does not list as no licence: ``build-dataset`` names the closest
    ids and how to declare an unlisted licence, exits 1 and writes nothing."""
    data = write_rows(tmp_path / "mine.jsonl", ted_rows(2))
    result = CliRunner().invoke(app, [
        "build-dataset", "--data", str(data), "--task", "translation_paragraph", "--tests",
        "truncation", "--seeds", "1", "--out", str(tmp_path / "out"), "--license", "CC-BY-4"])
    err = result.stderr
    assert result.exit_code == 1
    assert err.startswith("error: --license 'CC-BY-4' is not a Hub licence id; did you mean "
                          "'cc-by-4.0'")
    assert "declared as `other`" in err and "Traceback" not in err
    assert not (tmp_path / "out").exists()


@pytest.mark.shared_data
def test_a_card_beside_the_file_with_an_unlisted_licence_is_not_carried_over(tmp_path: Path
                                                                             ) -> None:
    data = write_rows(tmp_path / "mine.jsonl", ted_rows(2))
    card_in = tmp_path / "README.md"
    card_in.write_text("---\nlicense: CC BY-SA 4.0\n---\n# my data\n")
    front, card = build(data, tmp_path / "out")
    assert front["license"] == "other"
    assert "declares 'CC BY-SA 4.0', which is not a Hub licence id; pass --license" in card
    assert card_in.read_text() == "---\nlicense: CC BY-SA 4.0\n---\n# my data\n"  # untouched


def test_every_declared_licence_is_a_hub_id() -> None:
    from blindspot.datasets_scripts.build_adversarial import KNOWN_FILE_LICENSES
    from blindspot.datasets_scripts.gold_sources import GOLD_SOURCES
    from blindspot.datasets_scripts.hub_licenses import HUB_LICENSES

    declared = {s.license for s in GOLD_SOURCES.values()}
    declared |= {c.license for c in KNOWN_FILE_LICENSES.values()} | {"mit"}  # mit: the demo's
    assert declared - set(HUB_LICENSES) == set()
    assert len(set(HUB_LICENSES)) == len(HUB_LICENSES)
    assert all(id_ == id_.lower().strip() for id_ in HUB_LICENSES)
