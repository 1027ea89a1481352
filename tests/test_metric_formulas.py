"""The metrics the papers examine, checked against values worked out by hand from their papers'
definitions, with no model (issue 33; `make check` runs these): ROUGE-W / ROUGE-S[U] from Lin (2004),
BLEU-n, CIDEr-D, PARENT, Q-BLEU/Q-ROUGE, SummaC-ZS's image score, BLANC's maskings and measures,
NUBIA's calibration and feature vector, and SentSim's combination. The same metrics on models and
the canonical modules' documented values are in test_metric_papers_lexical and
test_metric_paper_trained."""

from __future__ import annotations

import math

import pytest

from blindspot.runner.metric_spec import parse_metric_spec
from blindspot.scorers import blanc as bl
from blindspot.scorers import nubia as nb
from blindspot.scorers import sentsim as ss
from blindspot.scorers import summac as sc
from blindspot.scorers.cider import cider_d
from blindspot.scorers.parent import Record, parent, parse_table
from blindspot.scorers.qbleu import answerability, question_parts
from blindspot.scorers.rouge_lin import rouge_s, rouge_w
from blindspot.scoring.scorer import ScoreInput, get_scorer

# Lin (2004), section 5: S1 is the reference of the three candidates
S1 = "police killed the gunman"


def _rouge(types: list[str], hypothesis: str, reference: str) -> dict[str, float]:
    """Lin's examples are the paper's formulas (``definition="paper"``; ROUGE-1.5.5.pl's, the
    default, are checked against the script in test_reference_lexical)."""
    scorer = get_scorer("rouge", rouge_types=types, use_stemmer=False, definition="paper")
    return scorer.score_batch([ScoreInput(hypothesis, (reference,))])[0]


