"""Mark-Evaluate Petersen, BaryScore and DiscoScore: their formulas on vectors small enough to
compute by hand, and their scores on MiniLM checked against the encoder run directly."""

from __future__ import annotations

import numpy as np
import pytest

from blindspot.models import resolve_model
from blindspot.scorers.baryscore import bary_distance, barycenter
from blindspot.scorers.discoscore import focus_difference
from blindspot.scorers.mark_evaluate import knn_radii, me_petersen, petersen_estimate
from blindspot.scoring.engine import score_rows
from blindspot.scoring.scorer import get_scorer

# -- Mark-Evaluate Petersen, by hand ---------------------------------------------------------


@pytest.mark.quick
def test_knn_radii_by_hand() -> None:
    points = np.array([[0.0], [1.0], [3.0]])
    assert knn_radii(points, 1).tolist() == [1.0, 1.0, 2.0]
    assert knn_radii(points, 2).tolist() == [3.0, 2.0, 3.0]
    assert knn_radii(points, 0).tolist() == [0.0, 0.0, 0.0]
    assert knn_radii(np.array([[4.0]]), 1).tolist() == [0.0]


@pytest.mark.quick
def test_me_petersen_by_hand() -> None:
    reference = np.array([[0.0], [1.0]])  # radii 1 and 1
    hypothesis = np.array([[0.5], [0.6], [5.0], [5.1]])  # radii 0.1 each
    # hypothesis inside the reference's spheres: 0.5 and 0.6 (a = 2); reference points inside
    # the hypothesis' spheres: none (b = 0). M = 2 + 2, C = 4 + 0, R = 2: N_hat = 8, N = 6
    assert petersen_estimate(hypothesis, reference, 1) == pytest.approx(8.0)
    assert me_petersen(hypothesis, reference) == pytest.approx(1 - 2 / 6)
    assert me_petersen(reference, hypothesis) == pytest.approx(1 - 2 / 6)  # symmetric
    assert me_petersen(reference, reference) == 1.0  # every point recaptured: N_hat = N
    assert me_petersen(reference, reference + 100.0) == 0.0  # nothing recaptured
    # a duplicated vector counts once in the estimate, twice in N (the examination's counts):
    # N = 7, N_hat = 8
    assert me_petersen(np.vstack([hypothesis, hypothesis[:1]]), reference) == \
        pytest.approx(1 - 1 / 7)
    # a set of one vector: k drops to 0 for both sets, every radius 0
    assert me_petersen(np.array([[0.5]]), reference) == 0.0
    assert me_petersen(np.zeros((0, 1)), reference) == 0.0  # no token: the examination's 0


# -- BaryScore and DiscoScore, by hand ---------------------------------------------------------


def test_barycenter_and_distance_by_hand() -> None:
    # one token, two layers at (0, 0) and (2, 0): the barycenter is their midpoint
    layers = np.array([[[0.0, 0.0]], [[2.0, 0.0]]])
    assert barycenter(layers, np.array([1.0]))[0].tolist() == pytest.approx([1.0, 0.0])
    # squared Euclidean cost, uniform weights
    assert bary_distance(np.array([[1.0, 0.0]]), np.array([[1.0, 2.0]])) == pytest.approx(4.0)
    two = np.array([[0.0, 0.0], [0.0, 1.0]])
    assert bary_distance(two, two + np.array([3.0, 0.0])) == pytest.approx(9.0)


@pytest.mark.quick
def test_focus_difference_by_hand() -> None:
    hypothesis = {"cat": np.array([1.0, 0.0]), "dog": np.array([0.0, 1.0])}
    # the shared focus "cat" is 1 away (squared), over the hypothesis' two foci
    assert focus_difference(hypothesis, {"cat": np.array([0.0, 0.0])}) == pytest.approx(0.5)
    assert focus_difference(hypothesis, {"bird": np.array([5.0, 5.0])}) == 0.0  # nothing shared
    assert focus_difference({}, hypothesis) == 0.0


# -- on MiniLM ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def minilm():
    """MiniLM's tokenizer and encoder, loaded with transformers alone."""
    from transformers import AutoModel, AutoTokenizer

    path = resolve_model("minilm")
    return AutoTokenizer.from_pretrained(path), AutoModel.from_pretrained(path).eval()


def _hidden(minilm, ids: list[int], layer: int = -1) -> np.ndarray:
    import torch

    _, model = minilm
    with torch.no_grad():
        out = model(torch.tensor([ids]), output_hidden_states=True).hidden_states
    return out[layer][0].double().numpy()


