"""Drop-in parity with evaluate's canonical modules (issue 20), as a table.

Part 1: every documented example of the canonical ``bleu``, ``sacrebleu``, ``chrf``, ``ter``,
``rouge`` and ``bertscore`` modules (the inputs and outputs printed in their docstrings and metric
cards, facts taken from huggingface/evaluate) run through OUR module of the same name must print
the same.
The canonical modules cannot be loaded here (offline), so these outputs are the reference.

Part 2: ours against the library each one wraps, on the shared real data (WMT21 de-en, CNN/DM
with its ten references; WikiText for MAUVE): sacrebleu, rouge-score, bert_score, mauve-text, and
``perplexity`` against the
documented recipe written with plain transformers (the canonical examples need gpt2, which is
not available offline).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import bert_score
import evaluate
import numpy as np
import pytest
import sacrebleu
from engine_support import cnndm_rows, wmt21_rows
from rouge_score import rouge_scorer, scoring

from blindspot.models import load_bertscore_tokenizer, resolve_model
from blindspot.scorers import bleurt_score
from blindspot.scorers._encoders import TruncationWarning

HELLO = ["hello there general kenobi", "foo bar foobar"]
TER_PREDICTIONS = ["does this sentence match??", "what about this sentence?",
                   "What did the TER metric user say to the developer?"]
TER_REFERENCES = [["does this sentence match", "does this sentence match!?!"],
                  ["wHaT aBoUt ThIs SeNtEnCe?", "wHaT aBoUt ThIs SeNtEnCe?"],
                  ["Your jokes are...", "...TERrible"]]
CHRF_PREDICTIONS = ["The relationship between cats and dogs is not exactly friendly.",
                    "a good bookshop is just a genteel black hole that knows how to read."]
CHRF_REFERENCES = [["The relationship between dogs and cats is not exactly friendly."],
                   ["A good bookshop is just a genteel Black Hole that knows how to read."]]


@dataclass(frozen=True)
class Example:
    """One documented example: module, call, and what the canonical docstring prints."""

    module: str
    call: dict[str, Any]
    #: the whole printed dict (keys in order), or only the keys the docstring prints
    expected: dict[str, Any]
    whole: bool = True
    #: digits the docstring rounds to (None: printed exactly)
    digits: int | None = None
    keys: list[str] = field(default_factory=list)


#: the canonical modules' docstring examples (huggingface/evaluate, metrics/<name>/<name>.py)
CANONICAL_EXAMPLES: dict[str, Example] = {
    "bleu-1": Example("bleu", {"predictions": HELLO, "references": [
        ["hello there general kenobi", "hello there!"], ["foo bar foobar"]]},
        {"bleu": 1.0, "precisions": [1.0, 1.0, 1.0, 1.0], "brevity_penalty": 1.0,
         "length_ratio": 1.1666666666666667, "translation_length": 7, "reference_length": 6}),
    "bleu-2": Example("bleu", {"predictions": HELLO, "references": [
        ["hello there general kenobi"], ["foo bar foobar"]]},
        {"bleu": 1.0, "precisions": [1.0, 1.0, 1.0, 1.0], "brevity_penalty": 1.0,
         "length_ratio": 1.0, "translation_length": 7, "reference_length": 7}),
    "sacrebleu-1": Example("sacrebleu", {"predictions": HELLO, "references": [
        ["hello there general kenobi", "hello there !"], ["foo bar foobar", "foo bar foobar"]]},
        {"score": 100.0}, whole=False, digits=1,
        keys=["score", "counts", "totals", "precisions", "bp", "sys_len", "ref_len"]),
    "sacrebleu-2": Example("sacrebleu", {
        "predictions": ["hello there general kenobi", "on our way to ankh morpork"],
        "references": [["hello there general kenobi", "hello there !"],
                       ["goodbye ankh morpork", "ankh morpork"]]},
        {"score": 39.76353643835252, "counts": [6, 4, 2, 1], "totals": [10, 8, 6, 4],
         "precisions": [60.0, 50.0, 33.333333333333336, 25.0], "bp": 1.0, "sys_len": 10,
         "ref_len": 7}),
    "chrf-1": Example("chrf", {"predictions": CHRF_PREDICTIONS, "references": CHRF_REFERENCES},
                      {"score": 84.64214891738334, "char_order": 6, "word_order": 0, "beta": 2}),
    "chrf-2": Example("chrf", {"predictions": CHRF_PREDICTIONS, "references": CHRF_REFERENCES,
                               "word_order": 2},
                      {"score": 82.87263732906315, "char_order": 6, "word_order": 2, "beta": 2}),
    "chrf-3": Example("chrf", {"predictions": CHRF_PREDICTIONS, "references": CHRF_REFERENCES,
                               "word_order": 2, "lowercase": True},
                      {"score": 92.12853119829202, "char_order": 6, "word_order": 2, "beta": 2}),
    "ter-1": Example("ter", {"predictions": TER_PREDICTIONS, "references": TER_REFERENCES,
                             "case_sensitive": True},
                     {"score": 150.0, "num_edits": 15, "ref_length": 10.0}),
    "ter-2": Example("ter", {"predictions": TER_PREDICTIONS[:2], "references": TER_REFERENCES[:2],
                             "case_sensitive": True},
                     {"score": 62.5, "num_edits": 5, "ref_length": 8.0}),
    "ter-3": Example("ter", {"predictions": TER_PREDICTIONS[:2], "references": TER_REFERENCES[:2],
                             "normalized": True, "case_sensitive": True},
                     {"score": 57.14285714285714, "num_edits": 6, "ref_length": 10.5}),
    "ter-4": Example("ter", {"predictions": TER_PREDICTIONS[:2], "references": TER_REFERENCES[:2],
                             "ignore_punct": True, "case_sensitive": False},
                     {"score": 0.0, "num_edits": 0, "ref_length": 8.0}),
    "ter-5": Example("ter", {"predictions": TER_PREDICTIONS, "references": TER_REFERENCES,
                             "ignore_punct": True, "case_sensitive": False},
                     {"score": 100.0, "num_edits": 10, "ref_length": 10.0}),
    "rouge-1": Example("rouge", {"predictions": ["hello there", "general kenobi"],
                                 "references": ["hello there", "general kenobi"]},
                       {"rouge1": 1.0, "rouge2": 1.0, "rougeL": 1.0, "rougeLsum": 1.0}),
    "rouge-2-tokenizer": Example("rouge", {"predictions": ["hello there", "general kenobi"],
                                           "references": ["hello there", "general kenobi"],
                                           "tokenizer": str.split},
                                 {"rouge1": 1.0, "rouge2": 1.0, "rougeL": 1.0, "rougeLsum": 1.0}),
    "rouge-3-multi": Example("rouge", {"predictions": ["hello there", "general kenobi"],
                                       "references": [["hello", "there"],
                                                      ["general kenobi", "general yoda"]]},
                             {"rouge1": 0.8333, "rouge2": 0.5, "rougeL": 0.8333,
                              "rougeLsum": 0.8333}, digits=4),
    # left out: the card's "hello goodbye" vs "goodbye" example prints rouge1 [0.5, 0.0] (0.25
    # aggregated), which is that row's precision; rouge-score itself, and so the canonical
    # module's code, gives the F-measure 2/3 there
    # mauve: its documented out.mauve == 1.0 for two identical sets of two texts is not what
    # mauve-text 0.4.0 computes for them (two buckets: 0.75, under any feature model; the
    # canonical doctest is skipped); ours is tested against mauve-text itself below
    # the canonical call says lang="en" (roberta-large, not available offline): the printed
    # [1.0, 1.0] holds for identical texts under any encoder, so the offline MiniLM stands in
    "bertscore": Example("bertscore", {"predictions": ["hello there", "general kenobi"],
                                       "references": ["hello there", "general kenobi"],
                                       "model_type": "minilm"},
                         {"f1": [1.0, 1.0]}, whole=False, digits=2,
                         keys=["precision", "recall", "f1", "hashcode"]),
}


def _module(name: str) -> evaluate.EvaluationModule:
    return evaluate.load(f"metrics/{name}")


def _rounded(value: Any, digits: int | None) -> Any:
    if digits is None:
        return value
    if isinstance(value, list):
        return [round(v, digits) for v in value]
    return round(value, digits)


@pytest.mark.parametrize("case", sorted(CANONICAL_EXAMPLES))
def test_canonical_documented_example(case: str) -> None:
    example = CANONICAL_EXAMPLES[case]
    out = _module(example.module).compute(**example.call)
    if example.whole:
        assert list(out) == list(example.expected)
        assert {key: _rounded(value, example.digits) for key, value in out.items()} == \
            example.expected
    else:
        assert list(out)[:len(example.keys)] == example.keys
        for key, value in example.expected.items():
            assert _rounded(out[key], example.digits) == value, key


# -- ours vs the wrapped library on the shared data ----------------------------------------------

@pytest.fixture(scope="module")
def wmt() -> dict[str, list]:
    rows = wmt21_rows(200)
    return {"hyp": [r["systems"]["Online-B"] for r in rows],
            "ref": [r["reference"] for r in rows], "gold": [r["gold"] for r in rows],
            "src": [r["source"] for r in rows]}


def test_sacrebleu_chrf_ter_equal_sacrebleu_on_wmt21_with_two_references(wmt) -> None:
    hyps, streams = wmt["hyp"], [wmt["ref"], wmt["gold"]]
    refs = [list(pair) for pair in zip(*streams, strict=True)]
    assert _module("sacrebleu").compute(predictions=hyps, references=refs) == {
        key: getattr(sacrebleu.corpus_bleu(hyps, streams), key)
        for key in ("score", "counts", "totals", "precisions", "bp", "sys_len", "ref_len")}
    chrf = sacrebleu.corpus_chrf(hyps, streams, word_order=2)
    assert _module("chrf").compute(predictions=hyps, references=refs, word_order=2)["score"] \
        == chrf.score
    ter = sacrebleu.metrics.TER(no_punct=True).corpus_score(hyps, streams)
    assert _module("ter").compute(predictions=hyps, references=refs, ignore_punct=True) == {
        "score": ter.score, "num_edits": ter.num_edits, "ref_length": ter.ref_length}


def test_unequal_reference_counts_are_refused_as_canonical_does(wmt) -> None:
    refs = [[wmt["ref"][0], wmt["gold"][0]], [wmt["ref"][1]]]
    with pytest.raises(ValueError, match="same number of references"):
        _module("chrf").compute(predictions=wmt["hyp"][:2], references=refs)
    # per row, each row keeps its own references
    rows = _module("chrf").compute(predictions=wmt["hyp"][:2], references=refs,
                                   use_aggregator=False)["score"]
    assert rows == [sacrebleu.sentence_chrf(h, r).score for h, r in zip(wmt["hyp"][:2], refs, strict=True)]


def test_classic_bleu_equals_sacrebleu_without_smoothing_on_wmt21(wmt) -> None:
    """With one reference per row the shortest reference is the closest, so classic BLEU is
    sacrebleu's unsmoothed 13a BLEU on a 0-1 scale."""
    hyps, refs = wmt["hyp"], wmt["ref"]
    ours = _module("bleu").compute(predictions=hyps, references=refs)
    theirs = sacrebleu.corpus_bleu(hyps, [refs], smooth_method="none")
    assert ours["bleu"] == pytest.approx(theirs.score / 100, rel=1e-12)
    assert [100 * p for p in ours["precisions"]] == pytest.approx(theirs.precisions, rel=1e-12)
    assert ours["brevity_penalty"] == pytest.approx(theirs.bp, rel=1e-12)
    assert (ours["translation_length"], ours["reference_length"]) == (theirs.sys_len,
                                                                      theirs.ref_len)
    assert 0.1 < ours["bleu"] < 0.6


