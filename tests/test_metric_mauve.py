"""MAUVE module: parity with mauve-text on features computed here, on real WikiText texts with
the real offline MiniLM encoder and SmolLM2 causal LM; sanity of the score (identical sets,
degenerate sets), determinism, batch-independent features, the feature cache, and bad input."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest
import torch

from blindspot.models import ModelNotAvailableError, resolve_model
from blindspot.scorers import mauve_score
from blindspot.scorers.mauve_score import Mauve, feature_kind, mauve_sets
from conftest import SHARED_DATA

MODULE = str(Path(__file__).resolve().parents[1] / "metrics" / "mauve_score")
PAPER = {"mauve_scaling_factor": 5, "kmeans_max_iter": 500, "num_buckets": "auto", "seed": 25}
#: short truncation keeps the forward passes cheap; the code path is the same at any length
LENGTHS = {"minilm": 64, "smollm2": 20}


def wikitext(n: int) -> tuple[list[str], list[str]]:
    """The first ``n`` gold hypotheses and ``n`` references of the shared WikiText set."""
    golds, refs = [], []
    with open(SHARED_DATA / "wikitext103_open_ended.jsonl", encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            golds.append(row["gold"])
            refs.append(row["reference"])
            if len(golds) == n:
                break
    return golds, refs


@pytest.fixture(scope="module")
def texts() -> tuple[list[str], list[str]]:
    return wikitext(40)


@pytest.fixture(scope="module")
def metric():
    import evaluate

    return evaluate.load(MODULE)


def direct_features(name: str, texts: list[str], max_length: int) -> np.ndarray:
    """mauve-text's featurization written out: AutoModel on chunks of 20 texts in their given
    order, padded on the right with 0 under an attention mask, the last layer's state read at
    each text's last token (special tokens as the tokenizer adds them, cut at max_length)."""
    from transformers import AutoModel, AutoTokenizer

    path = resolve_model(name)
    tokenizer = AutoTokenizer.from_pretrained(path)
    model = AutoModel.from_pretrained(path).eval()
    rows = []
    for start in range(0, len(texts), 20):
        encoded = [torch.tensor(tokenizer(text, truncation=True, max_length=max_length)["input_ids"])
                   for text in texts[start: start + 20]]
        ids = torch.nn.utils.rnn.pad_sequence(encoded, batch_first=True, padding_value=0)
        mask = torch.nn.utils.rnn.pad_sequence([torch.ones(len(e), dtype=torch.long)
                                                for e in encoded], batch_first=True)
        with torch.no_grad():
            out = model(input_ids=ids, attention_mask=mask, output_hidden_states=True)
        last = out.hidden_states[-1]
        rows.extend(last[b, len(e) - 1].numpy() for b, e in enumerate(encoded))
    return np.stack(rows).astype(np.float32)


@pytest.mark.parametrize("name", ["minilm", "smollm2"])
def test_parity_with_mauve_text_on_the_same_features(name, texts, metric):
    import mauve

    golds, refs = texts
    length = LENGTHS[name]
    q, p = direct_features(name, golds, length), direct_features(name, refs, length)
    scorer = Mauve(feature_model=name, max_text_length=length, feature_cache=None)
    assert scorer.feature_kind == ("encoder" if name == "minilm" else "causal")
    ours = np.stack(scorer.text_features(golds + refs))
    np.testing.assert_allclose(ours, np.concatenate([q, p]), rtol=1e-4, atol=1e-4)

    expected = mauve.compute_mauve(p_features=p, q_features=q, **PAPER)
    assert expected.num_buckets == 4  # n/10 clusters for 40 + 40 texts
    out = metric.compute(predictions=golds, references=refs, feature_model=name,
                         max_text_length=length)
    assert out["mauve"] == pytest.approx(expected.mauve, abs=1e-9)
    assert out["mauve_star"] == pytest.approx(expected.mauve_star, abs=1e-9)
    assert out["frontier_integral"] == pytest.approx(expected.frontier_integral, abs=1e-9)
    assert out["num_buckets"] == 4
    # the same sets through the unpaired entry point
    assert mauve_sets(golds, refs, feature_model=name, max_text_length=length,
                      cache=None)["mauve"] == pytest.approx(expected.mauve, abs=1e-9)


