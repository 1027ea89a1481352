"""The perturbation-checklist tests (Sai et al. 2021, PERTURBATIONS.md section C): hand-checked
outputs on real sentences (the paper's Table 5 examples and CNN/DM summaries), invariance
templates that keep the meaning, determinism and rows that cannot be changed."""

from __future__ import annotations

import json
from itertools import islice

import nltk
import pytest
from conftest import SHARED_DATA
from nltk.corpus.reader.wordnet import WordNetCorpusReader

from blindspot.perturbations import REGISTRY, get_perturbation, suite_tests
from blindspot.perturbations._checklist import checklist_perturb, wordnet
from blindspot.perturbations._dialogue import utterances
from blindspot.tiny_models import tiny_masked_lm

CNNDM = SHARED_DATA / "cnndm_summeval100_summarization.jsonl"


def apply(name: str, text: str, level: object = "-", seed: int = 1, source: str | None = None,
          **resources: object):
    return get_perturbation(name, **resources).apply(text, level, seed=seed, source=source)


def perturbed(name: str, text: str, level: object = "-", **kwargs: object) -> str:
    result = apply(name, text, level, **kwargs)
    assert result.applied, f"{name} did not change {text!r}"
    return result.perturbed


def gold_rows(n: int) -> list[dict]:
    with open(CNNDM, encoding="utf-8") as handle:
        return [json.loads(line) for line in islice(handle, n)]


# -- invariance templates (the score must not drop) ------------------------------------------------

@pytest.mark.parametrize("text, expected", [
    ("We are going to embark on an adventure.", "We're going to embark on an adventure."),
    ("I do not know. It is what it is", "I don't know. It's what it is"),
])
def test_contraction_keeps_meaning(text: str, expected: str) -> None:
    assert perturbed("contraction", text) == expected


def test_expansion_is_the_papers_example_and_inverts_contraction() -> None:
    text = "There weren't any clear winners of the contest"
    assert perturbed("expansion", text) == "There were not any clear winners of the contest"
    assert perturbed("expansion", "I don't know.") == "I do not know."


def test_checklist_imports_are_one_off_loads() -> None:
    """CheckList's multi-second import is loaded once per process (a suite keeps the test on one
    worker; a streamed run loads it before forking), not found on a worker's first row."""
    from blindspot.perturbations._checklist import checklist_perturb

    assert REGISTRY["contraction"].loads_once() and REGISTRY["expansion"].loads_once()
    checklist_perturb.cache_clear()
    get_perturbation("contraction").preload()
    assert checklist_perturb.cache_info().currsize == 1


def test_numerals_to_words_spells_standalone_numbers_only() -> None:
    text = ("Aron Ralston was trapped for 127 hours in 2003, with 2.5 litres, at 10:30, "
            "after a 0-0 draw and 1,500 dollars.")
    assert perturbed("numerals_to_words", text) == (
        "Aron Ralston was trapped for one hundred and twenty-seven hours in two thousand and "
        "three, with 2.5 litres, at 10:30, after a 0-0 draw and one thousand, five hundred "
        "dollars.")
    assert not apply("numerals_to_words", "No numbers here, only 4G and $5m.").applied


def test_synonym_substitution_uses_the_first_wordnet_sense() -> None:
    # 'delicious' has one one-word synonym in its first sense: delightful
    assert perturbed("synonym_substitution", "The mangoes are delicious.") == \
        "The mangoes are delightful."
    assert not apply("synonym_substitution", "It is.").applied


# -- fluency -------------------------------------------------------------------------------------

def test_punctuation_removal_is_the_papers_example() -> None:
    text = "Could you let me know, if I can meet him now or later?"
    assert perturbed("punctuation_removal", text) == \
        "Could you let me know if I can meet him now or later"


def test_pos_drop_drops_nouns_or_adjectives_as_in_the_checklist_paper() -> None:
    text = "A small boy playing with a red ball"
    assert perturbed("pos_drop", text, "NOUN") == "A small playing with a red"
    assert perturbed("pos_drop", text + ".", "ADJ") == "A boy playing with a ball."


# -- content templates -----------------------------------------------------------------------------

