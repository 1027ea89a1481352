"""The search's parts: candidate filtering, the greedy step, stopping, the budget, edit patterns
and the rule-based perturbation made from them (toy objectives with hand-computed scores)."""

from __future__ import annotations

import random

import pytest

from blindspot.perturbations import get_perturbation
from blindspot.perturbations.perturbation import REGISTRY
from blindspot.search.candidates import (
    is_trivial,
    keep_candidates,
    match_case,
    replacements,
    split_word,
    whole_word_entries,
)
from blindspot.search.greedy import (
    Budget,
    EmptyBudgetError,
    Hypothesis,
    greedy_search,
    pick_best,
    step_candidates,
)
from blindspot.search.patterns import classify, rank_patterns
from blindspot.search.rules import register_rules, rules_from_edits, shift_number

pytestmark = pytest.mark.quick  # make check: no model load

# -- candidates ---------------------------------------------------------------------------------

@pytest.mark.parametrize("original, candidate", [
    ("worse.", "worse"), ("worse", "Worse"), ("He", "he"), ("cat", ","), ("cat", "..."),
    ("cat", ""), ("right-of-way", "rightofway"), ("cat", "cat"),
])
def test_trivial_candidates_are_dropped(original: str, candidate: str) -> None:
    assert is_trivial(original, candidate)


@pytest.mark.parametrize("original, candidate", [("a", "an"), ("He", "They"), ("7", "8"),
                                                 ("worse", "worsened")])
def test_real_changes_are_kept(original: str, candidate: str) -> None:
    assert not is_trivial(original, candidate)


def test_keep_candidates_filters_matches_case_and_caps_at_k() -> None:
    found = keep_candidates("He", ["he", "HE", ",", "they", "she", "they", "it", "we"], 3)
    assert found == ["They", "She", "It"]
    assert match_case("NATO", "eu") == "EU" and match_case("a", "the") == "the"


def test_affixes_are_kept_around_replacements() -> None:
    parts = split_word("(worse).")
    assert (parts.prefix, parts.core, parts.suffix) == ("(", "worse", ").")

    def source(words: list[str], index: int) -> list[str]:
        return ["better", "Worse"]

    source.source = "toy"  # type: ignore[attr-defined]
    assert replacements([source], ["it", "got", "(worse)."], 2) == [("(better).", "toy")]


@pytest.mark.slow  # loads the all-MiniLM-L6-v2 tokenizer
def test_whole_word_entries_leave_out_pieces_and_special_tokens() -> None:
    from blindspot.models import load_tokenizer

    ids, words = whole_word_entries(load_tokenizer("minilm"))
    assert "the" in words and "seven" in words
    assert not any(w.startswith("##") or w.startswith("[") for w in words)
    assert len(ids) == len(words) == len(set(words))


@pytest.mark.slow  # loads all-MiniLM-L6-v2
def test_embedding_neighbours_of_minilm() -> None:
    """Real MiniLM input embeddings: the paper's pattern kinds are each other's neighbours."""
    from blindspot.search.candidates import EmbeddingNeighbours

    neighbours = EmbeddingNeighbours("minilm", k=8)
    assert "an" in neighbours(["a"], 0)
    assert "eight" in neighbours(["seven"], 0)
    assert "They" in neighbours(["He", "left."], 0)
    assert all(len(neighbours([w], 0)) == 8 for w in ("a", "seven", "house"))


# -- greedy search on a toy objective -------------------------------------------------------------

TOY = {"cat": ["tiger"], "mat": ["rug"], "sat": ["s"]}


def toy_source(words: list[str], index: int) -> list[str]:
    return TOY.get(words[index], [])


toy_source.source = "toy"  # type: ignore[attr-defined]


def letters(texts, golds, sources) -> list[float]:
    """Score = number of letters: deleting the shortest word or lengthening one scores highest."""
    return [float(sum(len(w) for w in t.split())) for t in texts]


def test_each_step_applies_the_highest_scoring_edit() -> None:
    # 'the cat sat on a mat' has 15 letters. Step 1: cat -> tiger gives 17 (deleting 'a' gives
    # 14). Step 2 (cat is not edited again): mat -> rug keeps 17, deleting 'a' gives 16.
    state = Hypothesis("r1", "the cat sat on a mat", None, gold_score=15.0)
    state.score = 15.0
    greedy_search([state], letters, [toy_source], 0.3, Budget())
    assert state.text == "the tiger sat on a rug"
    assert [(s["op"], s["old"], s["new"], s["score"]) for s in state.trail] == [
        ("replace", "cat", "tiger", 17.0), ("replace", "mat", "rug", 17.0)]
    assert state.status == "reached" and state.noise_ratio == pytest.approx(2 / 6)
    assert state.trail[0]["relative_change"] == pytest.approx(2 / 15 * 100)