def test_me_petersen_on_minilm_matches_the_encoder(minilm) -> None:
    tokenizer, _ = minilm
    hyp, ref = "The dog sat on the mat.", "The cat sat on the mat."

    def tokens(text: str) -> np.ndarray:  # encoded without [CLS], [SEP]; the last 5 layers
        ids = tokenizer(text, add_special_tokens=False)["input_ids"]
        return np.concatenate([_hidden(minilm, ids, layer) for layer in range(-5, 0)])

    out = score_rows(get_scorer("mark_evaluate", model_type="minilm"), [hyp, ref], [ref, ref],
                     cache=None)["me_petersen"]
    assert out[0] == pytest.approx(me_petersen(tokens(hyp), tokens(ref)), abs=1e-6)
    assert 0.0 < out[0] < 1.0 and out[1] == 1.0


def test_baryscore_on_minilm_matches_the_encoder(minilm) -> None:
    tokenizer, _ = minilm
    hyp, ref = "I hate these cakes!", "I like my cakes very much."

    def summary(text: str) -> np.ndarray:
        ids = tokenizer(text)["input_ids"]
        layers = np.stack([_hidden(minilm, ids, layer) for layer in range(-5, 0)])
        layers /= np.linalg.norm(layers, axis=-1, keepdims=True)
        return barycenter(layers, np.full(len(ids), 1.0 / len(ids)))

    scorer = get_scorer("baryscore", model_type="minilm")  # uniform weights by default
    out = score_rows(scorer, [hyp, ref], [ref, ref], cache=None)["baryscore"]
    assert out[0] == pytest.approx(bary_distance(summary(hyp), summary(ref)), rel=1e-4)
    assert out[1] == pytest.approx(0.0, abs=1e-9) and out[0] > 0.1
    with pytest.raises(ValueError, match="idf=True needs the reference corpus"):
        get_scorer("baryscore", model_type="minilm", idf=True)
    weighted = get_scorer("baryscore", model_type="minilm", idf=True,
                          idf_references=[ref, "I like tea."])
    assert score_rows(weighted, [hyp], [ref], cache=None)["baryscore"][0] != pytest.approx(out[0])


def test_discoscore_on_minilm_matches_the_encoder(minilm) -> None:
    tokenizer, _ = minilm
    # spaCy's tokens (reading="tokens"; the default, the authors' reading, is checked against
    # their code in test_reference_models.py): "[CLS] the cat sleeps ." and "[CLS] the cat eats
    # fish .": the focus "cat" is at position 2 of both; "fish" is the reference's alone
    def cat(text: str) -> np.ndarray:
        ids = [tokenizer.cls_token_id] + tokenizer(text, add_special_tokens=False)["input_ids"]
        vectors = _hidden(minilm, ids)  # MiniLM has 6 layers, fewer than DiscoScore's 8
        return vectors[2] / np.linalg.norm(vectors[2])

    hyp, ref = "The cat sleeps.", "The cat eats fish."
    scorer = get_scorer("discoscore", model_type="minilm", reading="tokens")
    assert scorer.config["num_layers"] == 6
    out = score_rows(scorer, [hyp, hyp, "It rains."], [ref, hyp, ref], cache=None)["discoscore"]
    assert out[0] == pytest.approx(float(np.sum((cat(hyp) - cat(ref)) ** 2)), rel=1e-5)
    assert out[0] > 0 and out[1] == 0.0
    assert out[2] == 0.0  # no shared noun: the authors' 0


@pytest.mark.quick
def test_bad_options_are_named() -> None:
    with pytest.raises(ValueError, match="k must be a positive integer"):
        get_scorer("mark_evaluate", model_type="minilm", k=0)
    with pytest.raises(ValueError, match="layers must be an integer between 1 and 7"):
        get_scorer("baryscore", model_type="minilm", layers=8, idf=False)


# -- every new metric through a blind-spot run -------------------------------------------------

NEW_METRICS = ("embedding_average@minilm", "vector_extrema@minilm", "greedy_matching@minilm",
               "wmd.wms@minilm", "sms.sms@minilm", "mark_evaluate@minilm", "baryscore@minilm",
               "discoscore@minilm")


def test_each_new_metric_gets_a_verdict_on_the_demo_data(tmp_path) -> None:
    import json

    from typer.testing import CliRunner

    from blindspot.cli import app

    out = tmp_path / "report"
    result = CliRunner().invoke(app, ["run", "--data", "demo", "--task", "translation",
                                      "--tests", "truncation", "--seeds", "1",
                                      "--metrics", ",".join(NEW_METRICS), "--out", str(out)])
    assert result.exit_code == 0, result.output
    (entry,) = json.loads((out / "results.json").read_text(encoding="utf-8"))["datasets"].values()
    assert len(entry["metrics"]) == len(NEW_METRICS)
    for metric, judged in entry["metrics"].items():
        test = judged["tests"]["truncation"]
        assert test["status"] in ("pass", "fail") and test["error"] is None, (metric, test)
        assert len(test["points"]) > 1  # the gold point and the truncation levels