def test_identical_sets_score_one_and_a_degenerate_set_scores_lower(texts, metric):
    golds, refs = texts
    options = {"feature_model": "minilm", "max_text_length": LENGTHS["minilm"]}
    same = metric.compute(predictions=golds, references=golds, **options)
    assert same["mauve"] == pytest.approx(1.0, abs=1e-9)
    assert same["frontier_integral"] == pytest.approx(0.0, abs=1e-12)
    gold = metric.compute(predictions=golds, references=refs, **options)
    degenerate = [" ".join(["the"] * (3 + i)) for i in range(40)]
    bad = metric.compute(predictions=degenerate, references=refs, **options)
    assert bad["mauve"] < 0.2 < 0.8 < gold["mauve"]


def test_same_seed_same_score_and_unpaired_sets(texts, metric):
    golds, refs = texts
    scorer = Mauve(feature_model="minilm", max_text_length=LENGTHS["minilm"])
    first, second = scorer.score_sets(golds, refs[:25]), scorer.score_sets(golds, refs[:25])
    assert first == second
    assert first["num_buckets"] == 2  # round(min(40, 25) / 10) = 2
    out = metric.compute(predictions=golds, reference_set=refs[:25],
                         feature_model="minilm", max_text_length=LENGTHS["minilm"])
    assert out == pytest.approx(first, abs=1e-12)
    # several references per row: all of them, row by row, form the reference set
    paired = metric.compute(predictions=golds[:20],
                            references=[[refs[i], refs[i + 20]] for i in range(20)],
                            feature_model="minilm", max_text_length=LENGTHS["minilm"])
    flat = [ref for i in range(20) for ref in (refs[i], refs[i + 20])]
    assert paired == pytest.approx(scorer.score_sets(golds[:20], flat), abs=1e-12)


@pytest.mark.parametrize("name", ["minilm", "smollm2"])
def test_features_do_not_depend_on_the_batch(name):
    golds, _ = wikitext(6)
    texts = ["A short one.", golds[0], "Two words", golds[1][:80], "x", golds[2]]
    single = Mauve(feature_model=name, max_text_length=48, batch_size=1, feature_cache=None)
    batched = Mauve(feature_model=name, max_text_length=48, batch_size=6, feature_cache=None)
    np.testing.assert_allclose(np.stack(batched.text_features(texts)),
                               np.stack(single.text_features(texts)), rtol=1e-4, atol=1e-4)


def test_feature_cache_serves_seen_texts_without_the_model(tmp_path, texts, monkeypatch):
    golds, refs = texts
    golds, refs = golds[:20], refs[:20]
    options = {"feature_model": "minilm", "max_text_length": 32,
               "feature_cache": tmp_path / "features.sqlite"}
    cold = Mauve(**options).score_sets(golds, refs)
    assert len(mauve_score.feature_cache_at(tmp_path / "features.sqlite")) == len(set(golds + refs))

    def no_model(*args, **kwargs):
        raise AssertionError("features were recomputed")

    monkeypatch.setattr(mauve_score, "load_feature_model", no_model)
    assert Mauve(**options).score_sets(golds, refs) == cold
    with pytest.raises(AssertionError, match="recomputed"):  # another length, other features
        Mauve(**{**options, "max_text_length": 33}).score_sets(golds, refs)


