"""The twelve MENLI attacks (Chen & Eger 2023, §3): outputs worked out by hand on real sentences of
the MENLI WMT20 set, determinism per row and seed, rows they cannot change, noise ratios, and the
ref-free use (perturbing the literal translation column ``r``)."""

from __future__ import annotations

import csv
import re
from collections import Counter

import datasets
import pytest
from conftest import SHARED_DATA

from blindspot.noise import noise_ratio
from blindspot.perturbations import REGISTRY, get_perturbation, suite_tests
from blindspot.perturbations._word_lists import word_list
from blindspot.perturbations.dataset import perturb_dataset
from blindspot.perturbations.name_error import checklist_names, gender_of_first_name
from blindspot.perturbations.verb_switching import inflect

MENLI_CSV = SHARED_DATA / "menli_wmt20_de_adversarial.csv"
GOLD = "Since their articles appeared, the price of gold has moved up still further."
#: MENLI error type -> canonical test name
ERROR_TYPES = {"add": "addition", "drop": "omission", "name": "name_error", "neg": "menli_negation",
               "num": "number_error", "pron": "pronoun_error", "word_JJ": "adjective_mismatch",
               "word_NN": "noun_mismatch", "word_VB": "verb_mismatch", "typo": "typo",
               "jumble": "jumble", "subject_verb_dis": "subject_verb_disagreement"}
EARLY = ("typo", "jumble", "subject_verb_disagreement", "number_error", "name_error")
ALL = tuple(ERROR_TYPES.values())


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
    return [(x, y) for x, y in zip(a.split(), b.split(), strict=True) if x != y]


# -- catalogue ------------------------------------------------------------------------------------

@pytest.mark.parametrize("alias", sorted(ERROR_TYPES))
def test_menli_error_types_are_aliases(alias):
    name = ERROR_TYPES[alias]
    if name not in REGISTRY:
        pytest.fail(f"{name} is not registered")
    assert get_perturbation(alias).name == name
    assert REGISTRY[name].category == "menli" and REGISTRY[name].menli_error == alias


def test_the_menli_suite_is_the_twelve_attacks():
    suite = suite_tests("menli", task="translation")
    assert sorted(suite) == sorted(ALL) and len(ALL) == 14 - 2  # noun/verb/adjective: 3 of 12
    assert all(REGISTRY[n].category == "menli" for n in suite)
    assert not set(suite) & set(suite_tests("all"))  # the core suite does not grow


# -- typo -----------------------------------------------------------------------------------------

def test_typo_swaps_two_adjacent_letters_inside_one_word():
    out = noised("typo", GOLD)
    (old, new), = changed_words(GOLD, out.perturbed)
    i = next(k for k, (x, y) in enumerate(zip(old, new, strict=True)) if x != y)
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


def test_number_error_changes_durations_but_not_calendar_dates():
    out = noised("number_error", "Today, 70 years later, much of the 1945 consensus no longer "
                                 "survives.").perturbed
    assert re.fullmatch(r"Today, [1-9]\d years later, much of the 1945 consensus no longer "
                        r"survives\.", out) and " 70 " not in out
    out = noised("number_error", "On May 5, 2020 at 10 a.m. 300 people came at 21:30.").perturbed
    assert re.fullmatch(r"On May 5, 2020 at 10 a\.m\. [1-9]\d\d people came at 21:30\.", out)
    assert "300" not in out


def test_number_error_not_applied_without_numbers():
    for text in ("The rot began during the 1980s.", "Three men came.", "1. Europe needs a policy."):
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


# -- pronoun error --------------------------------------------------------------------------------

@pytest.mark.parametrize("text, expected", [
    ("Moreover, we should ensure that we provide international institutions with the needed "
     "resources and responsibilities.", "Moreover, they should ensure that they provide "
     "international institutions with the needed resources and responsibilities."),
    ("He gave her his book and she gave him hers.", "She gave him her book and he gave her his."),
    ("Their leaders told us.", "Our leaders told them."),
    ("I told you the US would help us.", "I told you the US would help them."),
    ("They hurt themselves.", "We hurt ourselves."),
])
def test_pronoun_error_by_hand(text, expected):
    assert noised("pronoun_error", text).perturbed == expected


