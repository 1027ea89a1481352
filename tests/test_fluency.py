"""The blind-spots paper's fluency tests (article removal ... noised punctuation): outputs worked
out by hand, the promised properties on real CNN/DM golds, odd input, long input and speed."""

from __future__ import annotations

import json
import math
import random
import re
from collections import Counter
from itertools import pairwise

import pytest
from conftest import SHARED_DATA
from engine_support import tiled_parse

from blindspot.noise import noise_ratio
from blindspot.parsing import ParsedText, get_parser
from blindspot.perturbations import REGISTRY, TASKS, get_perturbation
from blindspot.perturbations._fluency_edits import Words, count_of, remove_tokens
from blindspot.perturbations.perturbation import Row

RATIOS_05_50 = (0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5)
#: name -> (levels on every task but middle swap's WMT, swap-type, needs a parse)
SPEC = {
    "article_removal": ((0.5, 1.0), False, False),
    "preposition_removal": ((0.4, 0.7, 1.0), False, True),
    "stopword_removal": ((0.1, 0.2, 0.3, 0.4, 0.5, 0.6), False, True),
    "verb_lemmatization": ((0.5, 1.0), False, True),
    "token_drop": (RATIOS_05_50, False, False),
    "repeated_token": (RATIOS_05_50, False, False),
    "local_swap": ((0.05, 0.15, 0.3, 0.6), True, False),
    "middle_swap": ((1, 2, 3), True, True),
    "noised_punctuation": ((0.5, 1.0), False, False),
}
NAMES = sorted(SPEC)
ARTICLES = {"a", "an", "the"}


@pytest.fixture(scope="module")
def golds() -> list[str]:
    """40 CNN/DM gold summaries, read in place from the shared data."""
    with open(SHARED_DATA / "cnndm_summeval100_summarization.jsonl", encoding="utf-8") as fh:
        return [json.loads(line)["gold"] for line in fh][:40]


@pytest.fixture(scope="module")
def paragraphs() -> list[tuple[str, ParsedText]]:
    """20 WikiText paragraphs (about 256 tokens) with their parses."""
    with open(SHARED_DATA / "wikitext103_open_ended.jsonl", encoding="utf-8") as fh:
        texts = [json.loads(line)["gold"] for line in fh][:20]
    return list(zip(texts, get_parser().parse_many(texts), strict=True))


def noised(name: str, text: str, level, seed: int = 1) -> str:
    return get_perturbation(name).apply(text, level, seed=seed).perturbed


# -- catalogue ------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", NAMES)
def test_registered_with_the_paper_levels(name: str) -> None:
    levels, swap, needs_parse = SPEC[name]
    cls = REGISTRY[name]
    assert cls.category == "fluency" and cls.deterministic is False
    assert cls.swap is swap and cls.needs_parse is needs_parse
    expected = {task: levels for task in TASKS}
    if name == "middle_swap":
        expected["translation"] = (1,)
    assert {task: tuple(cls.levels[task]) for task in TASKS} == expected


@pytest.mark.parametrize("alias, name", [
    ("Article Removal", "article_removal"), ("Stop-word Removal", "stopword_removal"),
    ("stop_word_removal", "stopword_removal"), ("Verb Lemmatization", "verb_lemmatization"),
    ("verb_lemmatisation", "verb_lemmatization"), ("Middle Swap", "middle_swap"),
    ("Noised Punctuation", "noised_punctuation"), ("Repeated Token", "repeated_token"),
])
def test_paper_names_resolve(alias: str, name: str) -> None:
    assert get_perturbation(alias).name == name


def test_count_is_a_float_safe_ceiling() -> None:
    cases = [(10, 0.3), (20, 0.15), (7, 0.05), (3, 0.5)]
    assert [count_of(n, p) for n, p in cases] == [3, 3, 1, 2]


# -- outputs worked out by hand -------------------------------------------------------------------