def tiny_gpt2(folder: Path) -> str:
    """A randomly initialised 2-layer GPT-2 with a word-level tokenizer that adds no special
    tokens (so the empty string has no token, as under GPT-2's own tokenizer), 16 positions."""
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers
    from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

    words = Tokenizer(models.WordLevel(unk_token="<unk>"))
    words.pre_tokenizer = pre_tokenizers.Whitespace()
    words.train_from_iterator(["the cat sat on a mat and ran away"],
                              trainers.WordLevelTrainer(special_tokens=["<unk>", "<eos>"]))
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=words, unk_token="<unk>",
                                        eos_token="<eos>")
    torch.manual_seed(0)
    config = GPT2Config(vocab_size=words.get_vocab_size(), n_embd=16, n_layer=2, n_head=2,
                        n_positions=16)
    GPT2LMHeadModel(config).eval().save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return str(folder)


def test_gpt2_style_model_empty_texts_and_truncation(tmp_path):
    path = tiny_gpt2(tmp_path / "gpt2")
    scorer = Mauve(feature_model=path, feature_cache=None)
    assert scorer.feature_kind == "causal"
    long_text = " ".join(["the cat sat on a mat"] * 20)  # 120 tokens > 16 positions: cut
    hyps = ["", "the cat sat", "a mat", "the cat ran away", long_text, "ran away"]
    refs = ["the mat", "a cat sat on the mat", "the cat", "", "on a mat", "cat ran"]
    features = scorer.text_features(hyps)
    assert features[0].size == 0 and all(f.shape == (16,) for f in features[1:])
    with pytest.warns(UserWarning) as record:
        out = scorer.score_sets(hyps, refs)
    assert sorted(str(w.message) for w in record) == [
        f"mauve: 1 of the 6 {name} have no tokens and are left out of the set"
        for name in ("predictions", "references")]
    assert 0 < out["mauve"] <= 1 + 1e-9
    with pytest.raises(ValueError, match="predictions: no text has any token"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            scorer.score_sets(["", ""], refs)


def test_feature_kind_from_config():
    from transformers import BartConfig, BertConfig, GPT2Config, LlamaConfig

    assert feature_kind(GPT2Config(architectures=["GPT2LMHeadModel"])) == "causal"
    assert feature_kind(LlamaConfig(architectures=["LlamaForCausalLM"])) == "causal"
    assert feature_kind(BertConfig(architectures=["BertModel"])) == "encoder"
    with pytest.raises(ValueError, match="encoder-decoder"):
        feature_kind(BartConfig())


def test_bad_input_gives_clear_errors(texts, metric):
    golds, refs = texts
    options = {"feature_model": "minilm", "max_text_length": 32}
    with pytest.raises(ValueError, match="predictions is empty"):
        metric.compute(predictions=[], references=[], **options)
    with pytest.raises(ValueError, match="references is empty"):
        mauve_sets(golds[:3], [], cache=None, **options)
    with pytest.raises(ValueError, match="one item per prediction|Mismatch"):
        metric.compute(predictions=golds[:3], references=refs[:2], **options)
    with pytest.raises(ValueError, match="not both"):
        metric.compute(predictions=golds[:3], references=refs[:3], reference_set=refs, **options)
    with pytest.raises(ValueError, match=r"references\[1\] must be a string"):
        mauve_sets(golds[:3], ["a", None], cache=None, **options)
    with pytest.raises(ModelNotAvailableError, match="minilm"):
        Mauve(feature_model="no-such-org/no-such-model")
    with pytest.raises(ValueError, match="metric 'mauve' has no option 'kmeans_iters'"):
        Mauve(feature_model="minilm", kmeans_iters=10)
    with pytest.raises(ValueError, match="num_buckets"):
        Mauve(feature_model="minilm", num_buckets=1)
    with pytest.raises(ValueError, match="corpus-level"):
        Mauve(feature_model="minilm").score_batch([])
    # empty strings are texts like any other for an encoder that adds [CLS] [SEP]
    out = metric.compute(predictions=["", "A sentence.", ""] + golds[:7],
                         references=refs[:10], **options)
    assert 0 < out["mauve"] <= 1 + 1e-9
