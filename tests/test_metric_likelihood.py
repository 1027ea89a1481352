"""The likelihood metrics: GPT-PPL, MLM-PPL and BARTScore.

GPT-PPL runs on the real SmolLM2 and equals a per-text transformers computation written here.
No masked LM or seq2seq model exists offline, so MLM-PPL and seq2seq BARTScore run on tiny
randomly initialised models built here, and the assertions hold for any weights: parity with an
explicit computation, F = mean(P, R), which input each variant reads.
"""

from __future__ import annotations

import functools
import json
import math
import random
from pathlib import Path
from typing import Any

import evaluate
import pytest
import torch
from conftest import SHARED_DATA
from engine_support import cnndm_rows

from blindspot.models import ModelNotAvailableError, load_causal_lm, resolve_model
from blindspot.scoring.engine import score_rows
from blindspot.scoring.scorer import get_scorer

REL = 1e-4
PROMPT_AFTER = "\nIn other words:\n"


def wikitext_golds(n: int, words: int = 40) -> list[str]:
    """The first ``n`` WikiText golds, each cut to its first ``words`` words (SmolLM2 on CPU)."""
    out = []
    with open(SHARED_DATA / "wikitext103_open_ended.jsonl", encoding="utf-8") as fh:
        for line in fh:
            out.append(" ".join(json.loads(line)["gold"].split()[:words]))
            if len(out) == n:
                break
    return out


def close(a: float, b: float, rel: float = REL) -> bool:
    return math.isclose(a, b, rel_tol=rel, abs_tol=1e-9)


# -- GPT-PPL on the real SmolLM2 -----------------------------------------------------------------

def direct_negated_ppl(text: str, max_tokens: int | None = None) -> float:
    """-exp(loss) of one text alone: SmolLM2's tokenizer puts its BOS first by itself."""
    tokenizer, model = load_causal_lm("smollm2")
    ids = tokenizer(text, return_tensors="pt").input_ids[:, :max_tokens]
    with torch.no_grad():
        loss = model(input_ids=ids, labels=ids).loss
    return -math.exp(float(loss))


@pytest.fixture(scope="module")
def golds() -> list[str]:
    return wikitext_golds(8, words=40)


@pytest.fixture(scope="module")
def gpt_batched(golds: list[str]) -> list[float]:
    return score_rows(get_scorer("gpt_ppl", model="smollm2"), golds, cache=None,
                      batch_size=8)["gpt_ppl"]


def test_smollm2_tokenizer_starts_with_bos() -> None:
    tokenizer, _ = load_causal_lm("smollm2")
    assert tokenizer("Hello").input_ids[0] == tokenizer.bos_token_id


def test_gpt_ppl_equals_direct_transformers(golds, gpt_batched) -> None:
    direct = [direct_negated_ppl(text) for text in golds]
    for ours, theirs in zip(gpt_batched, direct, strict=True):
        assert close(ours, theirs), (ours, theirs)
    assert all(score < -1 for score in gpt_batched)


def test_gpt_ppl_batching_and_order_do_not_change_scores(golds, gpt_batched) -> None:
    # the parity test above compares batches of 8 with texts scored alone; here other
    # batch compositions (different neighbours, different padding) give the same scores
    scorer = get_scorer("gpt_ppl", model="smollm2")
    reordered = score_rows(scorer, golds[::-1], cache=None, batch_size=3)["gpt_ppl"][::-1]
    for a, b in zip(gpt_batched, reordered, strict=True):
        assert close(a, b, 1e-5)


def test_gpt_ppl_fluent_beats_scrambled_through_the_module(golds) -> None:
    texts = golds[:2]
    rng = random.Random(0)
    scrambled = [" ".join(rng.sample(t.split(), len(t.split()))) for t in texts]
    module = evaluate.load("metrics/gpt_ppl")
    out = module.compute(predictions=texts + scrambled, model="smollm2", use_aggregator=False)
    fluent, broken = out["gpt_ppl"][:2], out["gpt_ppl"][2:]
    assert all(f > b for f, b in zip(fluent, broken, strict=True)), (fluent, broken)


