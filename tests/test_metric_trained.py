"""The trained metrics: COMET / COMET-QE, UniEval, MENLI's NLI metric, BLEURT.

No weights of these metrics exist offline, so every test runs the real loading and scoring code on
tiny randomly initialised checkpoints built here (:mod:`blindspot.tiny_models`) and asserts what
holds for any weights: parity with a direct computation through the wrapped library, input
mapping, ranges, determinism, and the hand-computable parts (MENLI's formulas, directions, label
orders and min-max combination).
"""

from __future__ import annotations

import functools
import itertools
import json
import math
from pathlib import Path
from typing import Any

import evaluate
import pytest
import torch
from conftest import SHARED_DATA
from engine_support import cnndm_rows

from blindspot.minmax import minmax
from blindspot.models import ModelNotAvailableError
from blindspot.scorers import menli as nli
from blindspot.scorers.comet_score import import_comet, model_modes
from blindspot.scorers.unieval import split_sentences, unieval_question
from blindspot.scoring import score_rows
from blindspot.scoring.scorer import ScoreInput, get_scorer
from blindspot.tiny_models import tiny_bleurt, tiny_comet, tiny_nli, tiny_t5


@pytest.fixture(scope="module")
def wmt() -> dict[str, list[str]]:
    """The first WMT21 de-en rows: gold translation, second reference, German source."""
    with open(SHARED_DATA / "wmt21_de_en_translation.jsonl", encoding="utf-8") as fh:
        rows = [json.loads(line) for line in itertools.islice(fh, 6)]
    return {"hyp": [r["gold"] for r in rows], "ref": [r["reference"] for r in rows],
            "src": [r["source"] for r in rows]}


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    root = tmp_path_factory.mktemp("trained")
    return {
        "comet": tiny_comet(root / "comet"),
        "comet_qe": tiny_comet(root / "comet_qe", reference_free=True),
        "t5": tiny_t5(root / "t5"),
        "nli": tiny_nli(root / "nli", "e,n,c"),
        "bleurt": tiny_bleurt(root / "bleurt"),
    }


def _module(name: str, config: str | None = None) -> evaluate.EvaluationModule:
    return evaluate.load(str(Path(__file__).resolve().parents[1] / "metrics" / name), config)


# -- COMET ---------------------------------------------------------------------------------------


def _direct_comet(folder: str, samples: list[dict[str, str]]) -> list[float]:
    """COMET scores straight from unbabel-comet, as its README shows."""
    comet = import_comet()
    model = comet.load_from_checkpoint(str(Path(folder) / "checkpoints" / "model.ckpt"))
    return [float(s) for s in model.predict(samples, batch_size=8, gpus=0,
                                            progress_bar=False).scores]


def test_comet_parity_with_unbabel_comet_on_wmt21(models, wmt) -> None:
    out = score_rows(get_scorer("comet", model=models["comet"]), wmt["hyp"], wmt["ref"],
                     wmt["src"], cache=None)["comet"]
    direct = _direct_comet(models["comet"], [{"src": s, "mt": h, "ref": r} for s, h, r in
                                             zip(wmt["src"], wmt["hyp"], wmt["ref"], strict=True)])
    assert out == pytest.approx(direct, abs=1e-5)
    assert len(set(round(x, 6) for x in out)) > 1  # the inputs really reach the model


def test_comet_qe_parity_uses_source_and_hypothesis_only(models, wmt) -> None:
    out = score_rows(get_scorer("comet_qe", model=models["comet_qe"]), wmt["hyp"], None,
                     wmt["src"], cache=None)["comet_qe"]
    direct = _direct_comet(models["comet_qe"],
                           [{"src": s, "mt": h} for s, h in zip(wmt["src"], wmt["hyp"], strict=True)])
    assert out == pytest.approx(direct, abs=1e-5)


