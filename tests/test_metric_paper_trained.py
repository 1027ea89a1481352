"""The trained and model-based metrics the papers examine beyond the original collection: NUBIA,
SummaC-ZS, BLANC-help, SUPERT, XMoverScore and SentSim.

Their checkpoints are online only, so the real code runs on tiny randomly initialised models
built here (:mod:`blindspot.tiny_models`) and on the offline MiniLM, and the assertions hold for
any weights: hand-computed formulas, parity with a direct computation through transformers,
values fixed by construction (identical texts, an empty summary), and a blind-spot run on the
demo data that reaches verdicts.
"""

from __future__ import annotations

import json
import math
import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from typer.testing import CliRunner

from blindspot.cli import app
from blindspot.demo import read_demo
from blindspot.scorers import blanc as bl
from blindspot.scorers import nubia as nb
from blindspot.scorers import sentsim as ss
from blindspot.scorers import summac as sc
from blindspot.scorers import xmoverscore as xm
from blindspot.scoring import score_rows
from blindspot.scoring.scorer import get_scorer
from blindspot.tiny_models import (
    tiny_causal_lm,
    tiny_masked_lm,
    tiny_nli,
    tiny_nubia_aggregator,
    tiny_regressor,
)


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    root = tmp_path_factory.mktemp("paper_trained")
    return {"nli": tiny_nli(root / "nli", "c,n,e"), "mlm": tiny_masked_lm(root / "mlm"),
            "sts": tiny_regressor(root / "sts"), "lm": tiny_causal_lm(root / "lm"),
            "aggregator": tiny_nubia_aggregator(root / "aggregator.joblib")}


@pytest.fixture(scope="module")
def demo() -> dict[str, list[Any]]:
    rows = read_demo("summarization")[:3]
    return {"hyp": [r["gold"] for r in rows], "src": [r["source"] for r in rows],
            "refs": [r["references"] for r in rows]}


# -- formulas by hand (no model) -----------------------------------------------------------------


def test_xmoverscore_pieces_by_hand(tmp_path: Path) -> None:
    x = torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]], dtype=torch.float64)
    assert xm.ngram_means(x, 2).tolist() == [[0.5, 0.5], [0.5, 1.0]]
    assert xm.ngram_means(x, 5).tolist() == [[2 / 3, 2 / 3]]
    assert xm.mover_with_dropout(x, x.clone(), 0.3) == pytest.approx(1.0)
    # two points against one: half the mass each travels its distance (normalised vectors)
    one = torch.tensor([[1.0, 0.0]], dtype=torch.float64)
    two = torch.tensor([[1.0, 0.0], [0.0, 1.0]], dtype=torch.float64)
    assert xm.mover_with_dropout(two, one, 0.0) == pytest.approx(1 - 0.5 * math.sqrt(2))
    # dropping the smallest non-zero flow (k = max(int(2 * .3), 1) = 1: only flows below the
    # smallest one go, so none): the same
    assert xm.mover_with_dropout(two, one, 0.3) == pytest.approx(1 - 0.5 * math.sqrt(2))
    b = torch.tensor([0.6, 0.8], dtype=torch.float64)
    moved = xm.remap(torch.tensor([[1.0, 2.0]], dtype=torch.float64), "UMD", b)
    assert float(moved @ b) == pytest.approx(0.0)
    np.save(tmp_path / "identity.npy", np.eye(2))
    assert torch.equal(xm.read_remapping(str(tmp_path / "identity.npy"), "CLP"),
                       torch.eye(2, dtype=torch.float64))
    with pytest.raises(ValueError, match="needs remapping=<file>"):
        xm.read_remapping(None, "CLP")
    with pytest.raises(ValueError, match="mapping must be one of"):
        get_scorer("xmoverscore", mapping="clp")


# -- parity with direct computations on tiny models ----------------------------------------------