def test_antonym_substitution_is_the_papers_example() -> None:
    assert perturbed("antonym_substitution", "This book is so inspiring.") == \
        "This book is so uninspiring."


def test_sibling_substitution_keeps_the_inflection_and_the_article() -> None:
    out = perturbed("sibling_substitution", "Two musicians played.", "noun", seed=3)
    assert out.startswith("Two ") and out.endswith("s played.") and "musicians" not in out
    adj = perturbed("sibling_substitution", "A boy with a red ball", "adj", seed=1)
    new = adj.split()[-2]
    assert new != "red" and adj.split()[-3] == ("an" if new[0] in "aeiou" else "a")


def test_phrase_repetition_is_the_papers_example() -> None:
    assert perturbed("leading_phrase_repetition", "My relatives are in town.", 0.25) == \
        "My relatives are in town, my relatives."


def test_stopword_only_keeps_function_words() -> None:
    assert perturbed("stopword_only", "The bank is willing to approve the loan.") == \
        "The is to the ."


def test_noun_to_pronoun_is_the_papers_example() -> None:
    text = "The pandemic was spreading uncontrollably. Vaccines are being developed rapidly."
    assert perturbed("noun_to_pronoun", text) == \
        "It was spreading uncontrollably. They are being developed rapidly."
    # the whole subject phrase goes; a person of unknown gender is left alone
    assert perturbed("noun_to_pronoun", "The engineers at Apple built it.") == "They built it."
    assert not apply("noun_to_pronoun", "Paul Merson wrote a column.").applied


def test_sentence_repetition_appends_one_of_the_sentences() -> None:
    text = "The pandemic was spreading. Vaccines are being developed."
    out = perturbed("sentence_repetition", text, seed=2)
    assert out.startswith(text + " ")
    assert out[len(text) + 1:] in ("The pandemic was spreading.", "Vaccines are being developed.")


def test_random_texts_come_from_the_other_gold_texts() -> None:
    pool = ["The cat sat on the mat all day long.", "It will rain on Monday in Paris."]
    text = "I am new to coding."
    assert perturbed("random_response", text, pool=pool + [text]) in pool
    added = perturbed("random_sentence_addition", text, pool=pool)
    assert added.startswith(text + " ") and added[len(text) + 1:] in pool
    assert not apply("random_response", text, pool=[text]).applied


# -- question generation -------------------------------------------------------------------

def test_question_word_change_and_drop() -> None:
    changed = perturbed("question_word_change", "When was he born?", seed=4)
    assert changed.endswith(" was he born?") and changed.split()[0] != "When"
    assert changed.split()[0].lower() in ("what", "where", "which", "who", "whom", "whose",
                                         "why", "how")
    assert perturbed("question_word_drop", "When was he born ?") == "Was he born ?"
    assert not apply("question_word_drop", "He was born in 1990.").applied


