"""``blindspot checkup``: every check finds what is there, with figures computed here by hand.

chrF and BLEU figures are recomputed with sacrebleu directly; the batch, determinism and
truncation checks are shown to fail on small metrics written here to have exactly that flaw; the
MiniLM truncation length is measured on the real model (slow).
"""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

import pytest
import sacrebleu
from typer.testing import CliRunner

from blindspot.checkup.checks import find_blind_point
from blindspot.checkup.protocol import run_checkup
from blindspot.cli import app
from blindspot.demo import load_demo
from blindspot.scoring.probe import compatibility_forms, random_characters, shuffled_words

ROWS = 6


def _demo_rows() -> list[dict]:
    return list(load_demo("translation"))[:ROWS]


def test_blind_point_is_found_exactly() -> None:
    assert find_blind_point(lambda k: min(k, 300), 4096).appended_words == 300
    assert find_blind_point(lambda k: min(k, 17), 4096).appended_words == 17
    assert find_blind_point(lambda k: float(k), 1024).appended_words is None
    assert find_blind_point(lambda k: 5.0, 1024).appended_words == 0


def test_chrf_checkup_matches_sacrebleu(tmp_path: Path) -> None:
    results = run_checkup("chrf", "demo", task="translation", rows=ROWS, max_words=256,
                          out=tmp_path)
    checks = results["checks"]
    rows = _demo_rows()
    chrf = [sacrebleu.sentence_chrf(r["gold"], [r["reference"]]).score for r in rows]
    anchors = checks["anchors"]["figures"]["anchors"]
    assert anchors["gold"]["mean"] == pytest.approx(sum(chrf) / ROWS)
    assert anchors["reference"]["mean"] == pytest.approx(100.0)
    assert anchors["empty"]["mean"] == 0.0
    unrelated = [sacrebleu.sentence_chrf(rows[(i + 1) % ROWS]["gold"], [r["reference"]]).score
                 for i, r in enumerate(rows)]
    assert anchors["unrelated_gold"]["mean"] == pytest.approx(sum(unrelated) / ROWS)
    assert anchors["unrelated_gold"]["minus_gold"] == pytest.approx(
        (sum(unrelated) - sum(chrf)) / ROWS)
    source = [sacrebleu.sentence_chrf(r["source"], [r["reference"]]).score for r in rows]
    assert anchors["copied_source"]["mean"] == pytest.approx(sum(source) / ROWS)
    # chrF drops whitespace: doubled spaces and trailing whitespace cannot move it ...
    variants = checks["normalisation"]["figures"]["variants"]
    assert variants["doubled_spaces"]["max_abs_change"] == 0.0
    assert variants["trailing_whitespace"]["max_abs_change"] == 0.0
    # ... but the NFKC-equivalent ligatures and full-width digits do, by exactly this much
    changes = [abs(sacrebleu.sentence_chrf(compatibility_forms(r["gold"]), [r["reference"]]).score
                   - c) for r, c in zip(rows, chrf, strict=True)
               if compatibility_forms(r["gold"]) != r["gold"]]
    assert variants["nfkc_compatibility"]["max_abs_change"] == pytest.approx(max(changes))
    assert checks["normalisation"]["verdict"] == "fail"
    assert checks["batch_order"]["verdict"] == "pass"
    assert checks["determinism"]["verdict"] == "pass"
    assert checks["determinism"]["figures"]["identical"] is True
    assert checks["references"]["verdict"] == "pass"
    truncation = checks["truncation"]
    assert truncation["verdict"] == "pass" and "no limit found up to 256" in truncation["summary"]
    report = (tmp_path / "report.md").read_text(encoding="utf-8")
    assert "## Normalisation invariance: **fail**" in report
    assert json.loads((tmp_path / "results.json").read_text(encoding="utf-8")) == results


def test_anchor_texts_are_seeded() -> None:
    import random

    text = "one two three four five"
    assert shuffled_words(text, random.Random(3)) == shuffled_words(text, random.Random(3))
    assert sorted(shuffled_words(text, random.Random(3)).split()) == sorted(text.split())
    noise = random_characters(text, random.Random(1))
    assert len(noise) <= len(text) and noise == random_characters(text, random.Random(1))
    assert unicodedata.normalize("NFKC", compatibility_forms("fine 2030")) == "fine 2030"


FLAWED = '''
import random

def batch_relative(predictions, references=None, sources=None):
    """Each length divided by the batch's mean length: depends on the batch."""
    lengths = [len(p) for p in predictions]
    mean = sum(lengths) / len(lengths)
    return [n / mean for n in lengths]

def noisy(predictions, references=None, sources=None):
    """A fresh random number each call: not deterministic."""
    return [random.random() for _ in predictions]

def first_hundred(predictions, references=None, sources=None):
    """Counts letters of the first 100 words only: blind past word 100."""
    return [float(sum(len(w) for w in p.split()[:100])) for p in predictions]
'''