def test_pronoun_error_keeps_pronouns_without_a_safe_partner():
    out = noised("pronoun_error", "I think it is what you said to me.")
    assert not out.applied and out.perturbed == "I think it is what you said to me."


# -- negation -------------------------------------------------------------------------------------

def test_menli_negation_is_the_negation_test_on_every_sentence():
    # the shipped MENLI WMT20 row 5 has exactly this cand_adv (ref-based, "neg")
    out = noised("menli_negation", GOLD)
    assert out.perturbed == ("Since their articles appeared, the price of gold hasn't moved up "
                             "still further.")
    two = "He did not go. She is happy."
    assert noised("menli_negation", two).perturbed == \
        get_perturbation("negation").apply(two, 1.0, seed=7).perturbed == "He did go. She is not happy."


# -- omission -------------------------------------------------------------------------------------

@pytest.mark.parametrize("seed", [1, 2, 3])
def test_omission_drops_one_contiguous_fifth(seed):
    out = noised("omission", GOLD, seed=seed)
    words, kept = GOLD.split(), out.perturbed.split()
    assert len(kept) == 13 - 3  # ceil(0.2 * 13) = 3
    assert any(words[:i] + words[i + 3:] == kept for i in range(11))
    assert out.noise_ratio == pytest.approx(3 / 13)


def test_omission_level_and_short_texts():
    assert len(noised("omission", GOLD, level=0.5).perturbed.split()) == 13 - 7
    assert noised("omission", "one two", level=1.0).perturbed in {"one", "two"}
    assert not noised("omission", "Hi").applied


# -- addition -------------------------------------------------------------------------------------

def test_addition_inserts_and_a_noun_of_the_same_number():
    out = noised("addition", "I love dogs.").perturbed
    match = re.fullmatch(r"I love dogs and (\w+)\.", out)
    assert match, out
    added = match.group(1)
    plurals = {inflect(w, "NNS") for w in word_list("noun")}
    assert added in plurals and added != "dogs"


def test_addition_on_a_menli_sentence_adds_two_words_after_a_noun():
    text = "Since their articles appeared, the price of gold has moved up still further."
    for seed in range(1, 6):
        out = noised("addition", text, seed=seed)
        words = out.perturbed.split()
        i = words.index("and")
        assert words[:i] + words[i + 2:] == text.split()
        assert words[i - 1].strip(",") in {"articles", "price", "gold"}
        assert out.noise_ratio == pytest.approx(2 / 13)
    assert not noised("addition", "Hello there!").applied


# -- noun, verb and adjective mismatch ------------------------------------------------------------

def test_word_lists_are_big_real_open_class_lists():
    nouns, verbs, adjectives = (word_list(p) for p in ("noun", "verb", "adjective"))
    assert len(nouns) > 4000 and len(verbs) > 900 and len(adjectives) > 1500
    assert {"time", "house", "water"} <= set(nouns) and {"know", "find"} <= set(verbs)
    assert {"new", "small", "important"} <= set(adjectives)
    assert not {"the", "be", "have", "something"} & (set(nouns) | set(verbs) | set(adjectives))


def test_mismatch_replaces_the_one_word_of_that_pos():
    plural_nouns = {inflect(w, "NNS") for w in word_list("noun")}
    present_verbs = {inflect(w, "VBP") for w in word_list("verb")}
    for seed in range(1, 6):
        noun = re.fullmatch(r"I love (\w+)\.", noised("noun_mismatch", "I love dogs.", seed=seed).perturbed)
        assert noun and noun.group(1) in plural_nouns - {"dogs"}
        verb = re.fullmatch(r"I (\w+) dogs\.", noised("verb_mismatch", "I love dogs.", seed=seed).perturbed)
        assert verb and verb.group(1) in present_verbs - {"love"}


