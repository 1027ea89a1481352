"""The lexical metrics the papers examine besides BLEU/ROUGE/chrF/TER (issue 33): METEOR, GLEU and
NIST give the canonical evaluate modules' documented values (their doctests, in
test_metric_doctests, hold the rest); ROUGE-W / ROUGE-S[U], BLEU-n, CIDEr-D, PARENT and
Q-BLEU/Q-ROUGE give the values worked out by hand from their papers' definitions; the NLTK data
is assembled offline; and every one runs through a blind-spot run on the demo data to verdicts."""

from __future__ import annotations

import math
import unicodedata
from pathlib import Path

import evaluate
import pytest

from blindspot.assets import install_perluniprops, install_punkt_tab
from blindspot.runner.metric_spec import parse_metric_spec
from blindspot.scorers.cider import cider_d
from blindspot.scorers.parent import Record, parent, parse_table
from blindspot.scorers.qbleu import answerability, question_parts
from blindspot.scorers.rouge_lin import rouge_s, rouge_w
from blindspot.scoring.base import ScoreInput, get_scorer

# Lin (2004), section 5: S1 is the reference of the three candidates
S1 = "police killed the gunman"


def _rouge(types: list[str], hypothesis: str, reference: str) -> dict[str, float]:
    scorer = get_scorer("rouge", rouge_types=types, use_stemmer=False)
    return scorer.score_batch([ScoreInput(hypothesis, (reference,))])[0]


@pytest.mark.quick
@pytest.mark.parametrize(("candidate", "skip2", "su"), [
    # skip bigrams of S1: 6; matches: 3, 1, 2 (Lin's 0.5, 0.167, 0.333); SU adds the 4 unigrams
    ("police kill the gunman", 3 / 6, (3 + 3) / (6 + 4)),
    ("the gunman kill police", 1 / 6, (1 + 3) / (6 + 4)),
    ("the gunman police killed", 2 / 6, (2 + 4) / (6 + 4)),
])
def test_rouge_s_and_su_reproduce_lins_examples(candidate: str, skip2: float, su: float) -> None:
    scores = _rouge(["rougeS", "rougeSU", "rougeS4"], candidate, S1)
    assert scores["rougeS"] == pytest.approx(skip2)
    assert scores["rougeS4"] == pytest.approx(skip2)  # no pair is more than 4 words apart
    assert scores["rougeSU"] == pytest.approx(su)


@pytest.mark.quick
def test_skip_distance_limits_the_pairs() -> None:
    # "a x x x x x b": (a, b) has 5 words between, so ROUGE-S4 misses it and ROUGE-S counts it
    reference, hypothesis = "a b".split(), "a x x x x x b".split()
    assert rouge_s(reference, hypothesis, max_gap=None).recall == 1.0
    assert rouge_s(reference, hypothesis, max_gap=4).recall == 0.0


@pytest.mark.quick
def test_rouge_w_reproduces_lins_example() -> None:
    """Lin's X = A B C D E F G against Y1 = A B C D H I K and Y2 = A H B K C I D: the same LCS (4),
    but with f(k) = k^2 WLCS is 16 for Y1's consecutive run and 4 for Y2's: recall 4/7 and 2/7."""
    x = list("ABCDEFG")
    assert rouge_w(x, list("ABCDHIK"), weight=2.0).recall == pytest.approx(4 / 7)
    assert rouge_w(x, list("AHBKCID"), weight=2.0).recall == pytest.approx(2 / 7)
    # the default weight 1.2 through the rouge scorer: (4^1.2 / 7^1.2)^(1/1.2) = 4/7 again
    assert _rouge(["rougeW"], "a b c d h i k", "a b c d e f g")["rougeW"] == pytest.approx(4 / 7)


@pytest.mark.quick
def test_named_rouge_outputs_are_specs() -> None:
    for output in ("rouge4", "rougeW", "rougeSU4", "rougeSU"):
        spec = parse_metric_spec(f"rouge.{output}")
        assert (spec.output, spec.options) == (output, {"rouge_types": [output]})
    with pytest.raises(ValueError, match="has no output 'rougeQ'"):
        parse_metric_spec("rouge.rougeQ")


