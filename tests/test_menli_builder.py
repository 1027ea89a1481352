"""The MENLI-style set builder on a real WMT21 de-en slice: the shipped set's columns, every
candidate re-derivable from its attack, byte-identical rebuilds, a folder ``load_dataset`` reads
offline, numbers in words for number-error paraphrases, ref-based-only data, clear errors."""

from __future__ import annotations

import json
from pathlib import Path

import datasets
import pytest
from conftest import SHARED_DATA

from blindspot.datasets_scripts import menli_builder as mb
from blindspot.datasets_scripts.build_adversarial import BUILD_FILE
from blindspot.parsing import get_parser
from blindspot.perturbations import REGISTRY, get_perturbation

ROWS = 30


def _files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file()}


def _load(folder: Path, config: str | None, cache: Path) -> datasets.Dataset:
    """A config of a built folder, with a fresh cache (datasets would reuse one of a folder of the
    same name built before)."""
    return datasets.load_dataset(str(folder), config, split="test", cache_dir=str(cache / "hf"))


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    """The WMT21 de-en slice built once for the module."""
    out = tmp_path_factory.mktemp("menli") / "set"
    return mb.build_menli_dataset("wmt21_de_en", out, data_dir=str(SHARED_DATA), limit=ROWS)


def test_rebuild_is_byte_identical(built, tmp_path):
    again = mb.build_menli_dataset("wmt21_de_en", tmp_path / "again", data_dir=str(SHARED_DATA),
                                   limit=ROWS)
    assert _files(again) == _files(built)
    other_seed = mb.build_menli_dataset("wmt21_de_en", tmp_path / "seed2", seed=2,
                                        data_dir=str(SHARED_DATA), limit=ROWS)
    assert _files(other_seed)["data/typo/test.parquet"] != _files(built)["data/typo/test.parquet"]


def test_load_dataset_reads_the_folder_offline(built, tmp_path):
    rows = _load(built, None, tmp_path)
    record = json.loads((built / BUILD_FILE).read_text(encoding="utf-8"))
    assert tuple(rows.column_names) == mb.COLUMNS
    assert rows.num_rows == sum(a["rows"] for a in record["attacks"]) > 8 * ROWS
    assert set(rows["error"]) == {a["error"] for a in record["attacks"]}
    assert len(record["attacks"]) == 12 and record["attacks"][0]["error"] == "add"
    typos = _load(built, "typo", tmp_path)
    assert typos.num_rows == ROWS and set(typos["error"]) == {"typo"}


def test_every_candidate_is_its_attack_on_ref_and_on_r(built, tmp_path):
    source = [json.loads(line) for line in
              open(SHARED_DATA / "wmt21_de_en_translation.jsonl", encoding="utf-8")][:ROWS]
    by_id = {row["id"]: row for row in source}
    rows = _load(built, None, tmp_path)
    for row in rows:
        gold = by_id[row["id"]]
        assert (row["source"], row["ref"]) == (gold["source"], gold["gold"])
        assert row["r"] == gold["systems"]["Online-B"]
        if row["error"] != "num":
            assert row["hyp_para"] == gold["reference"]
        test = get_perturbation(row["attack"])
        level = REGISTRY[row["attack"]].levels["translation"][0]
        assert REGISTRY[row["attack"]].menli_error == row["error"]
        for anchor, adversarial in (("ref", "hyp_adv_based"), ("r", "hyp_adv_free")):
            result = test.apply(row[anchor], level, seed=1, row_id=row["id"])
            assert result.applied and result.perturbed == row[adversarial]


def test_number_error_paraphrase_spells_the_numbers_out(built, tmp_path):
    rows = _load(built, "num", tmp_path)
    assert rows.num_rows >= 3
    mamming = next(r for r in rows if r["ref"].startswith("Mamming: Corona mass infection: 174"))
    assert mamming["hyp_para"] == ("Mamming: Corona mass infection: one hundred and seventy-four "
                                   "harvesters infected")


@pytest.mark.parametrize("text, expected", [
    ("Lately, with gold prices up more than 300% over the last decade, it is harder than ever.",
     "Lately, with gold prices up more than three hundred percent over the last decade, it is "
     "harder than ever."),
    ("Last December, many gold bugs were arguing that the price was inevitably headed for $2,000.",
     "Last December, many gold bugs were arguing that the price was inevitably headed for two "
     "thousand dollars."),
    ("They paid $2.5 billion in 2008.", "They paid two point five billion dollars in 2008."),
])
def test_numbers_in_words_by_hand(text, expected):
    assert mb.numbers_in_words(get_parser().parse(text)) == expected


def test_without_r_the_set_is_ref_based_only(tmp_path):
    data = datasets.Dataset.from_dict({
        "id": ["a", "b"], "source": ["Er kam spät.", "Sie hat 3 Katzen."],
        "gold": ["He came late.", "She has 3 cats."],
        "reference": ["He arrived late.", "She owns three cats."]})
    folder = mb.build_menli_dataset(data, tmp_path / "refonly", attacks="pron,num")
    rows = _load(folder, None, tmp_path)
    assert rows["r"] == [None] * rows.num_rows and rows["hyp_adv_free"] == [None] * rows.num_rows
    pron = {r["id"]: r["hyp_adv_based"] for r in rows if r["error"] == "pron"}
    assert pron == {"a": "She came late.", "b": "He has 3 cats."}
    num, = [r for r in rows if r["error"] == "num"]  # "a" has no number
    assert num["id"] == "b" and num["hyp_para"] == "She has three cats."
    assert num["hyp_adv_based"] != "She has 3 cats." and num["hyp_adv_based"].startswith("She has ")
    assert "none (ref-based only)" in (folder / mb.CARD_FILE).read_text(encoding="utf-8")


def test_per_error_keeps_the_first_rows(built, tmp_path):
    folder = mb.build_menli_dataset("wmt21_de_en", tmp_path / "capped", data_dir=str(SHARED_DATA),
                                    limit=ROWS, per_error=5, attacks="typo,jumble")
    capped = _load(folder, "typo", tmp_path)
    full = _load(built, "typo", tmp_path)
    assert capped.to_list() == full.select(range(5)).to_list()


def test_bad_input_is_named(tmp_path):
    data = datasets.Dataset.from_dict({"id": ["a"], "gold": ["He came."], "reference": ["He came."]})
    with pytest.raises(ValueError, match="source column 'source'"):
        mb.build_menli_dataset(data, tmp_path / "x")
    with pytest.raises(ValueError, match="not MENLI attacks"):
        mb.build_menli_dataset(data, tmp_path / "y", attacks="truncation")
    with pytest.raises(ValueError, match="choose --r-system among"):
        mb.build_menli_dataset("wmt21_de_en", tmp_path / "z", data_dir=str(SHARED_DATA), limit=3,
                               roles=mb.MenliRoles(r_system="Google"))


def test_cli_builds_the_folder(tmp_path, capsys):
    from typer.testing import CliRunner

    from blindspot.cli import app

    out = tmp_path / "cli"
    result = CliRunner().invoke(app, ["build-menli", "--data", "wmt21_de_en", "--data-dir",
                                      str(SHARED_DATA), "--limit", "5", "--attacks", "typo,num",
                                      "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "typo 5" in result.output and (out / "README.md").is_file()
    bad = CliRunner().invoke(app, ["build-menli", "--data", "nope.jsonl", "--out", str(out)])
    assert bad.exit_code == 1