def test_verb_mismatch_inflects_to_the_replaced_tense():
    text = "Last December, many gold bugs were arguing that the price was inevitably headed for $2,000."
    for seed in range(1, 8):
        out = noised("verb_mismatch", text, seed=seed).perturbed
        (old, new), = changed_words(text, out)
        assert old in {"arguing", "headed"}
        assert new.endswith("ing") if old == "arguing" else new != old


def test_adjective_mismatch_keeps_case_and_skips_texts_without_adjectives():
    text = "Last December, many gold bugs were arguing that the price was inevitably headed for $2,000."
    outs = [noised("adjective_mismatch", text, seed=s).perturbed for s in range(1, 8)]
    for out in outs:
        (old, new), = changed_words(text, out)
        assert old in {"Last", "many", "gold"}  # spaCy tags this "gold" an adjective
        assert new[0].isupper() == (old == "Last")
        assert new.lower() in set(word_list("adjective"))
    assert not noised("adjective_mismatch", "I love dogs.").applied


# -- shared properties ----------------------------------------------------------------------------

@pytest.mark.parametrize("name", ALL)
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


@pytest.mark.parametrize("name", ALL)
def test_ref_free_perturbs_the_literal_translation_column(name, menli_rows):
    error = next(e for e, n in ERROR_TYPES.items() if n == name)
    rows = [r for r in menli_rows if r["error"] == error][:12]  # rows MENLI could attack
    ds = datasets.Dataset.from_dict({"id": [r["id"] for r in rows], "ref": [r["ref"] for r in rows],
                                     "r": [r["r"] for r in rows]})
    out = perturb_dataset(ds, name, level_of(name), seed=1, column="r")
    assert out["r"] == ds["r"] and out["ref"] == ds["ref"]  # nothing else is touched
    applied = [p for p, a in zip(out["perturbed"], out["applied"], strict=True) if a]
    assert applied and all(p not in ds["r"] for p in applied)
    unchanged = [(p, r) for p, a, r in zip(out["perturbed"], out["applied"], ds["r"], strict=True) if not a]
    assert all(p == r for p, r in unchanged)


# -- against MENLI's own outputs ------------------------------------------------------------------

def _squeezed(text: str) -> str:
    """Lower case without whitespace: MENLI's outputs carry casing and tokenisation artefacts."""
    return re.sub(r"\s+", "", text.lower())


@pytest.mark.parametrize("error", ["pron", "subject_verb_dis", "neg"])
def test_deterministic_attacks_reproduce_menli_outputs(error, menli_rows):
    """On MENLI's own rows, our deterministic attacks give MENLI's candidates (up to case and
    spacing) on at least 90 % of the first 60 rows, ref-based and ref-free (measured: pron 60/60,
    subject_verb_dis 58/60, neg 56 and 55 of 60)."""
    rows = [r for r in menli_rows if r["error"] == error][:60]
    test = get_perturbation(error)
    for anchor, adversarial in (("ref", "hyp_adv_based"), ("r", "hyp_adv_free")):
        same = sum(_squeezed(test.apply(r[anchor], "-", row_id=r["id"]).perturbed)
                   == _squeezed(r[adversarial]) for r in rows)
        assert same >= 54, (anchor, same)


@pytest.mark.parametrize("error", ["add", "drop", "name", "num", "word_JJ", "word_NN", "word_VB",
                                   "typo", "jumble"])
def test_random_attacks_apply_where_menli_applied_them(error, menli_rows):
    """MENLI kept rows its attack could change; ours changes at least 80 % of the first 50 of
    them, on ref and on r (the misses are spaCy's: durations labelled DATE, names outside
    CheckList's lists, words it does not tag JJ)."""
    rows = [r for r in menli_rows if r["error"] == error][:50]
    name = ERROR_TYPES[error]
    for anchor in ("ref", "r"):
        result = get_perturbation(name).apply_rows([r[anchor] for r in rows],
                                                   [r["id"] for r in rows], level_of(name), 1)
        assert sum(result["applied"]) >= 40, (anchor, sum(result["applied"]))
