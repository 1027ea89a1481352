"""Property-based tests (hypothesis) of every registered perturbation on any Unicode text.

For each test of the registry (iterated, never listed), at each of its declared levels and two
seeds, on a batch of arbitrary texts (random Unicode, the empty string, real gold sentences,
word soups of real words, odd tokens and odd whitespace, None; sources that are articles,
dialogues, any text or missing): the batch transform never raises, returns one row per input row
in the input's order (a reversed batch gives the reversed output, so ids stay aligned with their
rows, and a row alone gives what it gave in the batch), keeps the base-class rules (not applied =
unchanged with noise ratio 0; an applied row had, and kept, a letter or digit; a whitespace-word
test never applies to unspaced scripts), and gives the same output twice; a test declared
``deterministic`` gives the same output for every seed. Heavy resources are the real offline
ones where they exist (spaCy's small English model, WordNet, CheckList, SmolLM2's tokenizer)
and a tiny random masked LM otherwise (:mod:`blindspot.tiny_models`). The examples are
derandomized (tests/conftest.py), so CI sees the same ones every run; ``HYPOTHESIS_PROFILE=
explore BLINDSPOT_PROPERTY_EXAMPLES=150`` searches further (about 5 minutes here).

"Any Unicode text" is text a file can hold: lone surrogates ("\ud800") are not Unicode text,
cannot be written as UTF-8 nor stored in Arrow, and are refused when a data file is read.
"""

from __future__ import annotations

import math
import os
from typing import Any

import pytest
from engine_support import cnndm_rows, wikitext_references
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from blindspot.perturbations import REGISTRY
from blindspot.perturbations.dataset import build_perturbation
from blindspot.perturbations.perturbation import Perturbation, can_segment, is_usable_text, level_str
from blindspot.tiny_models import tiny_masked_lm

NAMES = sorted(REGISTRY)
SEEDS = (1, 7)
#: examples per test; CI runs the derandomized few, HYPOTHESIS_PROFILE=explore may ask for more
EXAMPLES = int(os.environ.get("BLINDSPOT_PROPERTY_EXAMPLES", "12"))
GOLDS = [row["gold"] for row in cnndm_rows(6)]
SOURCE = cnndm_rows(1)[0]["source"]
#: real words (names, numbers, contractions come with them) and tokens that break naive code
VOCABULARY = sorted({w for gold in GOLDS for w in gold.split()})
ODD_TOKENS = ["", "\n", "\t", "中文", "这是句子。", "😀", "👍🏽", "...", "!", "?", ",", "'", '"',
              "(", ")", "3.5", "1990", "10:30", "U.S.", "n't", "'s", "\u200b", "e\u0301",
              "İ", "ß", "ﬁ", "A", "a", "the", "The", "not", "I", "-", "—", "don't", "It's",
              "can't", "I'm", "What", "why", "Who", "?"]
#: a dialogue context, for the tests that read the previous turns (context negation...)
DIALOGUE = ("Bot: I enjoy having your daughter in my class.\nUser: I'm glad to hear that.\n"
            "Bot: She is always on time.")
WORD = st.one_of(st.sampled_from(VOCABULARY), st.sampled_from(ODD_TOKENS), st.text(max_size=5))
#: what separates words: spaces, and the whitespace that str.split, regular expressions and
#: spaCy may disagree on (no-break, ideographic and line-separator spaces, control separators)
SPACE = st.sampled_from([" ", " ", " ", "  ", "\n", "\n\n", "\t", "\r\n", "\xa0", "\u3000",
                         "\u2028", "\x0b", "\x1c", " \n "])


@st.composite
def word_soup(draw: st.DrawFn) -> str:
    """Words of real golds and odd tokens, joined by drawn whitespace."""
    words = draw(st.lists(WORD, max_size=30))
    spaces = draw(st.lists(SPACE, min_size=len(words), max_size=len(words)))
    return "".join(w + s for w, s in zip(words, spaces, strict=True)).strip() if draw(st.booleans()) \
        else "".join(w + s for w, s in zip(words, spaces, strict=True))


TEXT = st.one_of(
    st.text(max_size=60),
    word_soup(),
    st.sampled_from(GOLDS).map(lambda g: " ".join(g.split()[:40])),
)
#: rows of (gold, source): the source is a real article, a dialogue, any text or missing
BATCH = st.lists(st.tuples(st.one_of(TEXT, st.none()),
                           st.one_of(st.sampled_from([SOURCE, DIALOGUE]), TEXT, st.none())),
                 max_size=4)