def test_summac_parity_with_a_direct_nli_image(models, demo) -> None:
    out = score_rows(get_scorer("summac", model=models["nli"]), demo["hyp"], None, demo["src"],
                     cache=None)["summac"]
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(models["nli"])
    model = AutoModelForSequenceClassification.from_pretrained(models["nli"]).eval()
    expected = []
    for doc, summary in zip(sc.split_chunks(demo["src"], "sentence"),
                            sc.split_chunks(demo["hyp"], "sentence"), strict=True):
        image = []
        for premise in doc:
            enc = tokenizer([premise] * len(summary), summary, padding=True, truncation=True,
                            return_tensors="pt")
            with torch.no_grad():
                probs = torch.softmax(model(**enc).logits, dim=-1)
            image.append(probs)  # the tiny model's labels are c, n, e
        image = torch.stack(image)  # (doc, summary, 3)
        entail, contradict = image[..., 2].max(dim=0).values, image[..., 0].max(dim=0).values
        expected.append(float((entail - contradict).mean()))
    assert out == pytest.approx(expected, abs=1e-5)
    assert len(set(round(x, 6) for x in out)) == len(out)
    # SummaC's names carry their label order: "mnli" is c,n,e
    named = get_scorer("summac", model="mnli")
    assert named.config["model"] == "roberta-large-mnli" and named.config["label_order"] == "c,n,e"


def test_blanc_parity_and_empty_summary(models, demo) -> None:
    scorer = get_scorer("blanc", model=models["mlm"], inference_batch_size=5)
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(models["mlm"])
    model = AutoModelForMaskedLM.from_pretrained(models["mlm"]).eval()
    jobs = scorer.inputs(tokenizer, demo["src"][0], demo["hyp"][0], 512)
    assert jobs and all(len(h) == len(f) for h, f, _, _ in jobs)  # filler as long as the help
    counts = [[0, 0], [0, 0]]
    for helped, filled, where, truth in jobs:
        guesses = []
        for ids in (helped, filled):
            with torch.no_grad():
                logits = model(input_ids=torch.tensor([ids])).logits[0]
            guesses.append(tokenizer.convert_ids_to_tokens(logits[where].argmax(-1).tolist()))
        for answer, with_help, without in zip(truth, *guesses, strict=True):
            counts[int(without == answer)][int(with_help == answer)] += 1
    out = score_rows(scorer, [demo["hyp"][0], ""], None, [demo["src"][0]] * 2, cache=None)
    assert out["blanc"][0] == pytest.approx(bl.blanc_measure(counts, "relative"))
    assert out["blanc"][1] == 0.0  # no summary: both readings are the same input


def test_blanc_tune_examples_and_determinism(models) -> None:
    scorer = get_scorer("blanc", model=models["mlm"], mode="tune", finetune_epochs=1,
                        finetune_chunk_size=4, finetune_chunk_stride=2, p_token_replace=0.0,
                        p_token_original=0.0)
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(models["mlm"])
    summary = "firefighters evacuated hundreds homes quickly tonight"
    tokens = tokenizer.tokenize(summary)
    examples = scorer.tuning_examples(tokenizer, summary, random.Random(0))
    # chunks at 0, 2, 4 (4 tokens each), and the top 2 tokens again (2 < chunk size)
    chunks = [tokens[0:4], tokens[2:6], tokens[:2], tokens[4:8]]
    expected = [m for chunk in chunks for m in bl.even_maskings(
        chunk, 2, 1, (4, 2, 100), tokenizer.mask_token)]
    assert len(examples) == len(expected)
    for (ids, labels), masking in zip(examples, expected, strict=True):
        assert tokenizer.convert_ids_to_tokens(ids)[1:-1] == list(masking.tokens)
        assert {i - 1 for i, label in enumerate(labels) if label != bl.IGNORED} == {
            i for i, _ in masking.answers}
    document = ["A large fire forced the evacuation of several hundred homes tonight."]
    first = score_rows(scorer, [summary], None, document, cache=None)["blanc"]
    again = score_rows(get_scorer("blanc", model=models["mlm"], mode="tune", finetune_epochs=1,
                                  finetune_chunk_size=4, finetune_chunk_stride=2,
                                  p_token_replace=0.0, p_token_original=0.0),
                       [summary], None, document, cache=None)["blanc"]
    assert first == again and -1 <= first[0] <= 1
    untuned = score_rows(get_scorer("blanc", model=models["mlm"], mode="tune", finetune_epochs=0),
                         [summary], None, document, cache=None)["blanc"]
    assert untuned == [0.0]  # no fine-tuning: the two models agree everywhere