@pytest.mark.parametrize("name, text, level, expected", [
    ("article_removal", "The cat sat on a mat.", 1.0, "Cat sat on mat."),
    ("article_removal", "She ate an apple. The pear was left.", 1.0,
     "She ate apple. Pear was left."),
    ("article_removal", "The dog barked.\nA cat\tran away.", 1.0, "Dog barked.\nCat\tran away."),
    ("preposition_removal", "She went to the office.", 1.0, "She went the office."),
    ("preposition_removal", "In the morning, she walked to the park with her dog.", 1.0,
     "The morning, she walked the park her dog."),
    ("preposition_removal", "What are you looking at?", 1.0, "What are you looking?"),
    ("preposition_removal", "In  the\tbox.", 1.0, "The\tbox."),
    ("preposition_removal", "of\n\nthe cat", 1.0, "the cat"),
    ("stopword_removal", "She went to the office.", 1.0, "Went office."),
    ("stopword_removal", "In the morning we left.", 1.0, "Morning left."),
    ("verb_lemmatization", "She went to the office.", 1.0, "She go to the office."),
    ("verb_lemmatization", "The children were running and laughed.", 1.0,
     "The children were run and laugh."),
    ("verb_lemmatization", "Said the man, SHOUTING loudly.", 1.0, "Say the man, SHOUT loudly."),
    ("verb_lemmatization", "And there's a lot of stopping.", 1.0, "And there be a lot of stop."),
    ("noised_punctuation", "Wait, what? Yes: it costs 3.5 dollars at 10:30! Done.", 1.0,
     "Wait. what, Yes. it costs 3.5 dollars at 10:30, Done,"),
    ("middle_swap", "She went to the office.", 1, "The office She went to."),
    ("middle_swap", "When he arrived, he sat down.", 1, "He sat down when he arrived."),
    ("middle_swap", "The cat sat on the mat .", 1, "The mat the cat sat on."),
    ("middle_swap", '"The cat sat," he said.', 1, '" he said "The cat sat.'),
    ("middle_swap", "Did she go to the office?", 1, "The office? Did she go to"),
    ("middle_swap", "It rained. We stayed inside all day.", 3,
     "It rained. All day We stayed inside."),
    ("local_swap", "hello world", 1.0, "world hello"),
    ("repeated_token", "word", 0.5, "word word"),
    ("token_drop", "one two", 1.0, None),  # one of the two words, whichever the seed picks
])
def test_output_by_hand(name: str, text: str, level, expected: str | None) -> None:
    result = get_perturbation(name).apply(text, level, seed=1)
    assert result.applied
    if expected is None:
        assert result.perturbed in ("one", "two")
    else:
        assert result.perturbed == expected


@pytest.mark.parametrize("name, text, level", [
    ("article_removal", "Then Anne saw (the) theatre.", 1.0),
    ("preposition_removal", "Dogs bark loudly.", 1.0),
    ("verb_lemmatization", "The sky is blue.", 1.0),
    ("noised_punctuation", "no punctuation here but 3.5 and 10:30", 1.0),
    ("middle_swap", "Hello", 3),
    ("middle_swap", "Hi .", 3),
    ("token_drop", "Word", 0.5),
    ("local_swap", "Word", 0.6),
])
def test_nothing_to_perturb_comes_back_unchanged(name: str, text: str, level) -> None:
    result = get_perturbation(name).apply(text, level, seed=1)
    assert (result.perturbed, result.applied, result.noise_ratio) == (text, False, 0.0)


def test_removed_clitic_leaves_one_space_and_brackets_close_up() -> None:
    parsed = get_parser().parse("They didn't go (the) way home.")
    index = {t.text: t.i for t in parsed.tokens}
    assert remove_tokens(parsed, {index["n't"]}) == "They did go (the) way home."
    assert remove_tokens(parsed, {index["the"]}) == "They didn't go () way home."


# -- properties on real data ----------------------------------------------------------------------

def test_article_removal_at_one_removes_every_article(golds: list[str]) -> None:
    for gold in golds:
        out = noised("article_removal", gold, 1.0)
        assert not ARTICLES & {w.lower() for w in out.split()}
        kept = [w for w in gold.split() if w.lower() not in ARTICLES]
        assert [w.lower() for w in out.split()] == [w.lower() for w in kept]


@pytest.mark.parametrize("level", RATIOS_05_50[::3] + (1.0,))
def test_token_drop_deletes_exactly_ceil_np_words(golds: list[str], level: float) -> None:
    for seed, gold in enumerate(golds):
        words = gold.split()
        k = min(math.ceil(round(len(words) * level, 9)), len(words) - 1)
        result = get_perturbation("token_drop").apply(gold, level, seed=seed)
        out = result.perturbed.split()
        assert len(out) == len(words) - k
        remaining = iter(words)
        assert all(word in remaining for word in out)  # a subsequence: order kept
        assert result.noise_ratio == pytest.approx(k / len(words))


