"""DEMETR and ACES files read in their own formats and run through the preference protocol.

The fixtures under tests/fixtures/challenge_sets are hand-written in the published formats
(DEMETR: one JSON list per perturbation; ACES: a tab-separated file without quoting). Every
figure is checked against sentence chrF / BLEU computed here with sacrebleu and counted by hand.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import datasets
import pytest
import sacrebleu
from typer.testing import CliRunner

from blindspot.challenge_sets.formats import FORMATS, read_aces, read_demetr
from blindspot.challenge_sets.names import FORMAT_NAMES
from blindspot.cli import app
from blindspot.datasets_scripts.challenge_builder import build_challenge_dataset
from blindspot.protocols.preference_run import run_preference

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "challenge_sets"
DEMETR = FIXTURES / "demetr"
ACES = FIXTURES / "aces.tsv"
SENTENCE = {"chrf.chrf": lambda hyp, ref: sacrebleu.sentence_chrf(hyp, [ref]).score,
            "bleu.bleu": lambda hyp, ref: sacrebleu.sentence_bleu(hyp, [ref]).score}


def _run(tmp_path: Path, form: str, data: Path, *extra: str) -> dict:
    result = CliRunner().invoke(app, ["run", "--protocol", "preference", "--format", form,
                                      "--data", str(data), "--metrics", "chrf,bleu",
                                      "--out", str(tmp_path), *extra])
    assert result.exit_code == 0, result.output
    return json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))


def test_declared_formats_are_the_option_choices() -> None:
    assert tuple(FORMATS) == FORMAT_NAMES


def test_demetr_detection_rate_equals_sacrebleu(tmp_path: Path) -> None:
    results = _run(tmp_path, "demetr", DEMETR)
    data = results["datasets"]["demetr"]
    assert data["skipped"] == {"minor_id28_final_punc_removed": 1}  # pert_check false
    expected_names = []
    for file in sorted(DEMETR.glob("*.json")):
        items = [i for i in json.loads(file.read_text(encoding="utf-8")) if i["pert_check"]]
        expected_names.append(file.stem)
        for metric, score in SENTENCE.items():
            lower = 0
            for item in items:
                mt = score(item["mt_sent"], item["eng_sent"])
                pert = score(item["pert_sent"], item["eng_sent"])
                # the reference-as-translation baseline (id 35) must score higher, not lower
                lower += pert > mt if item["pert_id"] == 35 else pert < mt
            entry = data["metrics"][metric]["per_phenomenon"][file.stem]
            assert entry["n"] == len(items)
            assert entry["detection_rate"] == pytest.approx(lower / len(items), abs=1e-12)
            assert entry["accuracy"] == entry["detection_rate"]
    assert list(data["metrics"]["chrf.chrf"]["per_phenomenon"]) == expected_names
    # the fixture's final-punctuation removal is missed by chrF on one sentence of two
    chrf = data["metrics"]["chrf.chrf"]
    assert chrf["per_phenomenon"]["minor_id28_final_punc_removed"]["detection_rate"] == 0.5
    rates = [e["detection_rate"] for e in chrf["per_phenomenon"].values()]
    assert chrf["mean"]["detection_rate"] == pytest.approx(sum(rates) / len(rates))
    minor = [chrf["per_phenomenon"][n]["detection_rate"] for n in expected_names
             if n.startswith("minor")]
    assert chrf["by_group"]["minor"]["detection_rate"] == pytest.approx(sum(minor) / len(minor))
    report = (tmp_path / "report.md").read_text(encoding="utf-8")
    assert "| minor_id28_final_punc_removed | 2 | 0.500 | 0.500 |" in report


def _aces_rows() -> list[dict[str, str]]:
    with ACES.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE))


@pytest.mark.parametrize("ties", ["excluded", "discordant"])
def test_aces_tau_with_ties_discordant_equals_sacrebleu(tmp_path: Path, ties: str) -> None:
    results = _run(tmp_path, "aces", ACES, "--protocol-option", f"ties={ties}")
    rows = _aces_rows()
    assert results["config"]["ties"] == ties
    for metric, score in SENTENCE.items():
        entries = results["datasets"]["aces.tsv"]["metrics"][metric]["per_phenomenon"]
        assert list(entries) == list(dict.fromkeys(r["phenomena"] for r in rows))
        for phenomenon, entry in entries.items():
            pairs = [(score(r["good-translation"], r["reference"]),
                      score(r["incorrect-translation"], r["reference"]))
                     for r in rows if r["phenomena"] == phenomenon]
            concordant = sum(g > b for g, b in pairs)
            ties_seen = sum(g == b for g, b in pairs)
            discordant = len(pairs) - concordant
            assert entry["aces_tau"] == pytest.approx((concordant - discordant) / len(pairs))
            assert entry["ties"] == ties_seen
            strict = discordant - ties_seen
            ours = ((concordant - strict) / (concordant + strict) if concordant + strict else None)
            if ties == "discordant":
                ours = (concordant - discordant) / len(pairs)
            assert entry["kendall_like"] == (pytest.approx(ours) if ours is not None else None)
    # chrF ignores whitespace: the doubled space of row 5 is a tie, which ACES counts against it
    quotes = results["datasets"]["aces.tsv"]["metrics"]["chrf.chrf"]["per_phenomenon"][
        "punctuation:deletion_quotes"]
    assert (quotes["ties"], quotes["aces_tau"]) == (1, -1.0)
    assert quotes["kendall_like"] == (None if ties == "excluded" else -1.0)


def test_aces_reader_keeps_quotes_as_text() -> None:
    challenge = read_aces(ACES)
    assert len(challenge.items) == 7
    assert challenge.items[5].reference == '"I have no time," she said.'
    assert challenge.items[5].id == "5"


def test_bad_files_name_file_item_and_field(tmp_path: Path) -> None:
    bad = tmp_path / "critical_id8_negation.json"
    items = json.loads((DEMETR / "critical_id8_negation.json").read_text(encoding="utf-8"))
    del items[1]["pert_sent"]
    bad.write_text(json.dumps(items), encoding="utf-8")
    result = CliRunner().invoke(app, ["run", "--protocol", "preference", "--format", "demetr",
                                      "--data", str(bad), "--metrics", "chrf",
                                      "--out", str(tmp_path / "o")])
    assert result.exit_code == 1
    text = " ".join(result.output.split())
    assert "critical_id8_negation.json" in text and "item 1: missing field(s) ['pert_sent']" \
        in text and "Traceback" not in text
    tsv = tmp_path / "aces.tsv"
    tsv.write_text(ACES.read_text(encoding="utf-8") + "9\tonly\ttwo\n", encoding="utf-8")
    result = CliRunner().invoke(app, ["run", "--protocol", "preference", "--format", "aces",
                                      "--data", str(tsv), "--metrics", "chrf",
                                      "--out", str(tmp_path / "p")])
    assert result.exit_code == 1 and "line 9" in result.output
    result = CliRunner().invoke(app, ["run", "--format", "aces", "--data", str(ACES),
                                      "--metrics", "chrf", "--out", str(tmp_path / "q")])
    assert result.exit_code == 1 and "--protocol preference" in result.output
    with pytest.raises(ValueError, match="MENLI-style sets only"):
        run_preference(str(ACES), "chrf", format="aces", combine_with="bleu", progress=False)


def test_challenge_folder_loads_and_rebuilds_identically(tmp_path: Path) -> None:
    first = build_challenge_dataset("demetr", DEMETR, tmp_path / "a")
    second = build_challenge_dataset("demetr", DEMETR, tmp_path / "b")
    rows = datasets.load_dataset(str(first), split="test")
    assert rows.num_rows == len(read_demetr(DEMETR).items) == 10
    negation = datasets.load_dataset(str(first), "critical_id8_negation", split="test")
    assert set(negation["phenomenon"]) == {"critical_id8_negation"} and negation.num_rows == 3
    record = json.loads((first / "blindspot_build.json").read_text(encoding="utf-8"))
    assert record["skipped"] == {"minor_id28_final_punc_removed": 1}
    for path in sorted(p.relative_to(first) for p in first.rglob("*.parquet")):
        assert (first / path).read_bytes() == (second / path).read_bytes()


@pytest.mark.quick
def test_build_challenge_command_writes_the_folder(tmp_path: Path) -> None:
    """`blindspot build-challenge` builds what build_challenge_dataset builds; unreadable data is
    one `error: ` line and exit 1."""
    built = CliRunner().invoke(app, ["build-challenge", "--format", "aces", "--data", str(ACES),
                                     "--out", str(tmp_path / "cli"), "--version", "2.0.0"])
    assert built.exit_code == 0, built.output
    assert built.stdout == f"wrote {tmp_path / 'cli'}\n"
    record = json.loads((tmp_path / "cli" / "blindspot_build.json").read_text(encoding="utf-8"))
    assert record["format"] == "aces" and record["version"] == "2.0.0"
    assert record["name"] == "blindspot-aces-aces"
    bad = CliRunner().invoke(app, ["build-challenge", "--format", "demetr", "--data",
                                   str(ACES), "--out", str(tmp_path / "bad")])
    assert bad.exit_code == 1 and bad.stderr.startswith("error: ") and bad.stdout == ""
    assert bad.stderr.count("\n") == 1 and not (tmp_path / "bad").exists()
