"""The model metrics' device path (issue 28), checked on a CPU: precision keyed and signed apart,
batches by tokens, the LM head gathered in chunks, and a batch that runs out of memory under a
real allocator limit split and retried. Tiny models built from configs, the offline tokenizers."""

from __future__ import annotations

import json
import math
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from blindspot.scorers import _device
from blindspot.scoring.cache import MemoryScoreCache
from blindspot.scoring.engine import score_rows
from blindspot.scoring.scorer import ScoreInput, get_scorer
from blindspot.tiny_models import tiny_comet

TEXTS = ["The cat sat on the mat.", "Mat the on sat cat the.", "",
         "A much longer sentence that goes on about the weather in Paris during the spring.",
         "Hi", "Stocks fell sharply on Monday after the central bank raised its rates again."]


def tiny_causal_lm(folder: Path, vocab_from: str = "smollm2") -> str:
    """A 2-layer GPT-2 with SmolLM2's tokenizer (49,152 tokens), random weights."""
    import torch
    from transformers import AutoTokenizer, GPT2Config, GPT2LMHeadModel

    from blindspot.models import resolve_model

    tokenizer = AutoTokenizer.from_pretrained(resolve_model(vocab_from))
    torch.manual_seed(0)
    config = GPT2Config(n_layer=2, n_embd=32, n_head=2, vocab_size=len(tokenizer), n_positions=256)
    GPT2LMHeadModel(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return str(folder)


@pytest.fixture(scope="module")
def causal_folder(tmp_path_factory: pytest.TempPathFactory) -> str:
    return tiny_causal_lm(tmp_path_factory.mktemp("tiny-gpt"))


@pytest.mark.quick
def test_token_batches_fill_the_budget_longest_first() -> None:
    lengths = [5, 50, 20, 20, 7, 100, 1]
    batches = _device.token_batches(lengths, 60)
    assert sorted(i for batch in batches for i in batch) == list(range(len(lengths)))
    assert batches[0] == [5]  # longer than the budget: alone
    for batch in batches:
        assert lengths[batch[0]] == max(lengths[i] for i in batch)
        assert len(batch) == 1 or len(batch) * lengths[batch[0]] <= 60
    assert [len(b) for b in batches] == [1, 1, 3, 2]


@pytest.mark.quick
def test_an_unknown_precision_is_refused_with_the_valid_ones() -> None:
    with pytest.raises(ValueError, match="fp32, tf32, bf16, fp16, auto"):
        _device.checked_precision("fp8")
    with pytest.raises(ValueError, match="token_budget"):
        _device.checked_budget(0)


def test_precisions_are_keyed_and_cached_apart(causal_folder: str) -> None:
    plain = get_scorer("gpt_ppl", model=causal_folder)
    assert "precision" not in plain.identity()  # scores cached before the option stay valid
    fp32 = get_scorer("gpt_ppl", model=causal_folder, precision="fp32")
    bf16 = get_scorer("gpt_ppl", model=causal_folder, precision="bf16")
    auto = get_scorer("gpt_ppl", model=causal_folder, precision="auto")
    assert len({plain.identity(), fp32.identity(), bf16.identity()}) == 3
    assert auto.identity() == fp32.identity()  # auto is keyed by what it resolves to: a CPU
    cache = MemoryScoreCache()
    first = score_rows(fp32, TEXTS, cache=cache)["gpt_ppl"]
    half = score_rows(bf16, TEXTS, cache=cache)["gpt_ppl"]
    assert len(cache) == 2 * len(set(TEXTS))
    assert score_rows(auto, TEXTS, cache=cache)["gpt_ppl"] == first  # served from fp32's entries
    assert first != half
    for a, b in zip(first, half, strict=True):
        assert (math.isnan(a) and math.isnan(b)) or a == pytest.approx(b, rel=0.05)


def test_the_device_path_scores_as_the_row_path(causal_folder: str) -> None:
    """Token batches of every size, the head in chunks and the gather on the device give the
    scores of the float32 row-by-row computation."""
    items = [ScoreInput(t) for t in TEXTS]
    today = get_scorer("gpt_ppl", model=causal_folder).score_batch(items)
    for budget in (1, 40, 10_000):
        fast = get_scorer("gpt_ppl", model=causal_folder, precision="fp32",
                          token_budget=budget).score_batch(items)
        for old, new in zip(today, fast, strict=True):
            if math.isnan(old["gpt_ppl"]):
                assert math.isnan(new["gpt_ppl"])
            else:
                assert new["gpt_ppl"] == pytest.approx(old["gpt_ppl"], rel=1e-5)


_UNDER_A_LIMIT = textwrap.dedent("""
    import json, resource, sys, warnings
    import torch
    import blindspot.catalog
    from blindspot.scoring.scorer import get_scorer
    from blindspot.scoring.engine import score_rows

    name, options, columns = sys.argv[1], json.loads(sys.argv[2]), json.load(sys.stdin)
    torch.set_num_threads(1)
    def scores():
        return score_rows(get_scorer(name, **options), *columns, cache=None)[name]
    free = scores()
    with open("/proc/self/status") as fh:
        size = next(int(l.split()[1]) * 1024 for l in fh if l.startswith("VmSize:"))
    limit = size + int(sys.argv[3]) * 2 ** 20
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        capped = scores()
    print(json.dumps({"free": free, "capped": capped,
                      "splits": [str(w.message) for w in caught if "out of memory" in str(w.message)]}))
""")


def split_under_a_limit(name: str, options: dict[str, object], columns: list[list[str | None]],
                        megabytes: int) -> dict[str, list]:
    """Scores of ``columns`` by scorer ``name`` in a fresh process, free, then under an
    address-space limit of ``megabytes`` above what the process then holds (the CPU allocator's
    real refusal), with the out-of-memory warnings said in the capped run."""
    done = subprocess.run([sys.executable, "-c", _UNDER_A_LIMIT, name, json.dumps(options),
                           str(megabytes)], input=json.dumps(columns), capture_output=True,
                          text=True, timeout=240, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    result: dict[str, list] = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["splits"], "no batch ran out of memory: raise the texts or lower the limit"
    return result


def test_a_batch_that_runs_out_of_memory_is_split_and_retried(causal_folder: str) -> None:
    """Under an address-space limit, one batch of 48 texts does not fit (its (positions,
    49,152) logits are ~0.5 GB) and is split until it does."""
    texts = [f"{t} " * 4 + str(i) for i, t in enumerate(TEXTS * 8) if t]
    result = split_under_a_limit("gpt_ppl", {"model": causal_folder, "precision": "fp32",
                                             "token_budget": 1 << 20}, [texts], 300)
    assert result["splits"][0].startswith(f"gpt_ppl: a batch of {len(texts)} texts ran out of memory")
    assert result["capped"] == pytest.approx(result["free"], rel=1e-5)


def test_bertscore_device_path_matches_bert_score_computation() -> None:
    items = [ScoreInput("The cat sat on the mat.", ("A cat was sitting on the mat.",
                                                    "There is a cat on the mat.")),
             ScoreInput("", ("Something here.",)),
             ScoreInput("Dogs bark at night", ("At night the dogs of the city bark.",))]
    today = get_scorer("bertscore", model_type="minilm").score_batch(items)
    fp32 = get_scorer("bertscore", model_type="minilm", precision="fp32", token_budget=12)
    bf16 = get_scorer("bertscore", model_type="minilm", precision="bf16")
    assert fp32.identity() != bf16.identity()
    for old, new, half in zip(today, fp32.score_batch(items), bf16.score_batch(items), strict=True):
        assert new == pytest.approx(old, abs=1e-6)
        assert half == pytest.approx(old, abs=1e-2)
    assert today[1] == {"precision": 0.0, "recall": 0.0, "f1": 0.0}


@pytest.mark.parametrize("kind", ["seq2seq", "causal"])
def test_bartscore_device_path_scores_as_the_row_path(kind: str, causal_folder: str,
                                                      tmp_path: Path) -> None:
    from blindspot.tiny_models import tiny_t5

    model = tiny_t5(tmp_path / "t5") if kind == "seq2seq" else causal_folder
    items = [ScoreInput(TEXTS[0], (TEXTS[1], TEXTS[3]), TEXTS[5]), ScoreInput(TEXTS[4], (TEXTS[0],))]
    today = get_scorer("bartscore", model=model, model_kind=kind).score_batch(items)
    fast = get_scorer("bartscore", model=model, model_kind=kind, precision="fp32",
                      token_budget=30).score_batch(items)
    for old, new in zip(today, fast, strict=True):
        assert new.keys() == old.keys()
        for key, value in old.items():
            assert (math.isnan(value) and math.isnan(new[key])) or \
                new[key] == pytest.approx(value, rel=1e-5), key


def test_mlm_ppl_device_path_scores_as_the_row_path(tmp_path: Path) -> None:
    from blindspot.tiny_models import tiny_masked_lm

    model = tiny_masked_lm(tmp_path / "mlm")
    items = [ScoreInput(t) for t in TEXTS]
    today = get_scorer("mlm_ppl", model=model).score_batch(items)
    for budget in (8, 10_000):
        fast = get_scorer("mlm_ppl", model=model, precision="fp32",
                          token_budget=budget).score_batch(items)
        for old, new in zip(today, fast, strict=True):
            assert (math.isnan(old["mlm_ppl"]) and math.isnan(new["mlm_ppl"])) or \
                new["mlm_ppl"] == pytest.approx(old["mlm_ppl"], rel=1e-5)


def test_unieval_device_path_answers_as_the_row_path(tmp_path: Path) -> None:
    from blindspot.scorers.unieval import unieval_question
    from blindspot.tiny_models import tiny_t5

    model = tiny_t5(tmp_path / "t5")
    prompts = [unieval_question("fluency", t) for t in TEXTS]
    today = get_scorer("unieval", model=model).yes_probabilities(prompts)
    for budget in (40, 10_000):
        fast = get_scorer("unieval", model=model, precision="fp32", token_budget=budget)
        assert fast.yes_probabilities(prompts) == pytest.approx(today, rel=1e-5)
    half = get_scorer("unieval", model=model, precision="bf16").yes_probabilities(prompts)
    assert half == pytest.approx(today, abs=2e-2)


def test_bleurt_device_path_scores_as_the_row_path(tmp_path: Path) -> None:
    from blindspot.tiny_models import tiny_bleurt

    model = tiny_bleurt(tmp_path / "bleurt")
    items = [ScoreInput(TEXTS[0], (TEXTS[1], TEXTS[3])), ScoreInput(TEXTS[4], (TEXTS[5],)),
             ScoreInput(TEXTS[2], (TEXTS[0],))]
    today = get_scorer("bleurt", model=model).score_batch(items)
    fast = get_scorer("bleurt", model=model, precision="fp32", token_budget=40)
    assert fast.identity() != get_scorer("bleurt", model=model).identity()
    for old, new in zip(today, fast.score_batch(items), strict=True):
        assert new["bleurt"] == pytest.approx(old["bleurt"], abs=1e-4)  # padding widths differ


def test_menli_device_path_scores_as_the_row_path(tmp_path: Path) -> None:
    from blindspot.tiny_models import tiny_nli

    model = tiny_nli(tmp_path / "nli", label_order="c,n,e")
    items = [ScoreInput(TEXTS[0], (TEXTS[1], TEXTS[3])), ScoreInput(TEXTS[4], (TEXTS[5],))]
    for direction in ("ref->hyp", "avg"):
        today = get_scorer("menli", model=model, direction=direction).score_batch(items)
        fast = get_scorer("menli", model=model, direction=direction, precision="fp32",
                          token_budget=30).score_batch(items)
        for old, new in zip(today, fast, strict=True):
            assert new["menli"] == pytest.approx(old["menli"], rel=1e-5, abs=1e-6)


def test_moverscore_device_path_scores_as_the_row_path() -> None:
    items = [ScoreInput(TEXTS[0], (TEXTS[1], TEXTS[3])), ScoreInput(TEXTS[4], (TEXTS[5],)),
             ScoreInput(TEXTS[5], (TEXTS[0],))]
    refs = [r for item in items for r in item.references]
    today = get_scorer("moverscore", model_type="minilm", idf_references=refs).score_batch(items)
    fast = get_scorer("moverscore", model_type="minilm", idf_references=refs, precision="fp32",
                      token_budget=24)
    half = get_scorer("moverscore", model_type="minilm", idf_references=refs, precision="bf16")
    assert fast.identity() != half.identity()
    for old, new, low in zip(today, fast.score_batch(items), half.score_batch(items), strict=True):
        assert new["moverscore"] == pytest.approx(old["moverscore"], abs=1e-6)
        assert low["moverscore"] == pytest.approx(old["moverscore"], abs=2e-2)


def test_mauve_features_on_the_device_path_match_the_row_path(causal_folder: str) -> None:
    texts = [t for t in TEXTS if t] + [""]
    today = get_scorer("mauve", feature_model=causal_folder, feature_cache=None)
    fast = get_scorer("mauve", feature_model=causal_folder, feature_cache=None, precision="fp32",
                      token_budget=24)
    assert today._feature_key(texts[0]) != fast._feature_key(texts[0])  # cached apart
    for old, new in zip(today.text_features(texts), fast.text_features(texts), strict=True):
        assert new.shape == old.shape
        assert new == pytest.approx(old, abs=1e-5)


@pytest.fixture(scope="module")
def comet_folders(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    root = tmp_path_factory.mktemp("tiny-comet")
    return {"comet": tiny_comet(root / "comet"),
            "comet_qe": tiny_comet(root / "comet_qe", reference_free=True)}


@pytest.fixture(scope="module")
def demo_translations() -> dict[str, list[str]]:
    """The demo translation set's golds, references and German sources."""
    rows = [json.loads(line) for line in
            (Path(__file__).resolve().parents[1] / "blindspot" / "demo" / "translation.jsonl")
            .read_text(encoding="utf-8").splitlines()]
    return {"hyp": [r["gold"] for r in rows], "ref": [r["reference"] for r in rows],
            "src": [r["source"] for r in rows]}


def _comet_samples(name: str, demo: dict[str, list[str]]) -> list[dict[str, str]]:
    return [{"src": s, "mt": h} | ({"ref": r} if name == "comet" else {})
            for s, h, r in zip(demo["src"], demo["hyp"], demo["ref"], strict=True)]


@pytest.mark.parametrize("name", ["comet", "comet_qe"])
def test_comet_device_path_scores_as_comet_predict(name: str, comet_folders: dict[str, str],
                                                    demo_translations: dict[str, list[str]]
                                                    ) -> None:
    """Token batches of any size through COMET's own batch preparation and predict_step give
    ``model.predict``'s scores, in the samples' order (a repeated sample scored once)."""
    from blindspot.scorers.comet_score import import_comet

    samples = _comet_samples(name, demo_translations)
    samples = samples + samples[:3]
    model = import_comet().load_from_checkpoint(
        str(Path(comet_folders[name]) / "checkpoints" / "model.ckpt"))
    direct = [float(s) for s in model.predict(samples, batch_size=16, gpus=0,
                                              progress_bar=False).scores]
    for budget in (60, 1 << 20):
        fast = get_scorer(name, model=comet_folders[name], precision="fp32", token_budget=budget)
        assert fast.on_device_path()
        assert fast.predict(samples) == pytest.approx(direct, abs=1e-6)


def test_comet_bf16_runs_on_a_cpu_close_to_fp32_and_cached_apart(
        comet_folders: dict[str, str], demo_translations: dict[str, list[str]]) -> None:
    from blindspot.models import load_comet

    folder, demo = comet_folders["comet"], demo_translations
    columns = (demo["hyp"], demo["ref"], demo["src"])
    plain = get_scorer("comet", model=folder)
    fp32 = get_scorer("comet", model=folder, precision="fp32")
    bf16 = get_scorer("comet", model=folder, precision="bf16")
    assert "precision" not in plain.identity()  # scores cached before the option stay valid
    assert len({plain.identity(), fp32.identity(), bf16.identity()}) == 3
    cache = MemoryScoreCache()
    first = score_rows(fp32, *columns, cache=cache)["comet"]
    half = score_rows(bf16, *columns, cache=cache)["comet"]
    assert len(cache) == 2 * len(demo["hyp"])
    assert first == pytest.approx(score_rows(plain, *columns, cache=None)["comet"], abs=1e-6)
    assert first != half
    assert half == pytest.approx(first, abs=5e-3)
    # the half-precision copy is kept apart: the float32 model is unchanged
    half_model, full_model = load_comet(folder, "bfloat16"), load_comet(folder)
    assert str(next(half_model.encoder.parameters()).dtype) == "torch.bfloat16"
    assert str(next(half_model.estimator.parameters()).dtype) == "torch.float32"
    assert str(next(full_model.encoder.parameters()).dtype) == "torch.float32"


def test_a_comet_batch_that_runs_out_of_memory_is_split_and_retried(
        comet_folders: dict[str, str], demo_translations: dict[str, list[str]]) -> None:
    """48 long (source, hypothesis, reference) samples in one batch need some 170 MB (the
    encoder's attention over ~500 tokens a segment); under a limit of 100 MB more than the
    process holds, the batch is split until it fits, with the same scores."""
    demo, rows = demo_translations, range(48)
    hyps = [f"{demo['hyp'][i % 30]} " * 12 + str(i) for i in rows]
    refs = [f"{demo['ref'][i % 30]} " * 12 for i in rows]
    srcs = [f"{demo['src'][i % 30]} " * 12 for i in rows]
    result = split_under_a_limit("comet", {"model": comet_folders["comet"], "precision": "fp32",
                                           "token_budget": 1 << 20}, [hyps, refs, srcs], 100)
    assert result["splits"][0].startswith("comet: a batch of 48 texts ran out of memory")
    assert result["capped"] == pytest.approx(result["free"], abs=1e-6)