@pytest.mark.parametrize("level", RATIOS_05_50[::3])
def test_repeated_token_doubles_ceil_np_words(golds: list[str], level: float) -> None:
    for seed, gold in enumerate(golds):
        words = gold.split()
        k = math.ceil(round(len(words) * level, 9))
        result = get_perturbation("repeated_token").apply(gold, level, seed=seed)
        out = result.perturbed.split()
        assert len(out) == len(words) + k
        assert sum((Counter(out) - Counter(words)).values()) == k
        extra = [i for i in range(1, len(out)) if out[i] == out[i - 1]]
        assert len(extra) >= k  # every copy sits right before its original
        assert result.noise_ratio == pytest.approx(k / len(words))


@pytest.mark.parametrize("level", (0.05, 0.3, 0.6, 1.0))
def test_local_swap_keeps_the_words_and_their_spacing(golds: list[str], level: float) -> None:
    changed = 0
    for seed, gold in enumerate(golds + ["a b\nc\td  e"]):
        result = get_perturbation("local_swap").apply(gold, level, seed=seed)
        assert Counter(result.perturbed.split()) == Counter(gold.split())
        assert re.sub(r"\S+", "w", result.perturbed) == re.sub(r"\S+", "w", gold)
        k = min(math.ceil(round(len(gold.split()) * level, 9)), len(gold.split()) - 1)
        # a later swap may undo an earlier one (the release's draw), so a row may stay as it was
        assert 0 <= result.noise_ratio <= k / len(gold.split()) + 1e-9
        changed += result.applied
    assert changed >= 0.9 * (len(golds) + 1)


class ScriptedRandom(random.Random):
    """A random stream whose ``randrange`` answers are given in advance (release draws by hand)."""

    def __init__(self, draws: list[int]) -> None:
        super().__init__(0)
        self.draws = list(draws)

    def randrange(self, *args, **kwargs) -> int:  # type: ignore[override]
        return self.draws.pop(0)


def test_local_swap_draws_as_the_release_does() -> None:
    from blindspot.perturbations.local_swap import swap_neighbours

    # 4 words at p = 1: min(ceil(4), 3) = 3 swaps. Position 0 swaps "a b" -> "b a c d"; position
    # 0 again holds a new pair ("b", "a"), so it swaps back -> "a b c d"; a third 0 would repeat
    # (0, "a", "b"), so it is drawn again: 2 -> "a b d c".
    rng = ScriptedRandom([0, 0, 0, 2])
    assert swap_neighbours("a b c d", 1.0, rng) == "a b d c" and rng.draws == []
    # two swaps that undo each other leave the text as it was (the release does the same)
    assert swap_neighbours("x y z", 0.6, ScriptedRandom([0, 0])) == "x y z"
    # overlapping swaps carry a word two places: 0 then 1 on "x y z" -> "y x z" -> "y z x"
    assert swap_neighbours("x y z", 0.6, ScriptedRandom([0, 1])) == "y z x"
    result = get_perturbation("local_swap").apply("a b c d", 1.0, seed=1)
    assert result.noise_ratio == pytest.approx(noise_ratio("a b c d", result.perturbed) / 2)


def test_local_swap_touches_fewer_words_than_distinct_places(golds: list[str]) -> None:
    """At p = 0.6 the release's draws revisit and undo swaps: on CNN/DM the noise ratio stays
    well below the k / n / 2-per-swap bound that k distinct places would about reach."""
    test = get_perturbation("local_swap")
    ratios = [test.apply(g, 0.6, seed=s).noise_ratio for g in golds for s in (1, 2)]
    assert 0.18 < sum(ratios) / len(ratios) < 0.26


def test_middle_swap_counts_punctuation_tokens_and_keeps_only_a_final_period() -> None:
    from blindspot.perturbations.middle_swap import swap_halves

    # NLTK tokens: When he arrived , he sat down . (8) -> cut at 4; "when" is lowered, the comma
    # before the final period goes
    assert swap_halves("When he arrived, he sat down.") == "He sat down when he arrived."
    # 6 tokens, cut at 3: a pronoun keeps its capital
    assert swap_halves("She went to the office.") == "The office She went to."
    # 5 words + "!" = 6 tokens, cut at 3 (after "the"), and the "!" moves with its half
    assert swap_halves("We won the cup today!") == "Cup today! We won the"
    # 2 words + "." = 3 tokens, cut at 2: nothing moves
    assert swap_halves("It rained.") is None


