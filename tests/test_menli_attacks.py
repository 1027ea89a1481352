"""The twelve MENLI attacks (Chen & Eger 2023, §3): outputs worked out by hand on real sentences of
the MENLI WMT20 set, determinism per row and seed, rows they cannot change, noise ratios, and the
ref-free use (perturbing the literal translation column ``r``)."""

from __future__ import annotations

import csv
import re
from collections import Counter

import datasets
import pytest

from blindspot.noise import noise_ratio
from blindspot.perturbations import REGISTRY, get_perturbation, perturb_dataset, suite_tests
from blindspot.perturbations.name_error import checklist_names, gender_of_first_name
from conftest import SHARED_DATA

MENLI_CSV = SHARED_DATA / "menli_wmt20_de_adversarial.csv"
GOLD = "Since their articles appeared, the price of gold has moved up still further."
#: MENLI error type -> canonical test name
ERROR_TYPES = {"add": "addition", "drop": "omission", "name": "name_error", "neg": "menli_negation",
               "num": "number_error", "pron": "pronoun_error", "word_JJ": "adjective_mismatch",
               "word_NN": "noun_mismatch", "word_VB": "verb_mismatch", "typo": "typo",
               "jumble": "jumble", "subject_verb_dis": "subject_verb_disagreement"}
EARLY = ("typo", "jumble", "subject_verb_disagreement", "number_error", "name_error")