def test_supert_identical_summary_and_stop_words(demo) -> None:
    document = "A fire broke out at a factory. Two hundred homes were evacuated."
    scorer = get_scorer("supert", model="minilm")
    out = score_rows(scorer, [document, "Two hundred homes were evacuated.", "it was the"],
                     None, [document] * 3, cache=None)["supert"]
    assert out[0] == pytest.approx(1.0)
    assert 0 < out[1] < 1  # precision 1, recall below 1
    assert math.isnan(out[2])  # only stop words: nothing to match
    recall = score_rows(get_scorer("supert", model="minilm", sim_metric="recall"),
                        ["Two hundred homes were evacuated."], None, [document],
                        cache=None)["supert"]
    precision = score_rows(get_scorer("supert", model="minilm", sim_metric="precision"),
                           ["Two hundred homes were evacuated."], None, [document],
                           cache=None)["supert"]
    assert precision[0] == pytest.approx(1.0) and recall[0] < 1
    assert out[1] == pytest.approx(2 * recall[0] / (1 + recall[0]))


def test_xmoverscore_lm_term_parity_and_identity_remap(models, demo, tmp_path) -> None:
    options = {"model": "minilm", "layer": 4, "lm_model": models["lm"]}
    out = score_rows(get_scorer("xmoverscore", **options), demo["hyp"], None, demo["src"],
                     cache=None)
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(models["lm"])
    model = AutoModelForCausalLM.from_pretrained(models["lm"]).eval()
    for text, lm_score in zip(demo["hyp"], out["lm"], strict=True):
        ids = torch.tensor([tokenizer(text, add_special_tokens=False)["input_ids"][:512]])
        with torch.no_grad():
            assert lm_score == pytest.approx(-float(model(ids, labels=ids).loss), abs=1e-4)
    assert out["xmoverscore"] == pytest.approx(
        [x + 0.1 * y for x, y in zip(out["xmover"], out["lm"], strict=True)])
    np.save(tmp_path / "identity.npy", np.eye(384))
    remapped = score_rows(get_scorer("xmoverscore", mapping="CLP",
                                     remapping=str(tmp_path / "identity.npy"), **options),
                          demo["hyp"], None, demo["src"], cache=None)
    assert remapped["xmover"] == pytest.approx(out["xmover"], abs=1e-9)


def test_sentsim_components_are_bertscore_and_moverscore(demo) -> None:
    base = {"sentence_model": "minilm", "token_model": "minilm", "against": "reference"}
    refs = [r[:1] for r in demo["refs"]]
    out = score_rows(get_scorer("sentsim", **base), demo["hyp"], refs, None, cache=None)
    bert = score_rows(get_scorer("bertscore", model_type="minilm"), demo["hyp"], refs, None,
                      cache=None)["f1"]
    assert out["token_similarity"] == pytest.approx(bert, abs=1e-6)
    assert out["sentsim"] == pytest.approx([ss.combine(a, b) for a, b in zip(
        out["sentence_similarity"], out["token_similarity"], strict=True)])
    wmd = score_rows(get_scorer("sentsim", token_metric="wmd", **base), demo["hyp"], refs, None,
                     cache=None)
    mover = score_rows(get_scorer("moverscore", model_type="minilm", idf=False,
                                  remove_subwords=False, remove_punctuation=False),
                       demo["hyp"], refs, None, cache=None)["moverscore"]
    assert wmd["token_similarity"] == pytest.approx(mover, abs=1e-9)
    assert wmd["sentence_similarity"] == pytest.approx(out["sentence_similarity"])
    free = get_scorer("sentsim", sentence_model="minilm", token_model="minilm")
    assert free.uses_source == "required" and free.uses_references == "none"


