"""BERTScore and MoverScore: parity with bert_score on real WMT21 rows, hand-computed MoverScore
and idf cases on the real offline MiniLM encoder, one shared model, clear errors."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from itertools import islice
from pathlib import Path

import pytest
import torch
from bert_score.utils import model2layers
from conftest import SHARED_DATA

from blindspot.models import ModelNotAvailableError, load_bertscore_encoder, resolve_model
from blindspot.scorers._encoders import declared_layer_count, layer_count
from blindspot.scorers.bertscore import default_layer, tuned_layers
from blindspot.scorers.moverscore import idf_table
from blindspot.scoring.engine import score_rows
from blindspot.scoring.scorer import get_scorer

TOLERANCE = 1e-6
KEYS = ("precision", "recall", "f1")


def wmt_rows(n: int) -> list[dict]:
    """The first ``n`` WMT21 rows of the shared data (read in place)."""
    with open(SHARED_DATA / "wmt21_de_en_translation.jsonl", encoding="utf-8") as fh:
        return [json.loads(line) for line in islice(fh, n)]


@pytest.fixture(scope="module")
def minilm() -> str:
    return resolve_model("minilm")


@pytest.fixture(scope="module")
def rows() -> list[dict]:
    return wmt_rows(50)


@pytest.fixture(scope="module")
def pairs(rows: list[dict]) -> tuple[list[str], list[str]]:
    """A WMT21 system output and the reference of each row."""
    return [r["systems"]["Online-B"] for r in rows], [r["reference"] for r in rows]


@pytest.fixture(scope="module")
def ours(pairs: tuple[list[str], list[str]]) -> dict[str, list[float]]:
    cands, refs = pairs
    return score_rows(get_scorer("bertscore", model_type="minilm"), cands, refs, cache=None)


def direct(cands: list[str], refs: list, minilm: str, **options) -> dict[str, list[float]]:
    import bert_score

    p, r, f = bert_score.score(cands, refs, model_type=minilm, num_layers=6, **options)
    return {"precision": p.tolist(), "recall": r.tolist(), "f1": f.tolist()}


def assert_close(got: dict[str, list[float]], want: dict[str, list[float]]) -> None:
    for key in want:
        assert len(got[key]) == len(want[key])
        worst = max(abs(a - b) for a, b in zip(got[key], want[key], strict=True))
        assert worst < TOLERANCE, (key, worst)


# -- BERTScore parity ----------------------------------------------------------------------------

def test_bertscore_equals_a_direct_bert_score_call(pairs, ours, minilm):
    cands, refs = pairs
    assert_close(ours, direct(cands, refs, minilm))
    assert 0.5 < sum(ours["f1"]) / len(cands) < 1.0


def test_bertscore_idf_module_equals_direct_idf(pairs, minilm):
    import evaluate

    cands, refs = pairs
    module = evaluate.load("metrics/bertscore")
    got = module.compute(predictions=cands, references=refs, model_type="minilm", idf=True,
                         use_aggregator=False)
    # nthreads=0: bert_score counts idf in this process, as our scorer does; its default pool
    # forks this threaded process (torch, tqdm), and a forked child can wait forever on a lock
    assert_close(got, direct(cands, refs, minilm, idf=True, nthreads=0))


def test_multi_reference_is_the_mean_of_single_reference_scores(rows, pairs, ours):
    cands, refs = pairs[0][:20], pairs[1][:20]
    golds = [r["gold"] for r in rows[:20]]
    scorer = get_scorer("bertscore", model_type="minilm")
    with_gold = score_rows(scorer, cands, golds, cache=None)
    both = score_rows(scorer, cands, [[r, g] for r, g in zip(refs, golds, strict=True)], cache=None)
    for key in KEYS:
        mean = [(a + b) / 2 for a, b in zip(ours[key][:20], with_gold[key], strict=True)]
        assert max(abs(a - b) for a, b in zip(both[key], mean, strict=True)) < TOLERANCE


def test_baseline_rescaling_with_a_written_file(tmp_path, pairs, ours, minilm):
    cands, refs = pairs[0][:10], pairs[1][:10]
    baseline = tmp_path / "baseline.tsv"
    lines = ["LAYER,P,R,F"] + [f"{n},{0.1 + n / 100},{0.2 + n / 100},{0.3 + n / 100}"
                               for n in range(7)]
    baseline.write_text("\n".join(lines) + "\n", encoding="utf-8")
    got = score_rows(get_scorer("bertscore", model_type="minilm", baseline_path=str(baseline)),
                     cands, refs, cache=None)
    for key, b in zip(KEYS, (0.16, 0.26, 0.36), strict=True):  # row of layer 6
        want = [(s - b) / (1 - b) for s in ours[key][:10]]
        assert max(abs(x - y) for x, y in zip(got[key], want, strict=True)) < TOLERANCE
    assert_close(got, direct(cands, refs, minilm, lang="en", rescale_with_baseline=True,
                             baseline_path=str(baseline)))


def test_bertscore_cache_identity_follows_idf_corpus_and_baseline(tmp_path):
    plain = get_scorer("bertscore", model_type="minilm")
    one = get_scorer("bertscore", model_type="minilm", idf=True, idf_references=["a b", "c"])
    same = get_scorer("bertscore", model_type="minilm", idf=True, idf_references=["c", "a b"])
    other = get_scorer("bertscore", model_type="minilm", idf=True, idf_references=["a b", "d"])
    assert len({plain.identity(), one.identity(), other.identity()}) == 3
    assert one.identity() == same.identity()  # idf ignores the order of the corpus
    assert plain.identity() == get_scorer("bertscore", model_type="minilm",
                                          batch_size=8).identity()


# -- MoverScore ----------------------------------------------------------------------------------

def token_vector(minilm: str, text: str, position: int) -> torch.Tensor:
    """Last-layer embedding of one token, computed with plain transformers."""
    from transformers import AutoModel, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(minilm)
    model = AutoModel.from_pretrained(minilm).eval()
    with torch.no_grad():
        hidden = model(**tokenizer(text, return_tensors="pt")).last_hidden_state[0, position]
    return hidden.double() / hidden.double().norm()


def test_moverscore_identical_texts_score_the_maximum(pairs):
    texts = pairs[1][:8] + ["", "a"]
    for distance in ("euclidean", "cosine"):
        scorer = get_scorer("moverscore", model_type="minilm", distance=distance,
                            idf_references=texts)
        got = score_rows(scorer, texts, texts, cache=None)["moverscore"]
        assert all(abs(s - 1.0) < 1e-9 for s in got), got


def test_moverscore_of_two_one_token_texts_is_one_minus_their_distance(minilm):
    # with idf, [CLS] and [SEP] weigh 0 (every reference has them): one token a side
    u, v = token_vector(minilm, "cat", 1), token_vector(minilm, "dog", 1)
    corpus = ["cat", "dog"]
    euclid = get_scorer("moverscore", model_type="minilm", idf_references=corpus)
    cosine = get_scorer("moverscore", model_type="minilm", idf_references=corpus,
                        distance="cosine")
    assert score_rows(euclid, ["cat"], ["dog"], cache=None)["moverscore"][0] == \
        pytest.approx(1 - float((u - v).norm()), abs=TOLERANCE)
    assert score_rows(cosine, ["cat"], ["dog"], cache=None)["moverscore"][0] == \
        pytest.approx(float(u @ v), abs=TOLERANCE)


def test_moverscore_splits_mass_by_idf(minilm):
    # corpus of 3: idf(cat) = log(4/3) (in 2 texts), idf(dog) = log(4/2); one reference token,
    # so all mass moves to it: EMD = w_cat * d(cat, cat') + w_dog * d(dog, cat')
    corpus = ["cat", "cat dog", "bird"]
    scorer = get_scorer("moverscore", model_type="minilm", idf_references=corpus)
    got = score_rows(scorer, ["cat dog"], ["cat"], cache=None)["moverscore"][0]
    w_cat, w_dog = math.log(4 / 3), math.log(2)
    target = token_vector(minilm, "cat", 1)
    emd = (w_cat * float((token_vector(minilm, "cat dog", 1) - target).norm())
           + w_dog * float((token_vector(minilm, "cat dog", 2) - target).norm())) / (w_cat + w_dog)
    assert got == pytest.approx(1 - emd, abs=TOLERANCE)


def test_idf_weights_by_hand(minilm):
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(minilm)
    table = idf_table(["the cat sat", "the dog sat", "a bird"], tokenizer, 512)
    ids = dict(zip(["the", "cat", "sat", "dog", "a", "bird", "fish"],
                   tokenizer.convert_tokens_to_ids(["the", "cat", "sat", "dog", "a", "bird",
                                                     "fish"]), strict=True))
    assert table(ids["the"]) == pytest.approx(math.log(4 / 3))
    assert table(ids["sat"]) == pytest.approx(math.log(4 / 3))
    for word in ("cat", "dog", "a", "bird"):
        assert table(ids[word]) == pytest.approx(math.log(2))
    assert table(ids["fish"]) == pytest.approx(math.log(4))  # in no reference
    assert table(tokenizer.cls_token_id) == 0.0 and table(tokenizer.sep_token_id) == 0.0


def test_moverscore_mass_on_first_word_pieces_only():
    scorer = get_scorer("moverscore", model_type="minilm", idf=False)
    text = "Tokenization works, surprisingly!"  # token ##ization works , surprisingly !
    # without idf [CLS] and [SEP] weigh 1 as in moverscore_v2: token works surprisingly + 2
    assert len(scorer.clouds([text])[text].masses) == 5
    keep_all = get_scorer("moverscore", model_type="minilm", idf=False, remove_subwords=False,
                          remove_punctuation=False)
    assert len(keep_all.clouds([text])[text].masses) == len(
        keep_all.tokenizer().tokenize(text)) + 2


def test_empty_texts_score_without_crashing():
    for name in ("bertscore", "moverscore"):
        scorer = get_scorer(name, model_type="minilm", idf=False)
        out = score_rows(scorer, ["", "A text.", ""], ["A text.", "", ""], cache=None)
        assert all(math.isfinite(v) for values in out.values() for v in values)


# -- shared model, errors ------------------------------------------------------------------------

def test_model_is_loaded_once_and_shared(minilm):
    first = get_scorer("bertscore", model_type="minilm")
    second = get_scorer("bertscore", model_type=minilm, num_layers=6)
    mover = get_scorer("moverscore", model_type="minilm", idf=False)
    assert first.model() is second.model() is mover.model()
    assert first.model() is load_bertscore_encoder("minilm", 6)
    assert first.tokenizer() is second.tokenizer()


@pytest.mark.parametrize("name", ["bertscore", "moverscore"])
def test_unknown_model_fails_at_once_listing_offline_models(name):
    with pytest.raises(ModelNotAvailableError, match="minilm"):
        get_scorer(name, model_type="no-such-org/no-such-model")


def test_unknown_model_through_the_module():
    import evaluate

    module = evaluate.load("metrics/moverscore")
    with pytest.raises(ValueError, match="(?s)not available.*minilm"):
        module.compute(predictions=["a"], references=["a"], model_type="no-such-model")


def test_bad_options_are_clear_errors(tmp_path):
    with pytest.raises(ValueError, match="num_layers"):
        get_scorer("bertscore", model_type="minilm", num_layers=7)
    with pytest.raises(ValueError, match="idf_references"):
        get_scorer("moverscore", model_type="minilm")  # idf on, no corpus outside the module
    with pytest.raises(ValueError, match="distance"):
        get_scorer("moverscore", model_type="minilm", idf=False, distance="manhattan")
    with pytest.raises(ValueError, match="baseline_path"):
        get_scorer("bertscore", model_type="minilm", baseline_path=str(tmp_path / "missing.tsv"))
    with pytest.raises(ValueError, match="lang"):
        get_scorer("bertscore", model_type="minilm", rescale_with_baseline=True)


# -- naming the layer without importing torch ----------------------------------------------------


def test_tuned_layers_read_from_source_equal_bert_scores_table():
    assert tuned_layers() == model2layers
    assert default_layer("roberta-large") == 17  # the paper's layer (Zhang et al., 2020)


@pytest.mark.parametrize("name", ["minilm", "smollm2"])
def test_declared_layer_count_equals_transformers_config(name):
    from transformers import AutoConfig

    assert declared_layer_count(name) == AutoConfig.from_pretrained(resolve_model(name)).num_hidden_layers


def test_damaged_config_falls_to_transformers_clear_error(tmp_path, minilm):
    folder = tmp_path / "damaged"
    folder.mkdir()
    for file in Path(minilm).iterdir():  # the model's files, its config damaged
        (folder / file.name).symlink_to(file)
    (folder / "config.json").unlink()
    (folder / "config.json").write_text("{not json", encoding="utf-8")
    assert declared_layer_count(str(folder)) is None
    with pytest.raises(ModelNotAvailableError, match="not available"):
        layer_count(str(folder))


def test_a_cached_bertscore_scorer_imports_no_torch():
    code = ("import sys; from blindspot.scoring.scorer import get_scorer; "
            "get_scorer('bertscore', model_type='minilm').identity(); "
            "print(sorted(m for m in ('torch', 'transformers', 'bert_score') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
