"""BERT-diverge with a tiny randomly initialised masked LM (no real one exists offline).

The model's weights are random, so the tests assert only what holds for any weights: the output is
a function of (text, level, seed), at most ceil(r * n) words change, every new word is one of the
model's top-10 at its step, and rows do not depend on the batch.
"""

from __future__ import annotations

import math
import pickle
import random
from itertools import islice

import pytest
import torch

from blindspot.perturbations import REGISTRY, Row, get_perturbation
from blindspot.perturbations.bert_diverge import Predictor, context_of, mask_single_subword, standalone_word

TEXTS = [
    "The biker still attempted to evade the car, however, brushed against the car at the rear end.",
    "A security service monitors the curfew in the city and reports to the mayor every day.",
    "Greens and SPD blamed the State government for shared responsibility in the crisis.",
]


@pytest.fixture(scope="module", autouse=True)
def one_torch_thread():
    """The tiny model runs much faster on one thread (no thread-pool hand-offs on a busy CPU)."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="module")
def tiny_mlm(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A 2-layer BERT masked LM with random weights and MiniLM's real tokenizer, in a folder."""
    from blindspot.tiny_models import tiny_masked_lm

    return tiny_masked_lm(tmp_path_factory.mktemp("tiny-bert-mlm"), seed=1234)


@pytest.fixture(scope="module")
def diverge(tiny_mlm: str):
    return get_perturbation("bert_diverge", mlm=tiny_mlm)


def _changed(gold: str, noised: str) -> list[int]:
    """Indices of the whitespace words that differ (the word count never changes)."""
    old, new = gold.split(), noised.split()
    assert len(old) == len(new)
    return [i for i, (a, b) in enumerate(zip(old, new, strict=True)) if a != b]


def test_catalogue_entry() -> None:
    cls = REGISTRY["bert_diverge"]
    assert cls.category == "consistency" and "mlm" in cls.info()["needs"]
    assert cls.levels["summarization"] == cls.levels["translation"] == (0.1, 0.2, 0.3, 0.4)
    assert cls.levels["translation_paragraph"] == (0.15, 0.3, 0.45, 0.6)
    assert not cls.levels.get("open_ended")
    with pytest.raises(ValueError, match="needs mlm"):
        get_perturbation("bert-diverge")


def test_model_in_eval_mode(diverge) -> None:
    assert diverge.predictor.model.training is False


def test_deterministic_for_a_seed(diverge, tiny_mlm: str) -> None:
    again = get_perturbation("bert_diverge", mlm=tiny_mlm)
    for text in TEXTS:
        assert diverge.apply(text, 0.4, seed=5) == again.apply(text, 0.4, seed=5)


def test_seeds_differ(diverge) -> None:
    one = [diverge.apply(t, 0.4, seed=1).perturbed for t in TEXTS]
    two = [diverge.apply(t, 0.4, seed=2).perturbed for t in TEXTS]
    assert one != two


@pytest.mark.parametrize("ratio", [0.15, 0.6])
def test_at_most_ceil_r_n_words_change(diverge, ratio: float) -> None:
    for seed in (1, 2):
        for text in TEXTS:
            result = diverge.apply(text, ratio, seed=seed)
            changed = _changed(text, result.perturbed)
            assert len(changed) <= math.ceil(ratio * len(text.split()))
            assert result.applied == bool(changed)


def test_words_with_several_subwords_never_change(diverge) -> None:
    text = "The cat sat on the mat. Then it slept, happily."
    out = diverge.apply(text, 1.0, seed=3).perturbed
    for index in (5, 8, 9):  # "mat." "slept," "happily." are two subwords each
        assert out.split()[index] == text.split()[index]
    assert _changed(text, out)


def test_whitespace_between_words_is_kept(diverge) -> None:
    text = "The  cat sat\non the\tmat and the dog ran"
    out = diverge.apply(text, 1.0, seed=1).perturbed
    assert [c for c in out if c.isspace()] == [c for c in text if c.isspace()]