def test_comet_input_mapping_and_multi_reference_mean(models, monkeypatch) -> None:
    scorer = get_scorer("comet", model=models["comet"])
    seen: list[dict[str, str]] = []

    def fake_predict(samples: list[dict[str, str]]) -> list[float]:
        seen.extend(samples)
        return [float(len(s["mt"]) + 10 * len(s["ref"])) for s in samples]

    monkeypatch.setattr(scorer, "predict", fake_predict)
    [row] = scorer.score_batch([ScoreInput("ab", ("x", "yyy"), "src")])
    assert seen == [{"src": "src", "mt": "ab", "ref": "x"}, {"src": "src", "mt": "ab", "ref": "yyy"}]
    assert row == {"comet": (12 + 32) / 2}


def test_comet_checks_the_checkpoint_kind(models) -> None:
    comet = import_comet()
    ref_model = comet.load_from_checkpoint(str(Path(models["comet"]) / "checkpoints" / "model.ckpt"))
    assert model_modes(ref_model) == {"ref"}
    with pytest.raises(ValueError, match="cannot score 'comet'.*use 'comet_qe'"):
        score_rows(get_scorer("comet", model=models["comet_qe"]), ["a"], ["b"], ["c"], cache=None)
    with pytest.raises(ValueError, match="cannot score 'comet_qe'.*use 'comet'"):
        score_rows(get_scorer("comet_qe", model=models["comet"]), ["a"], None, ["c"], cache=None)


def test_comet_module_configs_and_bad_input(models) -> None:
    ref, qe = _module("comet_score"), _module("comet_score", "qe")
    assert "references" not in qe._feature_names() and "references" in ref._feature_names()
    out = qe.compute(predictions=["", "A dog."], sources=["Ein Hund.", ""], model=models["comet_qe"],
                     use_aggregator=False)
    assert len(out["comet_qe"]) == 2 and all(math.isfinite(x) for x in out["comet_qe"])
    with pytest.raises(ValueError, match="sources"):
        ref.compute(predictions=["a"], references=["b"], model=models["comet"])
    with pytest.raises(ValueError, match=r"predictions\[1\]"):
        score_rows(get_scorer("comet", model=models["comet"]), ["a", None], ["b", "c"], ["d", "e"])
    with pytest.raises(ModelNotAvailableError, match="no-such-comet"):
        score_rows(get_scorer("comet", model="no-such-comet"), ["a"], ["b"], ["c"], cache=None)


# -- UniEval -------------------------------------------------------------------------------------


def test_unieval_questions_are_unievals() -> None:
    assert unieval_question("coherence", "S.", "D.") == (
        "question: Is this a coherent summary to the document? </s> summary: S. </s> document: D.")
    assert unieval_question("consistency", "S.", "D.") == (
        "question: Is this claim consistent with the document? </s> claim: S. </s> document: D.")
    assert unieval_question("fluency", "S.") == (
        "question: Is this a fluent paragraph? </s> paragraph: S.")
    assert unieval_question("relevance", "S.", reference="R.") == (
        "question: Is this summary relevant to the reference? </s> summary: S. </s> reference: R.")
    with pytest.raises(ValueError, match="dimension"):
        unieval_question("style", "S.")


@functools.cache
def _t5(folder: str) -> tuple[Any, Any]:
    from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

    return AutoTokenizer.from_pretrained(folder), AutoModelForSeq2SeqLM.from_pretrained(folder).eval()


def _direct_yes(folder: str, prompt: str) -> float:
    """P(Yes) / (P(Yes) + P(No)) of the first decoder step, from the full softmax."""
    tokenizer, model = _t5(folder)
    yes = tokenizer("Yes", add_special_tokens=False).input_ids[0]
    no = tokenizer("No", add_special_tokens=False).input_ids[0]
    enc = tokenizer([prompt], return_tensors="pt")
    start = torch.tensor([[model.config.decoder_start_token_id]])
    with torch.no_grad():
        probs = torch.softmax(model(**enc, decoder_input_ids=start).logits[0, 0], dim=-1)
    return float(probs[yes] / (probs[yes] + probs[no]))