def _p(e: float, c: float) -> dict[str, float]:
    return {"e": e, "n": 1 - e - c, "c": c}


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
    in 1990", with the paper's T-bar (attribute names entail too, so "born" does). Precision per
    order: 1, 1, (2/3 + 1) / 2, 3/4 (entailed shares of the n-grams the reference lacks);
    reference recall: 3/3, 1/2, (2/3) / (5/3), 0 -> 1e-5; table recall 1."""
    table = parse_table('{"name": "john", "born": "1990"}')
    assert table == [Record("name", "john"), Record("born", "1990")]
    score = parent("john born in 1990", "john was born in 1990", table, definition="paper")
    precision = (1 * 1 * (5 / 6) * (3 / 4)) ** (1 / 4)
    recall = math.sqrt((1 * 0.5 * 0.4 * 1e-5) ** (1 / 4) * 1.0)
    assert score.precision == pytest.approx(precision)
    assert score.recall == pytest.approx(recall)
    assert score.f == pytest.approx(2 * precision * recall / (precision + recall))
    assert parse_table("name|||john\tborn|||1990") == table
    assert parse_table('[["john", "born", "1990"]]') == [Record("born", "1990", "john")]
    assert parse_table("Beethoven was German.") == [Record("", "Beethoven was German.")]


@pytest.mark.quick
def test_answerability_by_hand() -> None:
    assert question_parts("What year was Beethoven born in Bonn?") == {
        "ner": ["Beethoven", "Bonn"], "qt": ["what", "year"], "re": ["born"], "sw": ["was", "in"]}
    weights = {"ner": 0.6, "qt": 0.2, "re": 0.1, "sw": 0.1}
    # only the named entity differs: 0.2 + 0.1 + 0.1
    assert answerability("When was Mozart born?", "When was Beethoven born?", weights,
                         definition="paper") == pytest.approx(0.4)
    row = ScoreInput("When was Mozart born?", ("When was Beethoven born?",))
    scores = get_scorer("qbleu", definition="paper").score_batch([row])[0]
    # BLEU-1: 4 of 5 tokens ("?" is one); ROUGE-L: LCS 3 of 4 words
    assert scores["qbleu1"] == pytest.approx(0.7 * 0.4 + 0.3 * 0.8)
    assert scores["qrougeL"] == pytest.approx(0.7 * 0.4 + 0.3 * 0.75)




@pytest.mark.quick
def test_summac_image_score_by_hand() -> None:
    # two document chunks (rows) x two summary chunks (columns)
    image = [[_p(0.9, 0.05), _p(0.2, 0.7)],
             [_p(0.4, 0.1), _p(0.3, 0.2)]]
    # max over the document: column 0 e=.9 c=.1, column 1 e=.3 c=.7; mean of (.8, -.4)
    assert sc.image_score(image) == pytest.approx(0.2)
    assert sc.image_score(image, op2="min") == pytest.approx(-0.4)
    assert sc.image_score(image, op1="mean") == pytest.approx(((0.65 - 0.075) + (0.25 - 0.45)) / 2)
    assert sc.image_score(image, use_con=False) == pytest.approx((0.9 + 0.3) / 2)
    assert sc.image_score(image, use_ent=False) == pytest.approx(((1 - 0.1) + (1 - 0.7)) / 2)
    assert sc.image_score([]) == 0.0
    assert sc.parse_granularity("paragraph-sentence") == ("paragraph", "sentence")
    with pytest.raises(ValueError, match="granularity must be one of"):
        sc.parse_granularity("word")
    assert sc.paragraphs("First paragraph here.\n\nTiny.\n\nSecond paragraph here.") == [
        "First paragraph here.", "Second paragraph here."]


@pytest.mark.quick
def test_blanc_maskings_and_measures_by_hand() -> None:
    tokens = ["the", "firefighters", "arrived", "quick", "##ly", "at", "dawn"]
    lengths = (4, 2, 100)
    # whole words of 4+ characters, "quick" (a lead piece, 2+), never "##ly" (follow-up, 100+)
    maskings = bl.even_maskings(tokens, 2, 1, lengths, "[MASK]")
    assert [m.answers for m in maskings] == [((2, "arrived"), (6, "dawn")),
                                             ((1, "firefighters"), (3, "quick"))]
    assert maskings[0].tokens[2] == "[MASK]" and maskings[0].tokens[1] == "firefighters"
    # gap 3 with 2 masked per period: residues {m, m+1 mod 3}
    wide = bl.even_maskings(tokens, 3, 2, (1, 1, 1), "[MASK]")
    assert [[i for i, _ in m.answers] for m in wide] == [[0, 1, 3, 4, 6], [1, 2, 4, 5],
                                                         [0, 2, 3, 5, 6]]
    assert bl.blanc_measure([[5, 3], [1, 1]], "relative") == pytest.approx(2 / 10)
    assert bl.blanc_measure([[5, 3], [1, 1]], "improve") == pytest.approx(3 / 9)
    assert bl.blanc_measure([[0, 0], [0, 0]], "relative") == 0.0
    sentence, summary = bl.fit_to_limit(list("abcdefgh"), [list("xyz"), list("uvw")], 2, 12, 6)
    assert sentence == list("abcdef")  # cut to the allowed 6 first
    assert summary == list("xyz")  # then the summary's sentences that fit, from the top
    assert bl.fit_to_limit(list("abcdefgh"), [list("xyzuv")], 2, 12, 6)[1] == list("xyzu")
    assert bl.fit_to_limit(list("ab"), [list("xy")], 2, 12, 6) == (list("ab"), list("xy"))


@pytest.mark.quick
def test_nubia_and_sentsim_formulas_by_hand() -> None:
    assert nb.calibrate(2.0, 2.0) == 1.0
    assert nb.calibrate(1.0, 3.0) == pytest.approx(1 - 2 / 4)
    assert nb.calibrate(-10.0, 3.0) == 0.0 and nb.calibrate(9.0, 3.0) == 1.0
    assert nb.feature_vector(4.0, [-1, -2, -3], 5.0, 6.0, "a b c", "d e", False) == [
        4.0, -1, -2, -3, 5.0, 6.0, 3.0, 2.0]
    assert len(nb.feature_vector(4.0, [-1, -2, -3], 5.0, 6.0, "a", "b", True)) == 6
    with pytest.raises(ValueError, match="needs aggregator="):
        get_scorer("nubia")
    assert ss.combine(0.5, 0.25) == pytest.approx(math.exp(0.5) + math.exp(0.25))
    # min-max over the set: (0, 1, .5) and (1, 0, .5)
    assert ss.combine_over_set([0.2, 0.6, 0.4], [0.9, 0.1, 0.5]) == pytest.approx(
        [1 + math.e, math.e + 1, 2 * math.exp(0.5)])