def test_classic_bleu_by_hand() -> None:
    """"the cat the cat" against "the cat sat": unigram matches clipped to 2 of 4, bigrams
    "the cat" x1 of 3 ("cat the" unmatched), no trigram... with smoothing (m+1)/(p+1)."""
    out = _module("bleu").compute(predictions=["the cat the cat"], references=["the cat sat"],
                                  smooth=True)
    assert out["precisions"] == [3 / 5, 2 / 4, 1 / 3, 1 / 2]
    assert out["brevity_penalty"] == 1.0 and out["length_ratio"] == 4 / 3
    assert out["bleu"] == pytest.approx((3 / 5 * 2 / 4 * 1 / 3 * 1 / 2) ** 0.25, rel=1e-12)
    assert _module("bleu").compute(predictions=["the cat the cat"],
                                   references=["the cat sat"])["bleu"] == 0.0


def test_rouge_bootstrap_equals_rouge_score_on_cnndm_ten_references() -> None:
    rows = cnndm_rows(20)
    hyps, refs = [r["gold"] for r in rows], [r["references"] for r in rows]
    assert all(len(r) == 10 for r in refs)
    np.random.seed(7)
    ours = _module("rouge").compute(predictions=hyps, references=refs)
    np.random.seed(7)
    scorer = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL", "rougeLsum"])
    aggregator = scoring.BootstrapAggregator()
    for h, r in zip(hyps, refs, strict=True):
        aggregator.add_scores(scorer.score_multi(r, h))
    theirs = {key: value.mid.fmeasure for key, value in aggregator.aggregate().items()}
    assert list(ours) == list(theirs)
    for key in theirs:
        assert ours[key] == pytest.approx(theirs[key], rel=1e-12), key
    plain = _module("rouge").compute(predictions=hyps, references=refs, use_aggregator=False)
    assert plain["rouge1"] == [scorer.score_multi(r, h)["rouge1"].fmeasure
                               for h, r in zip(hyps, refs, strict=True)]