def test_gpt_ppl_truncates_to_max_length_and_empty_is_nan() -> None:
    text = "The quick brown fox jumps over the lazy dog."
    out = score_rows(get_scorer("gpt_ppl", model="smollm2", max_length=5), [text, ""],
                     cache=None)["gpt_ppl"]
    assert close(out[0], direct_negated_ppl(text, max_tokens=5))
    assert math.isnan(out[1])


def test_prefix_token_is_bos_else_eos_else_none() -> None:
    from types import SimpleNamespace

    from blindspot.scorers._lm_utils import prefix_token_id

    assert prefix_token_id(SimpleNamespace(bos_token_id=1, eos_token_id=2)) == 1
    assert prefix_token_id(SimpleNamespace(bos_token_id=None, eos_token_id=50256)) == 50256  # GPT-2
    assert prefix_token_id(SimpleNamespace(bos_token_id=None, eos_token_id=None)) is None


# -- MLM-PPL on tiny random masked LMs -----------------------------------------------------------

def build_mlm(folder: Path, arch: str) -> str:
    """A randomly initialised 2-layer masked LM of ``arch`` with MiniLM's real tokenizer."""
    from transformers import (
        AutoTokenizer,
        BertConfig,
        BertForMaskedLM,
        DistilBertConfig,
        DistilBertForMaskedLM,
        ElectraConfig,
        ElectraForMaskedLM,
        RobertaConfig,
        RobertaForMaskedLM,
    )

    tokenizer = AutoTokenizer.from_pretrained(resolve_model("minilm"))
    size = dict(vocab_size=tokenizer.vocab_size, pad_token_id=tokenizer.pad_token_id)
    layers = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                  intermediate_size=64, max_position_embeddings=520)
    torch.manual_seed(0)
    model = {
        "bert": lambda: BertForMaskedLM(BertConfig(**size, **layers)),
        "roberta": lambda: RobertaForMaskedLM(RobertaConfig(**size, **layers)),
        "electra": lambda: ElectraForMaskedLM(ElectraConfig(**size, **layers, embedding_size=16)),
        "distilbert": lambda: DistilBertForMaskedLM(DistilBertConfig(
            **size, dim=32, n_layers=2, n_heads=2, hidden_dim=64)),
    }[arch]()
    model.eval().save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return str(folder)


def explicit_pseudo_ppl(tokenizer: Any, model: Any, text: str, max_length: int = 512) -> float:
    """One mask at a time, one forward pass per token, over the non-special tokens."""
    ids = tokenizer(text, truncation=True, max_length=max_length, return_tensors="pt").input_ids
    total = 0.0
    positions = range(1, ids.shape[1] - 1)  # between [CLS] and [SEP]
    for pos in positions:
        masked = ids.clone()
        masked[0, pos] = tokenizer.mask_token_id
        with torch.no_grad():
            logits = model(input_ids=masked).logits
        total += float(torch.log_softmax(logits[0, pos], dim=-1)[ids[0, pos]])
    return -math.exp(-total / len(positions))


@pytest.fixture(scope="module")
def mlm_texts() -> list[str]:
    return wikitext_golds(2, words=12) + ["A short one."]


@pytest.mark.parametrize("arch", ["bert", "roberta", "electra", "distilbert"])
def test_mlm_ppl_equals_one_mask_at_a_time(arch, mlm_texts, tmp_path) -> None:
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    folder = build_mlm(tmp_path / arch, arch)
    tokenizer = AutoTokenizer.from_pretrained(folder)
    model = AutoModelForMaskedLM.from_pretrained(folder).eval()
    explicit = [explicit_pseudo_ppl(tokenizer, model, text) for text in mlm_texts]
    for mask_batch_size in (64, 7):  # 7: chunks cut across texts
        ours = score_rows(get_scorer("mlm_ppl", model=folder, mask_batch_size=mask_batch_size),
                          mlm_texts, cache=None)["mlm_ppl"]
        for a, b in zip(ours, explicit, strict=True):
            assert close(a, b, 1e-5), (arch, mask_batch_size, a, b)