def test_unieval_parity_with_a_direct_first_step_computation(models) -> None:
    row = cnndm_rows(1)[0]
    summary, document, refs = row["gold"], row["source"][:1500], row["references"][:2]
    out = score_rows(get_scorer("unieval", model=models["t5"]), [summary], [refs], [document],
                     cache=None)
    sentences = split_sentences([summary])[0]
    assert len(sentences) >= 2
    expected = {
        "coherence": _direct_yes(models["t5"], unieval_question("coherence", summary, document)),
        "consistency": sum(_direct_yes(models["t5"], unieval_question("consistency", s, document))
                           for s in sentences) / len(sentences),
        "fluency": sum(_direct_yes(models["t5"], unieval_question("fluency", s))
                       for s in sentences) / len(sentences),
        "relevance": sum(_direct_yes(models["t5"], unieval_question("relevance", summary,
                                                                    reference=r))
                         for r in refs) / len(refs),
    }
    for dim, value in expected.items():
        assert out[dim][0] == pytest.approx(value, abs=1e-5), dim
    assert out["overall"][0] == pytest.approx(sum(expected.values()) / 4, abs=1e-5)


def test_unieval_ranges_mean_and_determinism(models) -> None:
    rows = cnndm_rows(2)
    hyps = [r["gold"] for r in rows] + [""]
    refs = [r["references"][:1] for r in rows] + [["x"]]
    docs = [r["source"][:500] for r in rows] + ["a document"]
    module = _module("unieval")
    first = module.compute(predictions=hyps, references=refs, sources=docs, model=models["t5"],
                           use_aggregator=False)
    again = score_rows(get_scorer("unieval", model=models["t5"]), hyps[::-1], refs[::-1],
                       docs[::-1], cache=None)
    dims = ("coherence", "consistency", "fluency", "relevance")
    for i in range(len(hyps)):
        assert all(0 < first[k][i] < 1 for k in first)
        assert first["overall"][i] == pytest.approx(sum(first[d][i] for d in dims) / 4)
        for key in first:
            assert first[key][i] == pytest.approx(again[key][len(hyps) - 1 - i], abs=1e-6)
    assert len({round(x, 6) for x in first["coherence"]}) > 1


def test_unieval_relevance_against_the_source(models) -> None:
    scorer = get_scorer("unieval", model=models["t5"], relevance_against="source")
    out = score_rows(scorer, ["A cat sat."], None, ["The cat sat on the mat."], cache=None)
    assert out["relevance"][0] == pytest.approx(_direct_yes(models["t5"], unieval_question(
        "relevance", "A cat sat.", reference="The cat sat on the mat.")), abs=1e-5)
    with pytest.raises(ValueError, match="references"):
        _module("unieval").compute(predictions=["A cat."], sources=["Doc."], model=models["t5"])
    with pytest.raises(ValueError, match="relevance_against"):
        get_scorer("unieval", relevance_against="summary")


# -- MENLI ---------------------------------------------------------------------------------------


P = {"e": 0.6, "n": 0.3, "c": 0.1}


@pytest.mark.parametrize(("formula", "expected"), [
    ("e", 0.6), ("-c", -0.1), ("e-n", 0.3), ("e-c", 0.5), ("e-n-2c", 0.1)])
def test_menli_formulas_by_hand(formula: str, expected: float) -> None:
    assert nli.apply_formula(formula, P) == pytest.approx(expected)


#: known class probabilities of (premise, hypothesis) pairs
TABLE = {("R", "H"): {"e": 0.7, "n": 0.2, "c": 0.1}, ("H", "R"): {"e": 0.1, "n": 0.3, "c": 0.6},
         ("R2", "H"): {"e": 0.3, "n": 0.3, "c": 0.4}, ("H", "R2"): {"e": 0.5, "n": 0.5, "c": 0.0},
         ("S", "H"): {"e": 0.2, "n": 0.7, "c": 0.1}}


