"""The static word-vector metrics (Embedding Average, Vector Extrema, Greedy Matching, WMD, SMS):
their formulas on vectors small enough to compute by hand, and their scores on MiniLM checked
against the same formulas applied to rows read straight from MiniLM's input embedding table."""

from __future__ import annotations

import math

import numpy as np
import pytest

from blindspot.models import resolve_model
from blindspot.scorers._word_vectors import DEFAULT_MODEL, Words, WordVectors
from blindspot.scorers.embedding_similarity import (
    average_cosine,
    extrema,
    extrema_cosine,
    greedy_matching,
)
from blindspot.scorers.sms import mixed_bag, sentence_bag
from blindspot.scorers.wmd import bag, earth_movers_distance
from blindspot.scoring.engine import score_rows
from blindspot.scoring.scorer import get_scorer

# -- the formulas, by hand -------------------------------------------------------------------


@pytest.mark.quick
def test_extrema_keeps_the_value_of_largest_magnitude_per_dimension() -> None:
    # dimension 0: max 2, min 1 -> 2; dimension 1: max 1, min -3 -> -3; a tie keeps the max
    assert extrema(np.array([[1.0, -3.0, 2.0], [2.0, 1.0, -2.0]])).tolist() == [2.0, -3.0, 2.0]


@pytest.mark.quick
def test_cosine_metrics_by_hand() -> None:
    hyp = np.array([[1.0, 0.0], [0.0, 1.0]])
    ref = np.array([[1.0, 0.0]])
    # mean (0.5, 0.5) against (1, 0): 0.5 / (sqrt(0.5) * 1)
    assert average_cosine(hyp, ref) == pytest.approx(math.sqrt(0.5))
    # extrema (1, 1) against (1, 0)
    assert extrema_cosine(hyp, ref) == pytest.approx(math.sqrt(0.5))
    # hypothesis words' best cosines 1 and 0 (mean 0.5), the reference word's best 1: (0.5 + 1) / 2
    assert greedy_matching(hyp, ref) == pytest.approx(0.75)
    assert greedy_matching(ref, hyp) == pytest.approx(0.75)


def test_word_movers_distance_by_hand() -> None:
    # "a a b" against "c": a (2/3 of the mass) sits on c, b (1/3) is 5 away from it
    hyp = bag([("a", [0.0, 0.0]), ("a", [0.0, 0.0]), ("b", [3.0, 4.0])])
    assert hyp[0].tolist() == pytest.approx([2 / 3, 1 / 3])
    ref = bag([("c", [0.0, 0.0])])
    assert earth_movers_distance(hyp, ref) == pytest.approx(5 / 3)
    # two half masses each moved 1 up (not diagonally)
    square = bag([("x", [0.0, 0.0]), ("y", [1.0, 0.0])]), bag([("u", [0.0, 1.0]), ("v", [1.0, 1.0])])
    assert earth_movers_distance(*square) == pytest.approx(1.0)


def test_sentence_bags_by_hand() -> None:
    first = Words(("w1", "w2"), np.array([[0.0, 0.0], [2.0, 0.0]]))  # mean (1, 0), 2 words
    second = Words(("w3",), np.array([[0.0, 2.0]]))  # (0, 2), 1 word
    weights, points = sentence_bag([first, second])
    assert weights.tolist() == pytest.approx([2 / 3, 1 / 3])
    assert points.tolist() == [[1.0, 0.0], [0.0, 2.0]]
    ref = sentence_bag([Words(("w4",), np.array([[1.0, 0.0]]))])
    # only the second sentence (1/3 of the mass) moves, sqrt(5) away
    assert earth_movers_distance((weights, points), ref) == pytest.approx(math.sqrt(5) / 3)
    mixed_weights, mixed_points = mixed_bag([first, second])
    assert mixed_weights.tolist() == pytest.approx([1 / 6, 1 / 6, 1 / 6, 1 / 3, 1 / 6])
    assert len(mixed_points) == 5 and mixed_weights.sum() == pytest.approx(1.0)


# -- on MiniLM, against its embedding table read directly ---------------------------------------


@pytest.fixture(scope="module")
def table():
    """MiniLM's tokenizer and input embedding matrix, loaded with transformers alone."""
    from transformers import AutoModel, AutoTokenizer

    path = resolve_model("minilm")
    tokenizer = AutoTokenizer.from_pretrained(path)
    weights = AutoModel.from_pretrained(path).get_input_embeddings().weight.detach().double().numpy()

    def vector(word: str) -> np.ndarray:
        pieces = tokenizer.tokenize(word)
        return weights[tokenizer.convert_tokens_to_ids(pieces)].mean(axis=0)

    return tokenizer, vector


def _scores(name: str, hyps: list[str], refs: list) -> dict[str, list[float]]:
    return score_rows(get_scorer(name, model_type="minilm"), hyps, refs, cache=None)


def test_embedding_metrics_on_minilm_match_the_table(table) -> None:
    tokenizer, vector = table
    assert len(tokenizer.tokenize("unaffable")) > 1  # a word of several pieces: their mean
    hyp = np.array([vector("cats"), vector("unaffable"), vector("dogs")])
    ref = np.array([vector("dogs"), vector("bark")])
    texts = (["Cats unaffable dogs"], ["dogs bark"])
    assert _scores("embedding_average", *texts)["embedding_average"][0] == \
        pytest.approx(average_cosine(hyp, ref), abs=1e-9)
    assert _scores("vector_extrema", *texts)["vector_extrema"][0] == \
        pytest.approx(extrema_cosine(hyp, ref), abs=1e-9)
    assert _scores("greedy_matching", *texts)["greedy_matching"][0] == \
        pytest.approx(greedy_matching(hyp, ref), abs=1e-9)
    # identical texts, and the references averaged
    same = _scores("greedy_matching", ["dogs bark"], [["dogs bark", "Cats unaffable dogs"]])
    assert same["greedy_matching"][0] == pytest.approx((1 + greedy_matching(ref, hyp)) / 2)