def test_mlm_ppl_masks_in_few_passes_and_leaves_no_hook(tmp_path, mlm_texts) -> None:
    from blindspot.models import load_masked_lm

    folder = build_mlm(tmp_path / "bert", "bert")
    tokenizer, model = load_masked_lm(folder)
    copies = sum(len(tokenizer(t).input_ids) - 2 for t in mlm_texts)
    calls = []
    handle = model.register_forward_hook(lambda *args: calls.append(1))
    try:
        score_rows(get_scorer("mlm_ppl", model=folder, mask_batch_size=64), mlm_texts,
                   cache=None, batch_size=8)
    finally:
        handle.remove()
    assert len(calls) == math.ceil(copies / 64)
    assert not model.base_model._forward_hooks
    out = score_rows(get_scorer("mlm_ppl", model=folder), ["", "word"], cache=None)["mlm_ppl"]
    assert math.isnan(out[0]) and out[1] <= -1
    cut = score_rows(get_scorer("mlm_ppl", model=folder, max_length=6), mlm_texts[:1],
                     cache=None)["mlm_ppl"][0]
    assert close(cut, explicit_pseudo_ppl(tokenizer, model, mlm_texts[0], max_length=6), 1e-5)


# -- BARTScore on tiny random seq2seq models -----------------------------------------------------

def build_seq2seq(folder: Path, arch: str) -> str:
    from transformers import (
        AutoTokenizer,
        BartConfig,
        BartForConditionalGeneration,
        T5Config,
        T5ForConditionalGeneration,
    )

    tokenizer = AutoTokenizer.from_pretrained(resolve_model("minilm"))
    ids = dict(vocab_size=tokenizer.vocab_size, pad_token_id=tokenizer.pad_token_id,
               eos_token_id=tokenizer.sep_token_id)
    torch.manual_seed(0)
    if arch == "bart":
        model = BartForConditionalGeneration(BartConfig(
            **ids, bos_token_id=tokenizer.cls_token_id, decoder_start_token_id=tokenizer.sep_token_id,
            d_model=32, encoder_layers=1, decoder_layers=1, encoder_attention_heads=2,
            decoder_attention_heads=2, encoder_ffn_dim=64, decoder_ffn_dim=64,
            max_position_embeddings=512))
    else:
        model = T5ForConditionalGeneration(T5Config(
            **ids, decoder_start_token_id=tokenizer.pad_token_id, d_model=32, d_kv=16, d_ff=64,
            num_layers=1, num_heads=2))
    model.eval().save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return str(folder)


@functools.lru_cache(maxsize=4)
def plain_seq2seq(folder: str) -> tuple[Any, Any]:
    """The test's own copy of a seq2seq model, loaded with transformers directly."""
    from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

    return (AutoTokenizer.from_pretrained(folder),
            AutoModelForSeq2SeqLM.from_pretrained(folder).eval())


def direct_bartscore(folder: str, source: str, target: str) -> float:
    """-loss of the model on one (source, target) pair: the mean target-token log-likelihood."""
    tokenizer, model = plain_seq2seq(folder)
    src = tokenizer(source, truncation=True, max_length=512, return_tensors="pt").input_ids
    tgt = tokenizer(target, truncation=True, max_length=512, return_tensors="pt").input_ids
    with torch.no_grad():
        return -float(model(input_ids=src, labels=tgt).loss)


@pytest.fixture(scope="module")
def summaries() -> list[dict]:
    return [{"hyp": r["gold"], "refs": r["references"][:2], "src": r["source"]}
            for r in cnndm_rows(3)]