def test_middle_swap_changes_exactly_k_sentences() -> None:
    text = "The cat sat on the mat. Then it ate the fish. Later the dog came home. All slept well."
    sentences = text.split(". ")
    for k in (1, 2, 3):
        for seed in range(5):
            out = noised("middle_swap", text, k, seed)
            kept = [s for s in sentences if s.rstrip(".") in out]
            assert len(kept) == len(sentences) - k


def test_middle_swap_swaps_all_sentences_when_k_exceeds_them() -> None:
    assert noised("middle_swap", "She went to the office.", 3) == "The office She went to."


def test_noised_punctuation_at_one_replaces_every_mark(golds: list[str]) -> None:
    table = str.maketrans({".": ",", ",": ".", "!": ",", "?": ",", ":": "."})
    for gold in golds:
        out = noised("noised_punctuation", gold, 1.0)
        expected = re.sub(r"[.,!?:](?![^\W_])", lambda m: m.group().translate(table), gold)
        assert out == expected


@pytest.mark.parametrize("name", NAMES)
def test_noise_ratio_grows_with_the_level(name: str, golds: list[str]) -> None:
    perturbation = get_perturbation(name)
    ids = list(range(len(golds)))
    means = []
    for level in perturbation.paper_levels("summarization"):
        ratios = [r for seed in (1, 2)
                  for r in perturbation.apply_rows(golds, ids, level, seed)["noise_ratio"]]
        means.append(sum(ratios) / len(ratios))
    assert all(a < b for a, b in pairwise(means)), means
    assert means[0] > 0


# -- randomness, odd and long input, speed --------------------------------------------------------

@pytest.mark.parametrize("name", NAMES)
def test_randomness_only_from_the_given_stream(name: str, golds: list[str]) -> None:
    perturbation = get_perturbation(name)
    text = " ".join(golds[:3])
    row = Row(text, "r", get_parser().parse(text))
    level = perturbation.check_level(SPEC[name][0][0])
    random.seed(1)
    first = perturbation.perturb(row, level, random.Random(7))
    random.seed(2)
    assert perturbation.perturb(row, level, random.Random(7)) == first
    others = {perturbation.perturb(row, level, random.Random(s)) for s in range(8)}
    assert len(others) > 1


ODD = ["🙂 emoji ☃ only", "word", "no punctuation at all here",
       "  The\tcat \n\n sat  on a mat .  ", "?!.,:", "x" * 3000,
       "Ünïcödé straße, café! Naïve: résumé?", "עברית ו العربية.",
       "The The the a an", "e\u0301 combining, marks.", "A\u00a0non-breaking\u2003space."]


@pytest.mark.parametrize("name", NAMES)
def test_odd_input_never_raises(name: str) -> None:
    perturbation = get_perturbation(name)
    for level in SPEC[name][0]:
        for text in ODD:
            result = perturbation.apply(text, level, seed=3)
            assert isinstance(result.perturbed, str) and result.perturbed.strip()
            assert result.applied == (result.perturbed != text)


def test_words_keep_odd_whitespace() -> None:
    for text in ODD + ["", "   ", "\u2028a\u00a0b\x1c"]:
        words = Words.of(text)
        assert words.words == text.split() and words.text() == text


def test_missing_or_stale_parse_is_not_applied() -> None:
    for name in ("preposition_removal", "stopword_removal", "verb_lemmatization", "middle_swap"):
        perturbation = get_perturbation(name)
        level = perturbation.check_level(SPEC[name][0][-1])
        other = get_parser().parse("Another text went to the shop.")
        for parsed in (None, other):
            row = Row("She went to the office.", "r", parsed)
            assert perturbation.perturb(row, level, random.Random(1)) is None




@pytest.mark.parametrize("name", NAMES)
def test_100k_characters(name: str, paragraphs) -> None:
    text, parsed = paragraphs[0]
    big = tiled_parse(parsed, 100_000 // len(text) + 1)
    assert len(big.text) >= 100_000
    perturbation = get_perturbation(name)
    level = perturbation.check_level(SPEC[name][0][-1])
    out = perturbation.perturb(Row(big.text, "big", big), level, random.Random(1))
    assert out and out != big.text


def test_noise_ratio_is_the_papers(golds: list[str]) -> None:
    gold = golds[0]
    for name in NAMES:
        result = get_perturbation(name).apply(gold, SPEC[name][0][-1], seed=4)
        expected = noise_ratio(gold, result.perturbed, swap=SPEC[name][1])
        assert result.noise_ratio == pytest.approx(expected)