def test_one_step_samples_from_the_models_top_10(diverge, tiny_mlm: str) -> None:
    text = "the cat sat on the mat and the dog ran to the park"
    words = text.split()
    ratio = 0.05  # ceil(0.05 * 13) = 1 word
    tokenizer, model = diverge.predictor.tokenizer, diverge.predictor.model
    for seed in range(4):
        rng = random.Random(seed)
        position = random.Random(seed).sample(range(len(words)), 1)[0]
        out = diverge.perturb(Row(text, "row"), ratio, rng).split()
        # the model's own logits at the masked word, with the full forward pass
        encoded = tokenizer(text, return_offsets_mapping=True)
        start = len(" ".join(words[:position])) + (1 if position else 0)
        index = next(i for i, (s, e) in enumerate(encoded["offset_mapping"])
                     if e > s and s == start)
        ids = list(encoded["input_ids"])
        ids[index] = tokenizer.mask_token_id
        with torch.no_grad():
            logits = model(input_ids=torch.tensor([ids])).logits[0, index]
        banned, size = set(tokenizer.all_special_ids), len(tokenizer)
        ranked = torch.argsort(logits, descending=True).tolist()
        words_ranked = (standalone_word(tokenizer, i, banned, size) for i in ranked)
        top10 = list(islice(filter(None, words_ranked), 10))
        assert out[position] in top10
        assert out[:position] + out[position + 1:] == words[:position] + words[position + 1:]


def test_rows_do_not_depend_on_the_batch(diverge) -> None:
    ids = ["a", "b", "c"]
    full = diverge.apply_rows(TEXTS, ids, 0.3, seed=2)
    part = diverge.apply_rows([TEXTS[2], TEXTS[0]], ["c", "a"], 0.3, seed=2)
    assert part["perturbed"] == [full["perturbed"][2], full["perturbed"][0]]


def test_torch_global_generator_is_left_alone(diverge) -> None:
    torch.manual_seed(0)
    first = diverge.apply(TEXTS[0], 0.4, seed=1).perturbed
    after = torch.rand(3)
    torch.manual_seed(99)
    assert diverge.apply(TEXTS[0], 0.4, seed=1).perturbed == first
    torch.manual_seed(0)
    assert torch.equal(torch.rand(3), after)


def test_pickles_without_the_model(diverge) -> None:
    blob = pickle.dumps(diverge)
    assert len(blob) < 100_000
    copy = pickle.loads(blob)
    assert copy.apply(TEXTS[1], 0.2, seed=4) == diverge.apply(TEXTS[1], 0.2, seed=4)


def test_long_text_is_cropped_around_the_mask(diverge) -> None:
    predictor: Predictor = diverge.predictor
    words = ("one two three four five six seven eight nine ten " * 120).split()
    context, span = context_of(words, 700, predictor.max_tokens)
    masked = mask_single_subword(predictor.tokenizer, context, span, predictor.max_tokens)
    assert masked is not None and len(masked.input_ids) == predictor.max_tokens
    assert masked.input_ids[masked.mask_index] == predictor.tokenizer.mask_token_id
    long_text = " ".join(words)
    assert len(_changed(long_text, diverge.apply(long_text, 0.005, seed=1).perturbed)) <= 6


@pytest.mark.parametrize("text", ["Word", "😀 🎉 👍🏽", "名前は田中です。", "[MASK] [SEP] <s>",
                                  "a\u0301\u200b b"])
def test_odd_texts(diverge, text: str) -> None:
    result = diverge.apply(text, 0.6, seed=1)
    assert isinstance(result.perturbed, str)
    assert result.applied == (result.perturbed != text)


def test_same_output_in_forked_map_workers(diverge, tiny_mlm: str) -> None:
    """``Dataset.map(num_proc=2)`` forks after the parent used torch; the workers must not hang."""
    import datasets

    from blindspot.perturbations.dataset import perturb_dataset

    diverge.apply(TEXTS[0], 0.1)  # the parent has run the model before it forks
    ds = datasets.Dataset.from_dict({"id": [1, 2, 3, 4], "gold": TEXTS + [TEXTS[0]]})
    one = perturb_dataset(ds, "bert_diverge", 0.4, seed=2, mlm=tiny_mlm)
    two = perturb_dataset(ds, "bert_diverge", 0.4, seed=2, mlm=tiny_mlm, num_proc=2, batch_size=2)
    assert one.to_dict() == two.to_dict()


def test_same_suite_in_forked_workers_after_the_parent_ran_the_model(diverge, tiny_mlm: str
                                                                      ) -> None:
    """``run_suite(num_proc=2)`` forks its workers after the parent ran the masked LM."""
    import datasets

    from blindspot.perturbations.dataset import run_suite

    diverge.apply(TEXTS[0], 0.1)
    ds = datasets.Dataset.from_dict({"id": [1, 2, 3], "gold": TEXTS})
    kwargs = dict(seeds=[1, 2], levels={"bert_diverge": [0.2, 0.4]}, resources={"mlm": tiny_mlm},
                  progress=False)
    one, plan = run_suite(ds, "bert_diverge", "summarization", **kwargs)
    two, _ = run_suite(ds, "bert_diverge", "summarization", num_proc=2, **kwargs)
    assert len(plan.items) == 4 and one.to_dict() == two.to_dict()
    assert any(one["applied"])