def test_nubia_parity_with_direct_features(models, demo) -> None:
    options = {key: models[name] for key, name in (("aggregator", "aggregator"),
                                                    ("sts_model", "sts"), ("nli_model", "nli"),
                                                    ("lm_model", "lm"))}
    refs = [r[0] for r in demo["refs"]]
    out = score_rows(get_scorer("nubia", **options), demo["hyp"], refs, None, cache=None)
    import joblib
    from transformers import AutoModelForCausalLM, AutoModelForSequenceClassification, AutoTokenizer

    def pair_logits(folder: str, a: str, b: str) -> torch.Tensor:
        tokenizer = AutoTokenizer.from_pretrained(folder)
        model = AutoModelForSequenceClassification.from_pretrained(folder).eval()
        with torch.no_grad():
            return model(**tokenizer(a, b, truncation=True, return_tensors="pt")).logits[0]

    tokenizer = AutoTokenizer.from_pretrained(models["lm"])
    lm = AutoModelForCausalLM.from_pretrained(models["lm"]).eval()

    def grammar(text: str) -> float:
        ids = torch.tensor([[tokenizer.eos_token_id] + tokenizer(
            text, add_special_tokens=False)["input_ids"]])
        with torch.no_grad():
            return float(lm(ids, labels=ids).loss)

    aggregator = joblib.load(models["aggregator"])

    def raw(ref: str, hyp: str, g_hyp: float) -> float:
        sts = 5 * float(torch.sigmoid(pair_logits(models["sts"], ref, hyp)[0]))
        logprobs = torch.log_softmax(pair_logits(models["nli"], ref, hyp), -1).tolist()
        features = [sts, *logprobs, grammar(ref), g_hyp, len(ref.split(" ")),
                    len(hyp.split(" "))]
        return float(aggregator.predict(np.array([features]))[0])

    for ref, hyp, score in zip(refs, demo["hyp"], out["nubia"], strict=True):
        expected = nb.calibrate(raw(ref, hyp, grammar(hyp)), raw(ref, ref, grammar(ref)))
        assert score == pytest.approx(expected, abs=1e-5)
    assert out["grammar_hyp"] == pytest.approx([grammar(h) for h in demo["hyp"]], abs=1e-4)
    assert all(0 <= x <= 100 for x in out["contradiction"])


# -- a blind-spot run on the demo data reaches verdicts -------------------------------------------


def test_demo_run_judges_every_new_metric(models, tmp_path, monkeypatch) -> None:
    """`blindspot run --data demo` judges all six on tiny models and MiniLM: the summarization
    metrics on the summarization demo (its documents are their sources), XMoverScore and SentSim
    on the translation demo; one test with one level each keeps the runs short."""
    monkeypatch.chdir(tmp_path)
    runs = {
        ("summarization", "verb_switching"): (
            "summac,blanc,supert@minilm,nubia",
            [f"summac.model={models['nli']}", f"blanc.model={models['mlm']}",
             f"nubia.aggregator={models['aggregator']}", f"nubia.sts_model={models['sts']}",
             f"nubia.nli_model={models['nli']}", f"nubia.lm_model={models['lm']}"]),
        ("translation", "middle_swap"): (
            "xmoverscore@minilm,sentsim",
            [f"xmoverscore.lm_model={models['lm']}", "xmoverscore.layer=4",
             "sentsim.sentence_model=minilm", "sentsim.token_model=minilm"]),
    }
    for (task, test), (metrics, options) in runs.items():
        argv = ["run", "--data", "demo", "--task", task, "--metrics", metrics, "--tests", test,
                "--seeds", "1", "--out", task]
        for option in options:
            argv += ["--option", option]
        result = CliRunner().invoke(app, argv)
        assert result.exit_code == 0, result.output
        (dataset,) = json.loads((tmp_path / task / "results.json").read_text())[
            "datasets"].values()
        assert len(dataset["metrics"]) == len(metrics.split(","))
        for name, entry in dataset["metrics"].items():
            assert entry["error"] is None, (name, entry["error"])
            assert entry["tests"][test]["status"] in ("pass", "fail"), name