def test_wmd_on_minilm_matches_the_table(table) -> None:
    _, vector = table
    # "cats cats dogs" against "dogs": the two thirds on "cats" move to "dogs"
    distance = 2 / 3 * float(np.linalg.norm(vector("cats") - vector("dogs")))
    out = _scores("wmd", ["cats cats dogs", "dogs bark", ""], ["dogs", "bark dogs", "dogs"])
    assert out["wmd"][0] == pytest.approx(distance)
    assert out["wms"][0] == pytest.approx(math.exp(-distance))
    assert out["wmd"][1] == 0.0 and out["wms"][1] == 1.0  # the same words in another order
    assert out["wms"][2] == 0.0 and math.isnan(out["wmd"][2])  # no word: nothing to move


def test_sms_on_minilm_matches_the_table(table) -> None:
    """By default the authors' words: alphabetic, not NLTK stop words, lower-cased ("The",
    "are" and "." go); ``tokens="all"`` keeps every word."""
    tokenizer, vector = table
    words = ("cats", "sleep", ".", "dogs", "bark", "the", "are")
    assert all(len(tokenizer.tokenize(w)) == 1 for w in words)
    first = np.mean([vector(w) for w in ("cats", "sleep")], axis=0)
    second = np.mean([vector(w) for w in ("dogs", "bark", "bark")], axis=0)
    # the reference is the second sentence: the first (2 of 5 words) moves onto it
    distance = 2 / 5 * float(np.linalg.norm(first - second))
    out = _scores("sms", ["The cats sleep. Dogs are bark bark."], ["Dogs bark bark."])
    assert out["sms"][0] == pytest.approx(math.exp(-distance))
    swapped = _scores("sms", ["Dogs bark bark. Cats sleep."], ["Cats sleep. Dogs bark bark."])
    assert swapped["sms"][0] == pytest.approx(1.0) and swapped["s_wms"][0] == pytest.approx(1.0)
    assert out["s_wms"][0] < 1.0
    every = score_rows(get_scorer("sms", model_type="minilm", tokens="all"),
                       ["Cats sleep. Dogs bark bark."], ["Dogs bark bark."], cache=None)
    first = np.mean([vector(w) for w in ("cats", "sleep", ".")], axis=0)
    second = np.mean([vector(w) for w in ("dogs", "bark", "bark", ".")], axis=0)
    assert every["sms"][0] == pytest.approx(math.exp(-3 / 7 * float(np.linalg.norm(first - second))))


# -- a word table in sentence-transformers' layout (GloVe's, the default) ----------------------


def _word_table(folder, vocab: list[str], rows: list[list[float]], lower: bool = True) -> None:
    """A tiny table in the layout of sentence-transformers' GloVe models."""
    import json

    import torch
    from safetensors.torch import save_file

    table = folder / "0_WordEmbeddings"
    table.mkdir(parents=True)
    (table / "whitespacetokenizer_config.json").write_text(
        json.dumps({"vocab": vocab, "stop_words": [], "do_lower_case": lower}), encoding="utf-8")
    save_file({"emb_layer.weight": torch.tensor(rows, dtype=torch.float32)},
              str(table / "model.safetensors"))


def test_word_table_words_by_hand(tmp_path) -> None:
    _word_table(tmp_path, ["PADDING_TOKEN", "cats", "sleep", "."],
                [[0.0, 0.0], [1.0, 0.0], [0.0, 2.0], [1.0, 1.0]])
    words = WordVectors(str(tmp_path)).words(["Cats sleep.", "Cats purr"])
    assert words["Cats sleep."].words == ("Cats", "sleep", ".")
    assert words["Cats sleep."].vectors.tolist() == [[1.0, 0.0], [0.0, 2.0], [1.0, 1.0]]
    # "purr" is not in the table: the mean of all rows, (0.5, 0.75)
    assert words["Cats purr"].vectors.tolist() == [[1.0, 0.0], [0.5, 0.75]]
    assert DEFAULT_MODEL == "sentence-transformers/average_word_embeddings_glove.6B.300d"


def test_word_table_scores_as_the_formulas(tmp_path) -> None:
    _word_table(tmp_path, ["PADDING_TOKEN", "cats", "sleep", "dogs"],
                [[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [3.0, 4.0]])
    scorer = get_scorer("wmd", model_type=str(tmp_path))
    out = score_rows(scorer, ["cats cats sleep"], ["dogs"], cache=None)
    # 2/3 of the mass from (1, 0) and 1/3 from (0, 1) to (3, 4)
    expected = 2 / 3 * math.hypot(2, 4) + 1 / 3 * math.hypot(3, 3)
    assert out["wmd"][0] == pytest.approx(expected)
    average = score_rows(get_scorer("embedding_average", model_type=str(tmp_path)),
                         ["cats sleep"], ["dogs"], cache=None)["embedding_average"][0]
    assert average == pytest.approx((0.5 * 3 + 0.5 * 4) / (math.sqrt(0.5) * 5))