def test_stops_as_soon_as_the_target_noise_ratio_is_reached() -> None:
    golds = ["one two three four five six seven eight nine ten", "a b c", "alpha beta"]
    states = [Hypothesis(i, g, None, gold_score=1.0) for i, g in enumerate(golds)]
    greedy_search(states, letters, [toy_source], 0.25, Budget())
    # ceil(0.25 * n) edits: 3 of 10 words, 1 of 3, 1 of 2
    assert [len(s.trail) for s in states] == [3, 1, 1]
    for state in states:
        assert state.noise_ratio >= 0.25
        assert all(step["noise_ratio"] < 0.25 for step in state.trail[:-1])


def test_every_edit_raises_the_edit_distance() -> None:
    state = Hypothesis("r", "the the the cat", None)
    ops, texts, distances = step_candidates(state, [toy_source])
    assert len(texts) == len(set(texts))  # deleting any 'the' is one text
    assert distances == [1] * len(texts)
    assert "the the the tiger" in texts and "the the cat" in texts


def test_the_last_word_is_never_deleted_and_empty_golds_are_kept() -> None:
    one, empty = Hypothesis("a", "word", None), Hypothesis("b", "   ", None)
    greedy_search([one, empty], letters, [], 0.5, Budget())
    assert one.status == "no_candidates" and one.text == "word"
    assert empty.status == "empty" and empty.trail == []


def test_call_budget_is_respected_exactly() -> None:
    calls: list[int] = []

    def counted(texts, golds, sources):
        calls.append(len(texts))
        return letters(texts, golds, sources)

    golds = ["the cat sat on a mat today", "a cat and a mat", "the cat sat"]
    states = [Hypothesis(i, g, None, gold_score=1.0) for i, g in enumerate(golds)]
    first = [len(step_candidates(s, [toy_source])[1]) for s in states]
    assert first == [10, 7, 5]  # 7, 5, 3 deletions + 3, 2, 2 replacements
    budget = Budget(max_calls=first[0] + first[1] + 1)
    greedy_search(states, counted, [toy_source], 0.5, budget)
    assert budget.calls_used == sum(calls) == first[0] + first[1] <= budget.max_calls
    assert budget.stopped_by == "max_calls"
    assert [s.status for s in states] == ["budget", "budget", "budget"]
    assert [len(s.trail) for s in states] == [1, 1, 0]
    assert sum(s.calls for s in states) == budget.calls_used


def test_a_budget_too_small_for_one_step_is_refused() -> None:
    """"the cat sat": 3 deletions + 2 replacements (toy_source) = 5 calls for the first step."""
    state = Hypothesis("r", "the cat sat", None)
    budget = Budget(max_calls=4)
    with pytest.raises(EmptyBudgetError, match=r"max_calls=4 is smaller than one search step: "
                                               r"the first step of row 'r' scores 5 candidate "
                                               r"texts.*at least 5"):
        greedy_search([state], letters, [toy_source], 0.5, budget)
    assert budget.calls_used == 0 and state.text == "the cat sat"
    exact = Budget(max_calls=5)
    greedy_search([Hypothesis("r", "the cat sat", None)], letters, [toy_source], 0.5, exact)
    assert exact.calls_used == 5


def test_time_budget_stops_cleanly() -> None:
    state = Hypothesis("r", "the cat sat on a mat", None)
    budget = Budget(max_seconds=1e-9)
    greedy_search([state], letters, [toy_source], 0.5, budget)
    assert budget.stopped_by == "max_seconds" and state.status == "budget"


def test_ties_are_broken_by_the_seed_alone() -> None:
    def flat(texts, golds, sources):
        return [0.0] * len(texts)

    def run(seed: int) -> list[str]:
        states = [Hypothesis(f"r{i}", "w1 w2 w3 w4 w5 w6", None) for i in range(6)]
        greedy_search(states, flat, [toy_source], 0.5, Budget(), seed=seed)
        return [s.text for s in states]

    assert run(3) == run(3)
    assert pick_best([1.0, float("nan"), 2.0], random.Random(0)) == 2


def test_bad_target_noise_ratio() -> None:
    with pytest.raises(ValueError, match="noise_ratio"):
        greedy_search([Hypothesis("r", "a b", None)], letters, [], 0.0, Budget())


# -- patterns ------------------------------------------------------------------------------------