@pytest.fixture(scope="module")
def tiny_mlm(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A 2-layer BERT masked LM with random weights and MiniLM's real tokenizer."""
    return tiny_masked_lm(tmp_path_factory.mktemp("tiny-mlm"), seed=7)


def test_question_to_assertion_fills_the_masked_question_word(tiny_mlm: str) -> None:
    question = "Who is the director of Titanic?"
    out = perturbed("question_to_assertion", question, mlm=tiny_mlm)
    first, rest = out.split(" ", 1)
    assert rest == "is the director of Titanic."
    assert first.lower() not in ("who", "what", "when", "where", "which", "whom", "whose", "why",
                                 "how")
    again = apply("question_to_assertion", question, mlm=tiny_mlm).perturbed
    assert again == out  # same row, seed, level: same output
    assert not apply("question_to_assertion", "He directed Titanic.", mlm=tiny_mlm).applied


# -- dialogue -------------------------------------------------------------------------------------

CONTEXT = "Bot: I enjoy having your daughter in my class.\nUser: I'm glad to hear that."


def test_context_templates_use_the_same_speakers_previous_turn() -> None:
    assert utterances("A: hi __eou__ B: hello __eou__") == ["hi", "hello"]
    assert perturbed("context_repetition", "She is a good student.", source=CONTEXT) == \
        "I enjoy having your daughter in my class."
    assert perturbed("context_negation", "She is a good student.", source=CONTEXT) == \
        "I don't enjoy having your daughter in my class."
    assert not apply("context_negation", "Hi.", source="User: hello").applied


def test_generic_response_levels() -> None:
    assert perturbed("generic_response", "I need to book a taxi", "repeat") == \
        "I'm sorry, can you repeat?"
    assert perturbed("generic_response", "I need to book a taxi", "ok") == "Ok."


# -- image captioning -----------------------------------------------------------------------------

def test_image_caption_templates_are_the_papers_examples() -> None:
    assert perturbed("object_order_swap", "The man is standing in front of a tree") == \
        "The tree is standing in front of a man"
    assert perturbed("gender_swap", "Two girls are playing with her doll.") == \
        "Two boys are playing with his doll."
    assert perturbed("object_repetition", "A lady riding a horse.") == \
        "A lady riding a horse and a lady."
    assert not apply("gender_swap", "A dog runs.").applied


# -- the suite ------------------------------------------------------------------------------------

def test_checklist_is_a_suite_and_deterministic_on_real_summaries() -> None:
    names = suite_tests("checklist", "summarization")
    assert {"contraction", "leading_phrase_repetition", "noun_to_pronoun",
            "synonym_substitution"} <= set(names)
    assert all(REGISTRY[n].category == "checklist" for n in names)
    rows = gold_rows(8)
    texts, ids = [r["gold"] for r in rows], [r["id"] for r in rows]
    for name in ("sentence_repetition", "synonym_substitution", "sibling_substitution",
                 "noun_to_pronoun"):
        level = REGISTRY[name].levels["summarization"][0]
        once = get_perturbation(name).apply_rows(texts, ids, level, seed=2)
        back = get_perturbation(name).apply_rows(texts[::-1], ids[::-1], level, seed=2)
        assert once["perturbed"] == back["perturbed"][::-1]  # per row, not per order
        assert any(once["applied"]), name
        assert all(p == t for p, t, a in zip(once["perturbed"], texts, once["applied"], strict=True) if not a)


def test_wordnet_noun_offsets_are_byte_offsets_and_a_broken_copy_is_repaired(tmp_path) -> None:
    from blindspot.assets.wordnet import install_wordnet

    noun = install_wordnet(tmp_path) / "data.noun"
    good = noun.read_bytes()
    # every synset line starts with its own byte offset (8 digits): check lines of both parts
    lines = [i + 1 for i in range(len(good) - 1) if good[i] == 10][1000::20000]
    assert len(lines) >= 3 and good.index(b"\n", lines[-1]) < len(good)
    for start in lines:
        if good[start:start + 2] != b"  ":  # the licence header lines start with spaces
            assert good[start:start + 8] == b"%08d" % start
    noun.write_bytes(good[:-40000])  # e.g. the old assembly, one byte short per missing newline
    install_wordnet(tmp_path)
    assert noun.read_bytes() == good


def test_english_wordnet_reader_answers_as_nltks_own_and_pattern_shares_it() -> None:
    """The reader without NLTK's 3.0-to-3.0 synset map gives the same synsets, lemmas and
    relations as NLTK's stock reader over the same files, and CheckList's ``pattern`` reads
    that one reader (one WordNet load per process)."""
    ours = wordnet()
    stock = WordNetCorpusReader(nltk.data.find("corpora/wordnet"), None)
    assert ours.map30 is None and stock.map30  # the map NLTK builds and we leave out
    words = [(w, pos) for pos in "nvar" for w in islice(stock.all_lemma_names(pos), 0, None, 500)]
    assert len(words) > 250

    def answers(reader: WordNetCorpusReader, word: str, pos: str) -> list:
        return [(s.name(), s.definition(), [lemma.name() for lemma in s.lemmas()],
                 [a.name() for lemma in s.lemmas() for a in lemma.antonyms()],
                 [h.name() for h in s.hypernyms()]) for s in reader.synsets(word, pos=pos)]

    assert all(answers(ours, w, pos) == answers(stock, w, pos) for w, pos in words)
    checklist_perturb()
    import pattern.text.en.wordnet as pattern_wordnet  # here: importing it loads WordNet

    assert nltk.corpus.wordnet is ours and pattern_wordnet.wn is ours
