"""The lexical metrics the papers examine besides BLEU/ROUGE/chrF/TER (issue 33): METEOR, GLEU and
NIST give the canonical evaluate modules' documented values (their doctests, in
test_metric_doctests, hold the rest); the values worked out by hand from the other metrics' definitions are in
test_metric_formulas; the NLTK data
is assembled offline; and every one runs through a blind-spot run on the demo data to verdicts."""

from __future__ import annotations

import unicodedata
from pathlib import Path

import evaluate
import pytest

from blindspot.assets import install_perluniprops, install_punkt_tab


def test_nltk_data_is_assembled_offline(tmp_path: Path) -> None:
    punkt = install_punkt_tab(tmp_path)
    abbreviations = (punkt / "abbrev_types.txt").read_text(encoding="utf-8").split("\n")
    assert "mr" in abbreviations and "dr" in abbreviations
    assert install_punkt_tab(tmp_path) == punkt  # done once
    props = install_perluniprops(tmp_path)
    number = (props / "Number.txt").read_text(encoding="utf-8")
    punctuation = (props / "Punctuation.txt").read_text(encoding="utf-8")
    assert "7" in number and "." not in number and "." in punctuation and "«" in punctuation
    assert all(unicodedata.category(c).startswith("S")
               for c in (props / "Symbol.txt").read_text(encoding="utf-8"))


def test_canonical_examples_and_sentence_splitting() -> None:
    """METEOR tokenizes with Punkt (a full stop after "Mr" ends no sentence) and gives the
    canonical example's 0.6944; NIST's tokenizer reads perluniprops."""
    from nltk import sent_tokenize

    assert sent_tokenize("Mr. Smith went home. He slept.") == ["Mr. Smith went home.", "He slept."]
    meteor = evaluate.load("metrics/meteor")
    hypothesis = ("It is a guide to action which ensures that the military always obeys the "
                  "commands of the party")
    reference = "It is a guide to action that ensures that the military will forever heed Party commands"
    assert round(meteor.compute(predictions=[hypothesis], references=[reference])["meteor"], 4) \
        == 0.6944
    nist = evaluate.load("metrics/nist_mt")
    assert nist.compute(predictions=[hypothesis], references=[reference])["nist_mt"] == \
        pytest.approx(2.4477124183006533)


METRICS = ("meteor,google_bleu,nist_mt,bleu_n.bleu1,rouge.rouge4,rouge.rougeW,rouge.rougeSU4,"
           "cider,parent,qbleu")


def test_every_metric_gets_verdicts_on_the_demo(tmp_path: Path) -> None:
    from blindspot.protocols.rank import run_blindspot

    results = run_blindspot("demo", METRICS, task="translation", tests="truncation", seeds=[1],
                            out=tmp_path, progress=False)
    metrics = results["datasets"]["demo-translation"]["metrics"]
    assert len(metrics) == len(METRICS.split(","))
    for name, result in metrics.items():
        assert result["error"] is None, name
        assert result["tests"]["truncation"]["status"] in ("pass", "fail"), name
        anchors = result["anchors"]
        assert anchors["reference"] > anchors["gold"] > anchors["empty"], name