@pytest.mark.parametrize("old, new, pattern", [
    ("a", "an", "article_swap"), ("The", "A", "article_swap"),
    ("seven", "eight", "number_shift"), ("21:30", "21:31", "number_shift"),
    ("1940,", "1941,", "number_shift"), ("He", "They", "pronoun_swap"),
    ("his", "their", "pronoun_swap"), ("This", "These", "demonstrative_swap"),
    ("in", "on", "preposition_swap"), ("and", "or", "conjunction_swap"),
    ("is", "was", "auxiliary_swap"), ("not", "now", "negation_flip"),
    ("reacts", "react", "inflection_change"), ("fast", "quick", "content_word_swap"),
    ("a", None, "article_deletion"), ("of", None, "function_word_deletion"),
    ("not", None, "negation_deletion"), ("44", None, "number_deletion"),
    ("Biker", None, "content_word_deletion"),
])
def test_edit_patterns(old: str, new: str | None, pattern: str) -> None:
    assert classify(old, new) == pattern


def test_patterns_are_ranked_by_how_often_they_fool_the_metric() -> None:
    edits = [
        {"pattern": "article_swap", "old": "a", "new": "an", "example": 1, "score_change": -1.0},
        {"pattern": "article_swap", "old": "A", "new": "an", "example": 2, "score_change": -3.0},
        {"pattern": "pronoun_swap", "old": "he", "new": "they", "example": 1,
         "score_change": -0.5},
        {"pattern": "number_shift", "old": "7", "new": "8", "example": 3, "score_change": -0.1},
    ]
    ranked = rank_patterns(edits)
    assert [p["pattern"] for p in ranked] == ["article_swap", "number_shift", "pronoun_swap"]
    top = ranked[0]
    assert (top["rank"], top["count"], top["examples"]) == (1, 2, 2)
    assert top["mean_score_change"] == pytest.approx(-2.0)
    assert top["pairs"] == [{"edit": "a -> an", "count": 2}]


# -- rules from patterns ------------------------------------------------------------------------

EDITS = [
    {"pattern": "pronoun_swap", "old": "He", "new": "they"},
    {"pattern": "pronoun_swap", "old": "he", "new": "she"},
    {"pattern": "pronoun_swap", "old": "he", "new": "she"},
    {"pattern": "article_deletion", "old": "a", "new": None},
    {"pattern": "number_shift", "old": "seven", "new": "eight"},
    {"pattern": "content_word_swap", "old": "fast", "new": "quick"},
]


def test_rules_from_edits() -> None:
    rules = rules_from_edits("toy", EDITS, ["pronoun_swap", "article_deletion", "number_shift"])
    assert dict(rules.substitutions) == {"he": ("she", "they")}
    assert rules.deletions == ("a",) and rules.number_shift


@pytest.mark.parametrize("word, shifted", [("1940", "1941"), ("21:30", "21:31"),
                                           ("seven", "eight"), ("Seventh,", "Eighth,"),
                                           ("twenty", "nineteen"), ("09", "10"), ("cat", None)])
def test_number_shift(word: str, shifted: str | None) -> None:
    assert shift_number(word) == shifted


def test_rule_perturbation_is_registered_and_deterministic() -> None:
    rules = rules_from_edits("toy", EDITS, ["pronoun_swap", "article_deletion", "number_shift"])
    name = register_rules(rules, 0.1)
    assert name == register_rules(rules, 0.1) and name.startswith("search_toy_")
    assert REGISTRY[name].category == "search"
    test = get_perturbation(name)
    text = "He said a dog saw seven cats."
    full = test.apply(text, 1.0, seed=1)
    assert full.perturbed in ("She said dog saw eight cats.", "They said dog saw eight cats.")
    assert full.noise_ratio == pytest.approx(3 / 7)
    some = [test.apply(text, 0.1, seed=s).perturbed for s in range(1, 6)]
    assert some == [test.apply(text, 0.1, seed=s).perturbed for s in range(1, 6)]
    assert all(len(t.split()) >= 6 for t in some)  # ceil(0.1 * 7) = 1 word changed
    assert not test.apply("Cats sleep.", 1.0).applied


def test_rule_perturbation_runs_through_datasets_map() -> None:
    import datasets

    from blindspot.perturbations.dataset import perturb_dataset

    name = register_rules(rules_from_edits("toy", EDITS, ["pronoun_swap"]), 0.2)
    ds = datasets.Dataset.from_dict({"id": [1, 2], "gold": ["he ran home", "they ran home"]})
    out = perturb_dataset(ds, name, 0.5, seed=1)
    assert out["perturbed"][0] in ("she ran home", "they ran home")
    assert out["applied"] == [True, False]