def test_rouge_tokenizer_argument_as_canonical() -> None:
    out = _module("rouge").compute(predictions=["a-b c"], references=["a-b d"],
                                   tokenizer=str.split, use_aggregator=False)
    assert out["rouge1"] == [0.5]  # "a-b" one token, not two as rouge-score's tokenizer splits


def test_bertscore_keeps_the_best_reference_as_bert_score(wmt) -> None:
    hyps = wmt["hyp"][:16]
    refs = [[r, g] for r, g in zip(wmt["ref"][:16], wmt["gold"][:16], strict=True)]
    out = _module("bertscore").compute(predictions=hyps, references=refs, model_type="minilm")
    p, r, f = bert_score.score(hyps, refs, model_type=resolve_model("minilm"), num_layers=6)
    for key, want in zip(("precision", "recall", "f1"), (p, r, f), strict=True):
        assert np.allclose(out[key], want.tolist(), atol=1e-6), key
    assert out["hashcode"].startswith("minilm_L6_no-idf_version=")
    mean = _module("bertscore").compute(predictions=hyps, references=refs, model_type="minilm",
                                        references_reduce="mean", use_aggregator=True)
    assert mean["f1"] < float(f.mean())  # the mean over references is below their best


@pytest.mark.parametrize("name", ["bertscore", "moverscore"])
def test_encoder_modules_warn_once_and_record_truncated_inputs(name: str) -> None:
    """CNN/DM articles as hypotheses: those over MiniLM's 512 tokens are cut, and said so."""
    rows = cnndm_rows(3)
    articles = [r["source"] for r in rows]
    references = [r["gold"] for r in rows]
    tokenizer = load_bertscore_tokenizer(resolve_model("minilm"))
    limit = tokenizer.model_max_length
    long = sum(len(tokenizer(a.strip())["input_ids"]) > limit for a in articles)
    assert limit == 512 and 1 <= long < len(articles)
    assert all(len(tokenizer(r)["input_ids"]) < limit for r in references)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = _module(name).compute(predictions=articles, references=references,
                                    model_type="minilm")
    cut = [w for w in caught if issubclass(w.category, TruncationWarning)]
    assert len(cut) == 1
    assert f"{name}: {long} input text(s)" in str(cut[0].message)
    assert f"maximum of {limit} tokens" in str(cut[0].message)
    assert (out["truncated_inputs"], out["max_length"]) == (long, limit)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        short = _module(name).compute(predictions=references, references=references,
                                      model_type="minilm")
    assert not [w for w in caught if issubclass(w.category, TruncationWarning)]
    assert short["truncated_inputs"] == 0