@pytest.fixture(scope="module")
def menli_rows() -> list[dict[str, str]]:
    """The shipped MENLI WMT20 de-en adversarial rows (2400), read in place."""
    with open(MENLI_CSV, encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def level_of(name: str) -> object:
    return REGISTRY[name].levels["translation"][0]


def noised(name: str, text: str, seed: int = 1, level: object = None):
    test = get_perturbation(name)
    return test.apply(text, level_of(name) if level is None else level, seed=seed)


def changed_words(a: str, b: str) -> list[tuple[str, str]]:
    return [(x, y) for x, y in zip(a.split(), b.split()) if x != y]


# -- catalogue ------------------------------------------------------------------------------------

@pytest.mark.parametrize("alias", sorted(e for e, n in ERROR_TYPES.items() if n in EARLY))
def test_menli_error_types_are_aliases(alias):
    name = ERROR_TYPES[alias]
    if name not in REGISTRY:
        pytest.fail(f"{name} is not registered")
    assert get_perturbation(alias).name == name
    assert REGISTRY[name].category == "menli"


def test_the_menli_suite_is_the_early_attacks_and_more():
    suite = suite_tests("menli", task="translation")
    assert set(EARLY) <= set(suite)
    assert all(REGISTRY[n].category == "menli" for n in suite)
    assert not set(suite) & set(suite_tests("all"))  # the core suite does not grow


# -- typo -----------------------------------------------------------------------------------------

def test_typo_swaps_two_adjacent_letters_inside_one_word():
    out = noised("typo", GOLD)
    (old, new), = changed_words(GOLD, out.perturbed)
    i = next(k for k, (x, y) in enumerate(zip(old, new)) if x != y)
    assert new == old[:i] + old[i + 1] + old[i] + old[i + 2:] and new != old
    assert out.applied and out.noise_ratio == pytest.approx(1 / 13)


def test_typo_hand_checked_and_not_applicable():
    assert noised("typo", "ab").perturbed == "ba"  # the only typo there is
    outs = {noised("typo", "I saw a cat.", seed=s).perturbed for s in range(40)}
    assert outs == {"I asw a cat.", "I swa a cat.", "I saw a act.", "I saw a cta."}
    result = noised("typo", "I a 12 ...")
    assert not result.applied and result.perturbed == "I a 12 ..." and result.noise_ratio == 0.0


def test_typo_level_counts_distinct_words():
    out = noised("typo", GOLD, level=3)
    assert len(changed_words(GOLD, out.perturbed)) == 3
    assert out.noise_ratio == pytest.approx(3 / 13)
    assert len(changed_words("ab cd", noised("typo", "ab cd", level=5).perturbed)) == 2


# -- jumble ---------------------------------------------------------------------------------------

def test_jumble_shuffles_the_words_of_each_sentence():
    text = "He left early. She stayed at home all day."
    out = noised("jumble", text)
    words = out.perturbed.split()
    assert out.applied and out.perturbed != text
    assert Counter(words[:3]) == Counter(["He", "left", "early."])
    assert Counter(words[3:]) == Counter(text.split()[3:])
    assert out.noise_ratio == pytest.approx(noise_ratio(text, out.perturbed, swap=True))


def test_jumble_cannot_change_equal_words():
    assert not noised("jumble", "ha ha ha").applied
    assert noised("jumble", "yes no").perturbed == "no yes"


# -- subject-verb disagreement --------------------------------------------------------------------

@pytest.mark.parametrize("text, expected", [
    ("He doesn't know how to bake.", "He don't know how to bake."),
    ("SAN FRANCISCO – It has never been easy to have a rational conversation about the value of "
     "gold.", "SAN FRANCISCO – It have never been easy to have a rational conversation about the "
     "value of gold."),
    ("Recently, however, this is more difficult than ever, as the price of gold has risen by "
     "more than 300 percent in the last decade.",
     "Recently, however, this are more difficult than ever, as the price of gold have risen by "
     "more than 300 percent in the last decade."),
    ("We were there, and they are not.", "We was there, and they is not."),
    ("Is it true?", "Are it true?"),
])
def test_subject_verb_disagreement_by_hand(text, expected):
    out = noised("subject_verb_disagreement", text)
    assert out.perturbed == expected and out.applied


def test_subject_verb_disagreement_leaves_non_finite_forms():
    out = noised("subject_verb_disagreement", "She will do it to have fun.")
    assert not out.applied and out.perturbed == "She will do it to have fun."


# -- number error ---------------------------------------------------------------------------------

def test_number_error_keeps_the_format_and_skips_dates():
    text = "In 2008, 2.5 million people paid 0.5 euros and $2,000 for 300 tickets."
    out = noised("number_error", text).perturbed
    match = re.fullmatch(r"In 2008, (\d)\.(\d) million people paid 0\.(\d) euros and "
                         r"\$([1-9]),(\d{3}) for ([1-9]\d\d) tickets\.", out)
    assert match, out
    assert "".join(match.groups()) != "25520003" "00"
    assert match.group(6) != "300" and match.group(1) + match.group(2) != "25"


def test_number_error_not_applied_without_numbers():
    for text in ("The rot began during the 1980s.", "Three men came."):
        out = noised("number_error", text)
        assert not out.applied and out.perturbed == text


def test_number_error_single_digit_always_changes():
    outs = {noised("number_error", "I bought 7 apples.", seed=s).perturbed for s in range(30)}
    assert "I bought 7 apples." not in outs and len(outs) > 3
    assert all(re.fullmatch(r"I bought [1-9] apples\.", o) for o in outs)


# -- name error -----------------------------------------------------------------------------------

def test_name_error_renames_exactly_one_person_with_the_same_gender():
    text = "The rot began during the 1980s, under Ronald Reagan and Margaret Thatcher."
    top = {g: set(checklist_names()[g][:100]) for g in ("men", "women")}
    seen = set()
    for seed in range(1, 9):
        out = noised("name_error", text, seed=seed).perturbed
        (old, new), = changed_words(text, out)
        assert old in {"Ronald", "Margaret"}
        assert new in top[gender_of_first_name()[old]] and new != old
        seen.add(old)
    assert seen == {"Ronald", "Margaret"}


def test_name_error_renames_every_mention_of_that_person_only():
    out = noised("name_error", "Donald Trump said Donald Trump won.").perturbed
    first = out.split()[0]
    assert out == f"{first} Trump said {first} Trump won." and first != "Donald"
    assert not noised("name_error", "The cat sat on the mat.").applied


# -- shared properties ----------------------------------------------------------------------------

@pytest.mark.parametrize("name", EARLY)
def test_deterministic_per_row_and_seed(name, menli_rows):
    texts = [r["ref"] for r in menli_rows[:40]]
    ids = [f"row{i}" for i in range(len(texts))]
    test = get_perturbation(name)
    level = level_of(name)
    forward = test.apply_rows(texts, ids, level, seed=3)["perturbed"]
    backward = test.apply_rows(texts[::-1], ids[::-1], level, seed=3)["perturbed"][::-1]
    assert forward == backward
    assert forward == test.apply_rows(texts, ids, level, seed=3)["perturbed"]
    if not test.deterministic:
        assert forward != test.apply_rows(texts, ids, level, seed=4)["perturbed"]


@pytest.mark.parametrize("name", EARLY)
def test_ref_free_perturbs_the_literal_translation_column(name, menli_rows):
    error = next(e for e, n in ERROR_TYPES.items() if n == name)
    rows = [r for r in menli_rows if r["error"] == error][:12]  # rows MENLI could attack
    ds = datasets.Dataset.from_dict({"id": [r["id"] for r in rows], "ref": [r["ref"] for r in rows],
                                     "r": [r["r"] for r in rows]})
    out = perturb_dataset(ds, name, level_of(name), seed=1, column="r")
    assert out["r"] == ds["r"] and out["ref"] == ds["ref"]  # nothing else is touched
    applied = [p for p, a in zip(out["perturbed"], out["applied"]) if a]
    assert applied and all(p not in ds["r"] for p in applied)
    unchanged = [(p, r) for p, a, r in zip(out["perturbed"], out["applied"], ds["r"]) if not a]
    assert all(p == r for p, r in unchanged)