@pytest.mark.parametrize(("direction", "formula", "refs", "pool", "expected"), [
    ("ref->hyp", "e", ("R",), "mean", 0.7),
    ("hyp->ref", "e", ("R",), "mean", 0.1),
    ("avg", "e", ("R",), "mean", 0.4),
    ("avg", "e-n-2c", ("R",), "mean", 0.4 - 0.25 - 2 * 0.35),
    ("avg", "-c", ("R", "R2"), "mean", (-0.35 + -0.2) / 2),
    ("avg", "-c", ("R", "R2"), "max", -0.2),
    ("ref->hyp", "e-c", ("R", "R2"), "max", 0.6),
    ("src->hyp", "e-n", (), "mean", -0.5),
])
def test_menli_directions_on_known_probabilities(monkeypatch, direction, formula, refs, pool,
                                                 expected) -> None:
    monkeypatch.setattr(nli.Menli, "probabilities", lambda self, pairs: {p: TABLE[p] for p in pairs})
    scorer = get_scorer("menli", model="unused", direction=direction, formula=formula,
                        multi_reference=pool)
    [row] = scorer.score_batch([ScoreInput("H", refs, "S" if direction == "src->hyp" else None)])
    assert row["menli"] == pytest.approx(expected)


def test_menli_label_orders() -> None:
    from transformers import BertConfig

    named = BertConfig(id2label={0: "CONTRADICTION", 1: "NEUTRAL", 2: "ENTAILMENT"})
    assert nli.label_indices(named, "any") == {"c": 0, "n": 1, "e": 2}
    generic = BertConfig(num_labels=3)  # LABEL_0..2: the table decides
    assert nli.label_indices(generic, nli.NLI_R) == {"e": 0, "n": 1, "c": 2}
    assert nli.label_indices(generic, nli.NLI_D) == {"c": 0, "n": 1, "e": 2}
    assert nli.label_indices(generic, "x", "n,c,e") == {"n": 0, "c": 1, "e": 2}
    with pytest.raises(ValueError, match="label_order"):
        nli.label_indices(generic, "some/unknown-nli")
    with pytest.raises(ValueError, match="label_order"):
        nli.parse_label_order("e,e,c")


def test_menli_parity_and_label_order_permutation(models, wmt, tmp_path) -> None:
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    # the same weights with the classifier's rows and id2label in the order c,n,e
    model = AutoModelForSequenceClassification.from_pretrained(models["nli"])
    perm = [2, 1, 0]
    with torch.no_grad():
        model.classifier.weight.copy_(model.classifier.weight[perm].clone())
        model.classifier.bias.copy_(model.classifier.bias[perm].clone())
    model.config.id2label = {0: "CONTRADICTION", 1: "NEUTRAL", 2: "ENTAILMENT"}
    model.config.label2id = {v: k for k, v in model.config.id2label.items()}
    model.save_pretrained(tmp_path)
    AutoTokenizer.from_pretrained(models["nli"]).save_pretrained(tmp_path)

    for formula in ("e", "e-n-2c"):
        a = score_rows(get_scorer("menli", model=models["nli"], direction="avg", formula=formula),
                       wmt["hyp"], wmt["ref"], cache=None)["menli"]
        b = score_rows(get_scorer("menli", model=str(tmp_path), direction="avg", formula=formula),
                       wmt["hyp"], wmt["ref"], cache=None)["menli"]
        assert a == pytest.approx(b, abs=1e-6)
        assert len({round(x, 6) for x in a}) > 1

    tokenizer = AutoTokenizer.from_pretrained(models["nli"])
    direct = AutoModelForSequenceClassification.from_pretrained(models["nli"]).eval()
    with torch.no_grad():
        probs = torch.softmax(direct(**tokenizer([wmt["ref"][0]], [wmt["hyp"][0]],
                                                 return_tensors="pt")).logits[0], dim=-1)
    out = score_rows(get_scorer("menli", model=models["nli"], formula="e-c"), wmt["hyp"][:1],
                     wmt["ref"][:1], cache=None)["menli"][0]
    assert out == pytest.approx(float(probs[0] - probs[2]), abs=1e-6)  # e,n,c order


def test_menli_minmax_combination_by_hand() -> None:
    assert minmax([2.0, 4.0, 3.0]) == [0.0, 1.0, 0.5]
    assert minmax([5.0, 5.0]) == [0.0, 0.0]
    assert nli.combine([0.2, 0.6, 1.0], [10.0, 30.0, 20.0], 0.2) == pytest.approx([0.0, 0.9, 0.6])
    with pytest.raises(ValueError, match="one score of each per row"):
        nli.combine([0.1], [1.0, 2.0])
    with pytest.raises(ValueError, match="nli_weight"):
        nli.combine([0.1], [1.0], 1.5)