def test_our_modules_combine_like_any_module(wmt) -> None:
    hyps, refs = wmt["hyp"][:20], wmt["ref"][:20]
    combined = evaluate.combine([_module("chrf"), _module("ter"), _module("bleu")])
    out = combined.compute(predictions=hyps, references=refs)
    assert out["chrf_score"] == sacrebleu.corpus_chrf(hyps, [refs]).score
    assert out["ter_score"] == sacrebleu.corpus_ter(hyps, [refs]).score
    assert out["bleu"] == _module("bleu").compute(predictions=hyps, references=refs)["bleu"]


def _perplexity_by_hand(text: str, add_start_token: bool) -> float:
    """The documented recipe with plain transformers, one text at a time: ids without special
    tokens, BOS in front when asked, exp of the mean cross-entropy of every token after the
    first."""
    import torch

    from blindspot.models import load_causal_lm

    tokenizer, model = load_causal_lm("smollm2")
    ids = tokenizer(text, add_special_tokens=False)["input_ids"]
    ids = ([tokenizer.bos_token_id] if add_start_token else []) + ids
    with torch.no_grad():
        logits = model(torch.tensor([ids])).logits[0, :-1]
    loss = torch.nn.functional.cross_entropy(logits, torch.tensor(ids[1:]))
    return float(torch.exp(loss))


