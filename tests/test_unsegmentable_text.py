"""Text a test cannot work on comes back unchanged, not applied, for every test alike.

The rules live in the base class (``perturbations/perturbation.py``): a gold without a letter or digit is
never perturbed; a whitespace-word test leaves text in a script written without spaces alone; an
output with no letter or digit left is not applied.
"""

from __future__ import annotations

import random

import pytest
from engine_support import all_levels, cnndm_rows, wikitext_references

from blindspot.perturbations import REGISTRY, get_perturbation
from blindspot.perturbations.dataset import build_perturbation
from blindspot.perturbations.perturbation import NoLevel, Perturbation, Row, can_segment, is_usable_text
from blindspot.tiny_models import tiny_masked_lm

WORD_TESTS = sorted(name for name, cls in REGISTRY.items() if cls.whitespace_words)
#: one text per script written without spaces, and a mixed one
UNSPACED = ["这是一个没有空格的中文句子，它有很多字。", "名前は田中です。今日は晴れです。",
            "ภาษาไทยไม่มีช่องว่างระหว่างคำ", "The capital, 北京, has many people. They live there."]
NO_LETTERS = ["", "   \n", "... !! ?", "😀😀😀 🎉", "— – · •"]


@pytest.fixture(scope="module")
def resources(tmp_path_factory: pytest.TempPathFactory) -> dict:
    return {"mlm": tiny_masked_lm(tmp_path_factory.mktemp("tiny-mlm"), seed=3), "lm": "smollm2",
            "ngram_corpus": wikitext_references(50),
            "pool": [row["gold"] for row in cnndm_rows(8)]}


def test_the_word_tests_are_declared() -> None:
    assert {"truncation", "token_drop", "local_swap", "repetition", "typo", "jumble",
            "word_swap", "bert_diverge"} <= set(WORD_TESTS)
    assert not REGISTRY["negation"].whitespace_words  # a spaCy-token test


@pytest.mark.parametrize(("text", "usable", "segments"), [
    ("She went home.", True, True), ("Word", True, True), ("Café, naïve, Straße.", True, True),
    ("这是中文。", True, False), ("I love 北京.", True, False), ("ภาษาไทย", True, False),
    ("3", True, True), ("😀😀😀", False, True), ("... !!", False, True), ("  \t", False, True),
])
def test_usable_and_segmentable(text: str, usable: bool, segments: bool) -> None:
    assert is_usable_text(text) is usable
    assert can_segment(text) is segments


@pytest.mark.parametrize("name", WORD_TESTS)
def test_word_tests_leave_unspaced_scripts_alone(name: str, resources: dict) -> None:
    test = build_perturbation(name, resources=resources)
    for level in all_levels(REGISTRY[name]):
        cols = test.apply_rows(UNSPACED, list(range(len(UNSPACED))), level, seed=3,
                               sources=UNSPACED)
        assert cols["perturbed"] == UNSPACED, (name, level)
        assert cols["applied"] == [False] * len(UNSPACED)
        assert cols["noise_ratio"] == [0.0] * len(UNSPACED)


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_no_test_perturbs_a_gold_without_letters(name: str, resources: dict) -> None:
    test = build_perturbation(name, resources=resources)
    level = all_levels(REGISTRY[name])[-1]
    cols = test.apply_rows(NO_LETTERS, list(range(len(NO_LETTERS))), level, seed=1,
                           sources=["A real source sentence about Paris."] * len(NO_LETTERS))
    assert cols["perturbed"] == NO_LETTERS
    assert cols["applied"] == [False] * len(NO_LETTERS)


def test_truncation_by_hand() -> None:
    trunc = get_perturbation("truncation")
    # issue 16: no spaces gave "这是一个句子。." with applied=True and noise ratio 1.0
    chinese = trunc.apply("这是一个没有空格的中文句子。", 0.5)
    assert (chinese.perturbed, chinese.applied, chinese.noise_ratio) == (
        "这是一个没有空格的中文句子。", False, 0.0)
    # three words at p = .5: floor(1.5) = 1 dropped; distance(["She","went","home."],
    # ["She","went."]) = 2 of 3 words
    out = trunc.apply("She went home.", 0.5)
    assert (out.perturbed, out.applied) == ("She went.", True)
    assert out.noise_ratio == pytest.approx(2 / 3)
    # nothing to drop (one word; floor(2 * .1) = 0): no lone period appended
    assert not trunc.apply("Word", 0.5).applied
    assert trunc.apply("Hello world?", 0.1).perturbed == "Hello world?"


def test_an_output_without_letters_is_not_applied() -> None:
    class Blank(Perturbation):
        name, category, description = "blank", "fluency", "erase the text"
        level_kind, levels = NoLevel(), {}

        def perturb(self, row: Row, level: str, rng: random.Random) -> str | None:
            return "" if row.row_id == 0 else " ... "

    cols = Blank().apply_rows(["Keep me.", "And me."], [0, 1], "-", seed=1)
    assert cols["perturbed"] == ["Keep me.", "And me."]
    assert cols["applied"] == [False, False] and cols["noise_ratio"] == [0.0, 0.0]