def test_menli_module_combination_with_another_module(models, wmt) -> None:
    menli, chrf = _module("menli"), _module("chrf")
    out = menli.compute(predictions=wmt["hyp"], references=wmt["ref"], model=models["nli"],
                        combine_with=chrf, nli_weight=0.3, use_aggregator=False)
    chrf_rows = chrf.compute(predictions=wmt["hyp"], references=wmt["ref"],
                             use_aggregator=False)["score"]
    assert out["combined"] == pytest.approx(nli.combine(out["menli"], chrf_rows, 0.3))

    class TwoOutputs:
        """A metric with two per-row outputs: which one to combine with must be said."""

        def compute(self, **inputs: Any) -> dict[str, list[float]]:
            n = len(inputs["predictions"])
            return {"x": [float(i) for i in range(n)], "y": [float(-i) for i in range(n)]}

    with pytest.raises(ValueError, match="combine_key"):
        menli.compute(predictions=wmt["hyp"], references=wmt["ref"], model=models["nli"],
                      combine_with=TwoOutputs())
    flipped = menli.compute(predictions=wmt["hyp"], references=wmt["ref"], model=models["nli"],
                            combine_with=TwoOutputs(), combine_key="y", use_aggregator=False)
    assert flipped["combined"] == pytest.approx(
        nli.combine(flipped["menli"], [float(-i) for i in range(len(wmt["hyp"]))]))


def test_menli_reference_free_and_bad_input(models, wmt) -> None:
    menli = _module("menli")
    free = menli.compute(predictions=wmt["hyp"][:2], sources=wmt["src"][:2], model=models["nli"],
                         direction="src->hyp", use_aggregator=False)
    ref_based = score_rows(get_scorer("menli", model=models["nli"]), wmt["hyp"][:2],
                           wmt["src"][:2], cache=None)  # the same pairs given as references
    assert free["menli"] == pytest.approx(ref_based["menli"], abs=1e-6)
    with pytest.raises(ValueError, match="sources"):
        menli.compute(predictions=["a"], references=["b"], model=models["nli"], direction="src->hyp")
    with pytest.raises(ValueError, match="references"):
        menli.compute(predictions=["a"], model=models["nli"])
    with pytest.raises(ValueError, match="direction"):
        get_scorer("menli", direction="both")
    with pytest.raises(ValueError, match="menli' has no option 'formulas'.*mean 'formula'"):
        get_scorer("menli", formulas="e")
    assert get_scorer("menli").config["model"] == nli.NLI_R
    assert get_scorer("menli", direction="src->hyp").config["model"] == nli.XNLI_D
    assert get_scorer("menli", model="NLI-D").config["model"] == nli.NLI_D


# -- BLEURT --------------------------------------------------------------------------------------


def test_bleurt_parity_with_bleurt_pytorch(models, wmt) -> None:
    from bleurt_pytorch import BleurtForSequenceClassification, BleurtTokenizer

    tokenizer = BleurtTokenizer.from_pretrained(models["bleurt"])
    model = BleurtForSequenceClassification.from_pretrained(models["bleurt"]).eval()
    with torch.no_grad():
        direct = model(**tokenizer(wmt["ref"], wmt["hyp"], padding="longest",
                                   return_tensors="pt")).logits.flatten().tolist()
    out = _module("bleurt_score").compute(predictions=wmt["hyp"], references=wmt["ref"],
                                          model=models["bleurt"], use_aggregator=False)["bleurt"]
    assert out == pytest.approx(direct, abs=1e-5)
    two = score_rows(get_scorer("bleurt", model=models["bleurt"]), wmt["hyp"][:1],
                     [[wmt["ref"][0], wmt["ref"][1]]], cache=None)["bleurt"][0]
    with torch.no_grad():
        second = model(**tokenizer([wmt["ref"][1]], [wmt["hyp"][0]],
                                   return_tensors="pt")).logits.item()
    assert two == pytest.approx((direct[0] + second) / 2, abs=1e-5)