@pytest.mark.parametrize("add_start_token", [True, False])
def test_perplexity_equals_the_documented_recipe_on_wmt21(wmt, add_start_token: bool) -> None:
    texts = wmt["hyp"][:6]
    out = _module("perplexity").compute(model_id="smollm2", predictions=texts, batch_size=4,
                                        add_start_token=add_start_token)
    want = [_perplexity_by_hand(t, add_start_token) for t in texts]
    assert list(out) == ["perplexities", "mean_perplexity"]
    assert np.allclose(out["perplexities"], want, rtol=1e-4)
    assert out["mean_perplexity"] == pytest.approx(float(np.mean(want)), rel=1e-4)
    assert all(p > 1 for p in want)


def test_mauve_equals_mauve_text_on_wikitext_features() -> None:
    """Texts featurized here (MiniLM, cut at 64 tokens) give what mauve-text's compute_mauve
    gives on the same features written out with plain transformers, P = predictions."""
    import mauve
    from test_metric_mauve import direct_features, wikitext

    golds, refs = wikitext(40)
    out = _module("mauve").compute(predictions=golds, references=refs,
                                   featurize_model_name="minilm", max_text_length=64,
                                   verbose=False)
    expected = mauve.compute_mauve(p_features=direct_features("minilm", golds, 64),
                                   q_features=direct_features("minilm", refs, 64))
    assert out.num_buckets == expected.num_buckets == 4
    assert out.mauve == pytest.approx(expected.mauve, abs=1e-9)
    assert out.frontier_integral == pytest.approx(expected.frontier_integral, abs=1e-9)
    assert np.allclose(out.p_hist, expected.p_hist) and np.allclose(out.q_hist, expected.q_hist)
    assert 0 < out.mauve < 1


def test_comet_equals_unbabel_comet_on_wmt21(wmt, tmp_path) -> None:
    """A COMET model folder (tiny, random weights: the values mean nothing, the parity does)
    through ``model=``: scores and mean_score are unbabel-comet's predict()."""
    from blindspot.scorers.comet_score import import_comet
    from blindspot.tiny_models import tiny_comet

    folder = tiny_comet(tmp_path / "comet")
    rows = {key: values[:12] for key, values in wmt.items()}
    out = _module("comet").compute(sources=rows["src"], predictions=rows["hyp"],
                                   references=rows["ref"], model=folder, gpus=0)
    model = import_comet().load_from_checkpoint(str(Path(folder) / "checkpoints" / "model.ckpt"))
    direct = model.predict([{"src": s, "mt": h, "ref": r} for s, h, r in
                            zip(rows["src"], rows["hyp"], rows["ref"], strict=True)], batch_size=8, gpus=0,
                           progress_bar=False)
    assert list(out) == ["mean_score", "scores"]
    assert np.allclose(out["scores"], direct.scores, atol=1e-5)
    assert out["mean_score"] == pytest.approx(direct.system_score, abs=1e-5)
    assert len({round(x, 6) for x in out["scores"]}) > 1  # the inputs really reach the model


def test_bleurt_equals_bleurt_pytorch_on_wmt21(wmt, tmp_path) -> None:
    """A bleurt-pytorch folder (tiny, random weights) through ``model=``: one score per row,
    the regression logit of [CLS] reference [SEP] candidate [SEP]."""
    import torch
    from bleurt_pytorch import BleurtForSequenceClassification, BleurtTokenizer

    from blindspot.tiny_models import tiny_bleurt

    folder = tiny_bleurt(tmp_path / "bleurt")
    hyps, refs = wmt["hyp"][:12], wmt["ref"][:12]
    out = _module("bleurt").compute(predictions=hyps, references=refs, model=folder)
    tokenizer = BleurtTokenizer.from_pretrained(folder)
    model = BleurtForSequenceClassification.from_pretrained(folder).eval()
    with torch.no_grad():
        direct = [model(**tokenizer([r], [h], truncation=True, max_length=512,
                                    return_tensors="pt")).logits.item()
                  for h, r in zip(hyps, refs, strict=True)]
    assert list(out) == ["scores"]
    assert np.allclose(out["scores"], direct, atol=1e-5)
    assert len({round(x, 6) for x in out["scores"]}) > 1


def test_bleurt_configurations_name_the_canonical_checkpoints() -> None:
    assert bleurt_score.checkpoint("default") == ("lucadiliello/bleurt-base-128", 128)
    assert bleurt_score.checkpoint("BLEURT-20-d12") == ("lucadiliello/BLEURT-20-D12", 512)
    assert bleurt_score.checkpoint("bleurt-large-512") == ("lucadiliello/bleurt-large-512", 512)
    with pytest.raises(KeyError, match="bleurt-base-128"):
        bleurt_score.checkpoint("bleurt-huge")