@pytest.mark.parametrize("arch", ["bart", "t5"])
def test_bartscore_equals_direct_mean_loglikelihood(arch, summaries, tmp_path) -> None:
    folder = build_seq2seq(tmp_path / arch, arch)
    hyps = [s["hyp"] for s in summaries]
    refs = [s["refs"] for s in summaries]
    srcs = [s["src"] for s in summaries]
    out = score_rows(get_scorer("bartscore", model=folder), hyps, refs, srcs, cache=None)
    best = score_rows(get_scorer("bartscore", model=folder, multi_ref="max"), hyps, refs, srcs,
                      cache=None, batch_size=1)
    for i, row in enumerate(summaries):
        p = [direct_bartscore(folder, r, row["hyp"]) for r in row["refs"]]
        r = [direct_bartscore(folder, row["hyp"], ref) for ref in row["refs"]]
        assert close(out["precision"][i], sum(p) / len(p))
        assert close(out["recall"][i], sum(r) / len(r))
        assert out["f"][i] == pytest.approx((out["precision"][i] + out["recall"][i]) / 2,
                                            rel=1e-12)
        assert close(out["faithfulness"][i], direct_bartscore(folder, row["src"], row["hyp"]))
        assert close(best["precision"][i], max(p)) and close(best["recall"][i], max(r))
        assert close(best["f"][i], (max(p) + max(r)) / 2)
        assert close(best["faithfulness"][i], out["faithfulness"][i], 1e-5)


def test_bartscore_faithfulness_reads_the_source_only(summaries, tmp_path) -> None:
    folder = build_seq2seq(tmp_path / "bart", "bart")
    row = summaries[0]
    scorer = get_scorer("bartscore", model=folder)
    with_src = score_rows(scorer, [row["hyp"]], [row["refs"]], [row["src"]], cache=None)
    other_src = score_rows(scorer, [row["hyp"]], [row["refs"]], [summaries[1]["src"]], cache=None)
    no_src = score_rows(scorer, [row["hyp"]], [row["refs"]], cache=None)
    only_src = score_rows(scorer, [row["hyp"]], sources=[row["src"]], cache=None)
    assert with_src["faithfulness"] != other_src["faithfulness"]
    for key in ("precision", "recall", "f"):
        assert with_src[key] == other_src[key] == no_src[key]
        assert math.isnan(only_src[key][0])
    assert math.isnan(no_src["faithfulness"][0])
    assert only_src["faithfulness"] == with_src["faithfulness"]


def direct_causal_bartscore(context: str, text: str) -> float:
    """mean log p(text | BOS + context + prompt) on SmolLM2, every part tokenized on its own."""
    tokenizer, model = load_causal_lm("smollm2")
    parts = [tokenizer(p, add_special_tokens=False).input_ids for p in (context, PROMPT_AFTER, text)]
    head = [tokenizer.bos_token_id] + parts[0] + parts[1]
    ids = torch.tensor([head + parts[2]])
    with torch.no_grad():
        logprobs = torch.log_softmax(model(input_ids=ids).logits[0], dim=-1)
    scored = [float(logprobs[t - 1, ids[0, t]]) for t in range(len(head), ids.shape[1])]
    return sum(scored) / len(scored)


def test_causal_sequence_cuts_the_context_first_then_the_text_by_hand() -> None:
    from blindspot.scorers.bartscore import causal_sequence

    context, after, text = list(range(10, 20)), [5, 5], list(range(20, 30))
    # room for 16 - 1 (BOS) - 2 (prompt) = 13 tokens: the text keeps max(13 - 10, 13 // 2) = 6
    ids, start = causal_sequence([1], [], context, after, text, limit=16)
    assert ids == [1, *range(10, 17), 5, 5, *range(20, 26)] and start == 10
    # short enough: nothing is cut
    ids, start = causal_sequence([1], [7], [10, 11], after, [20], limit=16)
    assert ids == [1, 7, 10, 11, 5, 5, 20] and start == 6


def test_causal_bartscore_on_smollm2_equals_direct_computation() -> None:
    hyp, ref, src = ("The cat sat on the mat.", "A cat was sitting on the mat.",
                     "Yesterday a grey cat sat on the kitchen mat all afternoon.")
    module = evaluate.load("metrics/bartscore")
    out = module.compute(predictions=[hyp], references=[[ref]], sources=[src],
                         model_kind="causal", model="smollm2", use_aggregator=False)
    assert close(out["precision"][0], direct_causal_bartscore(ref, hyp))
    assert close(out["recall"][0], direct_causal_bartscore(hyp, ref))
    assert close(out["faithfulness"][0], direct_causal_bartscore(src, hyp))
    assert out["f"][0] == pytest.approx((out["precision"][0] + out["recall"][0]) / 2, rel=1e-12)


# -- errors ----------------------------------------------------------------------------------------