@pytest.fixture()
def flawed(tmp_path: Path) -> Path:
    path = tmp_path / "flawed.py"
    path.write_text(FLAWED, encoding="utf-8")
    return path


def test_checks_catch_the_flaws_they_look_for(flawed: Path) -> None:
    batch = run_checkup(f"{flawed}:batch_relative", "demo", task="translation", rows=ROWS,
                        max_words=64)["checks"]
    assert batch["batch_order"]["verdict"] == "fail"
    assert batch["batch_order"]["figures"]["max_abs_diff"]["batch_8"] > 1e-3
    noisy = run_checkup(f"{flawed}:noisy", "demo", task="translation", rows=ROWS,
                        max_words=64)["checks"]
    assert noisy["determinism"]["verdict"] == "fail"
    assert noisy["determinism"]["figures"]["identical"] is False
    blind = run_checkup(f"{flawed}:first_hundred", "demo", task="translation", rows=ROWS,
                        max_words=1024)["checks"]["truncation"]
    assert blind["verdict"] == "warn"
    assert blind["figures"]["sides"]["hypothesis"]["blind_past_words"] == 100


def test_cli_checkup_and_its_errors(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["checkup", "bleu", "--task", "translation", "--data",
                                      "demo", "--rows", "4", "--max-words", "64",
                                      "--out", str(tmp_path / "bleu")])
    assert result.exit_code == 0, result.output
    results = json.loads((tmp_path / "bleu" / "results.json").read_text(encoding="utf-8"))
    assert list(results["checks"]) == ["batch_order", "determinism", "truncation",
                                       "normalisation", "references", "anchors"]
    assert results["checks"]["anchors"]["figures"]["anchors"]["reference"]["mean"] == \
        pytest.approx(100.0)
    bad = CliRunner().invoke(app, ["checkup", "chrf,bleu", "--data", "demo",
                                   "--out", str(tmp_path / "x")])
    assert bad.exit_code == 1 and "one metric at a time" in bad.output
    bad = CliRunner().invoke(app, ["checkup", "chrf", "--data", "demo", "--rows", "1",
                                   "--out", str(tmp_path / "y")])
    # the declared option's range (blindspot.protocols.declarations.CHECKUP), nothing written
    assert bad.exit_code == 1 and ("protocol option rows=1 is not accepted by the checkup "
                                   "protocol: rows must be a whole number >= 2") in bad.output
    assert not (tmp_path / "y").exists()


@pytest.mark.slow
def test_minilm_is_blind_past_510_tokens() -> None:
    """all-MiniLM-L6-v2 (BERT, 512 positions with [CLS] and [SEP]): measured, not read."""
    results = run_checkup("bertscore.f1@minilm", "demo", task="translation", rows=4,
                          max_words=2048)
    truncation = results["checks"]["truncation"]
    assert truncation["verdict"] == "warn"
    for side in ("hypothesis", "reference"):
        assert truncation["figures"]["sides"][side]["blind_past_tokens"] == 510


def test_rank_report_prints_the_anchors_beside_the_verdicts(tmp_path: Path) -> None:
    from blindspot.protocols.rank import run_blindspot

    results = run_blindspot("demo", "chrf", task="translation", tests="typo", seeds=[1],
                            out=tmp_path, progress=False)
    anchors = results["datasets"]["demo-translation"]["metrics"]["chrf.chrf"]["anchors"]
    rows = list(load_demo("translation"))[:8]
    gold = [sacrebleu.sentence_chrf(r["gold"], [r["reference"]]).score for r in rows]
    unrelated = [sacrebleu.sentence_chrf(rows[(i + 1) % 8]["gold"], [r["reference"]]).score
                 for i, r in enumerate(rows)]
    assert anchors["gold"] == pytest.approx(sum(gold) / 8)
    assert anchors["unrelated_gold"] == pytest.approx(sum(unrelated) / 8)
    assert (anchors["reference"], anchors["empty"]) == (pytest.approx(100.0), 0.0)
    report = (tmp_path / "report.md").read_text(encoding="utf-8")
    section = report.split("### Sanity anchors (score units)")[1]
    assert f"| unrelated_gold | {anchors['unrelated_gold']:.4f} |" in section


@pytest.mark.parametrize("data", ["demo", "file"])
def test_a_misspelt_task_is_refused_with_did_you_mean(tmp_path: Path, data: str) -> None:
    """A file's check-up used to accept any --task (and record it); the demo's named no
    suggestion. Both now refuse it as `run` does, before any scoring."""
    given = "demo"
    if data == "file":
        given = str(tmp_path / "rows.jsonl")
        load_demo("translation").to_json(given)
    result = CliRunner().invoke(app, ["checkup", "chrf", "--task", "translaton", "--data", given,
                                      "--out", str(tmp_path / "out")])
    assert result.exit_code == 1
    assert result.stderr.startswith("error: unknown task 'translaton'; valid tasks: ")
    assert result.stderr.rstrip().endswith("did you mean 'translation'?")
    assert not (tmp_path / "out").exists()