@pytest.mark.quick
def test_bleu_n_by_hand() -> None:
    """"The cat sat on the mat ." against "The cat is on the mat .": 6 of 7 unigrams, 4 of 6
    bigrams match, equal lengths."""
    row = ScoreInput("The cat sat on the mat.", ("The cat is on the mat.",))
    scores = get_scorer("bleu_n").score_batch([row])[0]
    assert scores["bleu1"] == pytest.approx(100 * 6 / 7)
    assert scores["bleu2"] == pytest.approx(100 * math.sqrt(6 / 7 * 4 / 6))
    assert parse_metric_spec("bleu_n").output == "bleu4"


@pytest.mark.quick
def test_cider_d_by_hand() -> None:
    """Without idf: "a b" against "a b c": unigram cosine 2 / (sqrt 2 sqrt 3), bigram 1 / sqrt 2,
    no 3- or 4-grams; times the length penalty exp(-1 / 72), x 10, / 4 orders."""
    expected = 10 * math.exp(-1 / 72) * (2 / math.sqrt(6) + 1 / math.sqrt(2)) / 4
    assert cider_d("a b", ["a b c"], None) == pytest.approx(expected)
    assert cider_d("a b c d e", ["a b c d e"], None) == pytest.approx(10.0)
    # with idf over a corpus, an n-gram every reference set has weighs 0: "x" in both sets
    scorer = get_scorer("cider", idf_references=[["x a"], ["x b"]])
    only_shared = scorer.score_batch([ScoreInput("x", ("x a",))])[0]["cider"]
    assert only_shared == 0.0


@pytest.mark.quick
def test_parent_by_hand() -> None:
    """Table {name: john, born: 1990}, reference "john was born in 1990", generation "john born
    in 1990". Precision per order: 1, 1, (2/3 + 1) / 2, 3/4 (entailed shares of the n-grams the
    reference lacks); reference recall: 3/3, 1/2, (2/3) / (5/3), 0 -> 1e-5; table recall 1."""
    table = parse_table('{"name": "john", "born": "1990"}')
    assert table == [Record("name", "john"), Record("born", "1990")]
    score = parent("john born in 1990", "john was born in 1990", table)
    precision = (1 * 1 * (5 / 6) * (3 / 4)) ** (1 / 4)
    recall = math.sqrt((1 * 0.5 * 0.4 * 1e-5) ** (1 / 4) * 1.0)
    assert score.precision == pytest.approx(precision)
    assert score.recall == pytest.approx(recall)
    assert score.f == pytest.approx(2 * precision * recall / (precision + recall))
    assert parse_table("name|||john\tborn|||1990") == table
    assert parse_table('[["john", "born", "1990"]]') == [Record("born", "1990")]
    assert parse_table("Beethoven was German.") == [Record("", "Beethoven was German.")]


@pytest.mark.quick
def test_answerability_by_hand() -> None:
    assert question_parts("What year was Beethoven born in Bonn?") == {
        "ner": ["Beethoven", "Bonn"], "qt": ["what", "year"], "re": ["born"], "sw": ["was", "in"]}
    weights = {"ner": 0.6, "qt": 0.2, "re": 0.1, "sw": 0.1}
    # only the named entity differs: 0.2 + 0.1 + 0.1
    assert answerability("When was Mozart born?", "When was Beethoven born?", weights) == \
        pytest.approx(0.4)
    row = ScoreInput("When was Mozart born?", ("When was Beethoven born?",))
    scores = get_scorer("qbleu").score_batch([row])[0]
    # BLEU-1: 4 of 5 tokens ("?" is one); ROUGE-L: LCS 3 of 4 words
    assert scores["qbleu1"] == pytest.approx(0.7 * 0.4 + 0.3 * 0.8)
    assert scores["qrougeL"] == pytest.approx(0.7 * 0.4 + 0.3 * 0.75)


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
    from blindspot.runner.run import run_blindspot

    results = run_blindspot("demo", METRICS, task="translation", tests="truncation", seeds=[1],
                            out=tmp_path, progress=False)
    metrics = results["datasets"]["demo-translation"]["metrics"]
    assert len(metrics) == len(METRICS.split(","))
    for name, result in metrics.items():
        assert result["error"] is None, name
        assert result["tests"]["truncation"]["status"] in ("pass", "fail"), name
        anchors = result["anchors"]
        assert anchors["reference"] > anchors["gold"] > anchors["empty"], name