def test_bad_input_errors_name_the_argument() -> None:
    gpt = evaluate.load("metrics/gpt_ppl")
    with pytest.raises(ValueError, match=r"predictions\[1\]"):
        gpt.compute(predictions=["fine", None], model="smollm2")
    with pytest.raises(ValueError, match="gpt_ppl' has no option 'modle'.*mean 'model'"):
        get_scorer("gpt_ppl", modle="smollm2")
    with pytest.raises(ValueError, match="mask_batch_size"):
        get_scorer("mlm_ppl", mask_batch_size=0)
    with pytest.raises(ValueError, match="model_kind"):
        get_scorer("bartscore", model_kind="encoder")
    with pytest.raises(ValueError, match="multi_ref"):
        get_scorer("bartscore", multi_ref="median")
    with pytest.raises(ValueError, match=r"\{context\}"):
        get_scorer("bartscore", model_kind="causal", prompt="no slot here")
    bart = evaluate.load("metrics/bartscore")
    with pytest.raises(ValueError, match="references=.*sources="):
        bart.compute(predictions=["a hypothesis"], model="smollm2", model_kind="causal")
    with pytest.raises(ValueError, match="references must have one item per prediction"):
        score_rows(get_scorer("bartscore", model="smollm2", model_kind="causal"), ["a", "b"],
                   [["r"]], cache=None)


def test_unavailable_models_fail_clearly(monkeypatch, tmp_path) -> None:
    with pytest.raises(ModelNotAvailableError, match="(?s)'no-such-model'.*'smollm2'"):
        score_rows(get_scorer("gpt_ppl", model="no-such-model"), ["text"], cache=None)
    with pytest.raises(ModelNotAvailableError, match="no-such-seq2seq"):
        score_rows(get_scorer("bartscore", model="no-such-seq2seq"), ["a"], ["b"], cache=None)
    with pytest.raises(ModelNotAvailableError, match="smollm2"):  # a causal LM is no MLM
        score_rows(get_scorer("mlm_ppl", model="smollm2"), ["text"], cache=None)
    # an offline short name that is not installed fails before anything is scored
    monkeypatch.setenv("BLINDSPOT_MODELS", str(tmp_path))
    with pytest.raises(ModelNotAvailableError, match="'smollm2' is not installed"):
        evaluate.load("metrics/gpt_ppl").compute(predictions=["text"], model="smollm2")


def test_a_checkpoint_without_the_trained_head_is_refused_in_one_line(tmp_path) -> None:
    """MiniLM is a sentence encoder: loaded as a masked LM or a classifier, transformers would
    initialise the head at random (BLANC scored 0.0 on every row). Every metric that reads a head
    refuses it, naming the model and the head; the CLI says so in one line and exits non-zero."""
    from typer.testing import CliRunner

    from blindspot.cli import app
    from blindspot.models import UntrainedHeadError, load_sequence_classifier
    from blindspot.tiny_models import minilm_masked_lm

    masked = r"^model 'minilm' has no trained masked-LM head: .*cls\.predictions\.bias"
    for metric in ("blanc", "mlm_ppl"):
        with pytest.raises(UntrainedHeadError, match=masked):
            score_rows(get_scorer(metric, model="minilm"), ["A cat sat."], None,
                       ["The cat sat on the mat."], cache=None)
    with pytest.raises(UntrainedHeadError, match="no trained sequence-classification head"):
        load_sequence_classifier("minilm")
    result = CliRunner().invoke(app, ["run", "--data", "demo", "--task", "summarization",
                                      "--metrics", "blanc@minilm", "--tests", "truncation",
                                      "--seeds", "1", "--out", str(tmp_path / "out")])
    assert result.exit_code != 0
    said = [line for line in result.output.splitlines() if "no trained masked-LM head" in line]
    assert said and "Traceback" not in result.output and "newly initialized" not in result.output
    # the same encoder under a head built on purpose (not trained, and said so) is taken
    built = minilm_masked_lm(tmp_path / "minilm-mlm")
    assert len(score_rows(get_scorer("mlm_ppl", model=built), ["A cat sat."], cache=None)
               ["mlm_ppl"]) == 1