def declared_levels(cls: type[Perturbation]) -> list[Any]:
    """Every level the test declares: its paper levels over all tasks, else its named variants
    (a Choice of a test no task runs), else its one level."""
    seen: dict[str, Any] = {}
    for levels in cls.levels.values():
        for level in levels:
            seen.setdefault(level_str(level), level)
    return list(seen.values()) or list(getattr(cls.level_kind, "options", ("-",)))


class Catalogue(dict):
    """Test name -> instance, shown short in a falsifying example."""

    def __repr__(self) -> str:
        return f"<{len(self)} tests>"


@pytest.fixture(scope="module")
def tests(tmp_path_factory: pytest.TempPathFactory) -> Catalogue:
    """One instance of every registered test, each with what it needs."""
    resources = {"mlm": tiny_masked_lm(tmp_path_factory.mktemp("tiny-mlm"), seed=11),
                 "lm": "smollm2", "ngram_corpus": wikitext_references(30)}
    made = Catalogue({name: build_perturbation(name, GOLDS, resources) for name in NAMES})
    for test in made.values():
        test.preload()
    return made


def transform(test: Perturbation, level: Any, seed: int, rows: list[tuple[Any, Any]],
              ids: list[str]) -> dict[str, list[Any]]:
    """The batch transform ``Dataset.map`` calls: the test's map function on one batch."""
    batch = {"id": ids, "gold": [gold for gold, _ in rows],
             "source": [source for _, source in rows]}
    return test.as_map(level, seed, source_column="source")(batch)


def check_rows(test: Perturbation, level: Any, seed: int, texts: list[Any],
               out: dict[str, list[Any]]) -> None:
    assert all(len(column) == len(texts) for column in out.values())
    for text, new, applied, ratio, name, lvl, sd in zip(
            texts, out["perturbed"], out["applied"], out["noise_ratio"], out["perturbation"],
            out["level"], out["seed"], strict=True):
        assert (name, lvl, sd) == (test.name, level_str(test.check_level(level)), seed)
        assert applied is (new != text)
        assert math.isfinite(ratio) and ratio >= 0.0
        if not applied:
            assert new == text and ratio == 0.0
        else:
            assert isinstance(new, str) and is_usable_text(text) and is_usable_text(new)
            assert not test.whitespace_words or can_segment(text)


def check_everything(test: Perturbation, rows: list[tuple[Any, Any]]) -> None:
    """Every property, at each declared level and seed, on one batch."""
    ids = [f"row-{i}" for i in range(len(rows))]
    for level in declared_levels(type(test)):
        outputs = []
        for seed in SEEDS:
            out = transform(test, level, seed, rows, ids)
            check_rows(test, level, seed, [gold for gold, _ in rows], out)
            assert transform(test, level, seed, rows, ids) == out  # same output twice
            backwards = transform(test, level, seed, rows[::-1], ids[::-1])
            assert backwards["perturbed"] == out["perturbed"][::-1]  # rows stay with their ids
            alone = transform(test, level, seed, rows[-1:], ids[-1:])
            assert alone["perturbed"] == out["perturbed"][-1:]  # a row ignores the others
            outputs.append(out)
        if test.deterministic:
            assert outputs[0]["perturbed"] == outputs[1]["perturbed"]


#: a masked LM runs once per masked word, so tests that need one get a quarter of the examples
MASKED_LM = [name for name in NAMES if "mlm" in REGISTRY[name].requires]
SETTINGS = {"deadline": None,
            "suppress_health_check": [HealthCheck.function_scoped_fixture, HealthCheck.too_slow]}


@pytest.mark.parametrize("name", [name for name in NAMES if name not in MASKED_LM])
@settings(max_examples=EXAMPLES, **SETTINGS)
@given(rows=BATCH)
def test_every_perturbation_on_any_text(name: str, rows: list[tuple[Any, Any]],
                                        tests: Catalogue) -> None:
    check_everything(tests[name], rows)


@pytest.mark.parametrize("name", MASKED_LM)
@settings(max_examples=max(2, EXAMPLES // 4), **SETTINGS)
@given(rows=BATCH)
def test_every_masked_lm_perturbation_on_any_text(name: str, rows: list[tuple[Any, Any]],
                                                  tests: Catalogue) -> None:
    check_everything(tests[name], rows)
