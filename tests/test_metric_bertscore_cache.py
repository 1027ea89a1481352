"""BERTScore's embedding cache: each distinct text is encoded once per scorer, and the scores stay
bert_score's own (checked against direct ``bert_cos_score_idf`` / ``bert_score.score`` calls on
real CNN/DM rows with their 10 references, idf on and off, with and without baseline rescaling)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pytest
import torch
from engine_support import cnndm_rows

from blindspot.models import resolve_model
from blindspot.scoring.engine import score_rows
from blindspot.scoring.scorer import get_scorer

TOLERANCE = 1e-6
KEYS = ("precision", "recall", "f1")
LAYER = 6


@pytest.fixture(scope="module")
def rows() -> list[dict]:
    return cnndm_rows(6)


@pytest.fixture(scope="module")
def corpus(rows: list[dict]) -> list[str]:
    return [ref for row in rows for ref in row["references"]]


def variant(text: str) -> str:
    """A perturbed hypothesis: the gold without its last word."""
    return text.rsplit(" ", 1)[0]


def flat_pairs(hyps: list[str], refs: list[list[str]]) -> tuple[list[str], list[str]]:
    return ([h for h, rs in zip(hyps, refs, strict=True) for _ in rs], [r for rs in refs for r in rs])


def direct_pairs(scorer, hyps: list[str], refs: list[str]) -> torch.Tensor:
    """(N, 3) P, R, F of a direct bert_score call on the pairs, with the scorer's model and idf."""
    from bert_score.utils import bert_cos_score_idf

    return bert_cos_score_idf(scorer.model(), refs, hyps, scorer.tokenizer(), scorer.idf_dict(),
                              batch_size=scorer.batch_size, device=scorer.device).cpu()


def mean_by_row(pairs: torch.Tensor, refs: list[list[str]]) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {key: [] for key in KEYS}
    start = 0
    for rs in refs:
        block = pairs[start: start + len(rs)].double().mean(dim=0).tolist()
        for key, value in zip(KEYS, block, strict=True):
            out[key].append(value)
        start += len(rs)
    return out


def assert_close(got: dict[str, list[float]], want: dict[str, list[float]]) -> None:
    for key in KEYS:
        assert len(got[key]) == len(want[key])
        worst = max(abs(a - b) for a, b in zip(got[key], want[key], strict=True))
        assert worst < TOLERANCE, (key, worst)


@contextmanager
def encoder_rows(scorer) -> Iterator[list[int]]:
    """Counts the texts the (shared) encoder runs on inside the block, by a forward hook."""
    seen = [0]
    handle = scorer.model().register_forward_hook(
        lambda module, args, output: seen.__setitem__(0, seen[0] + int(args[0].shape[0])))
    try:
        yield seen
    finally:
        handle.remove()


def write_baseline(path) -> str:
    lines = ["LAYER,P,R,F"] + [f"{n},{0.1 + n / 100},{0.2 + n / 100},{0.3 + n / 100}"
                               for n in range(7)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(path)


# -- same scores as bert_score -------------------------------------------------------------------

@pytest.mark.parametrize("idf", [False, True])
def test_pair_scores_equal_bert_cos_score_idf(rows, corpus, idf):
    scorer = get_scorer("bertscore", model_type="minilm", idf=idf,
                        idf_references=corpus if idf else None, batch_size=16)
    hyps, refs = flat_pairs([r["gold"] for r in rows], [r["references"] for r in rows])
    want = direct_pairs(scorer, hyps, refs)
    got = scorer.pair_scores(hyps, refs)
    assert got.shape == want.shape == (len(refs), 3)
    assert float((got - want).abs().max()) < TOLERANCE
    # warm: every text from the cache, the same numbers again
    again = scorer.pair_scores(hyps, refs)
    assert torch.equal(again, got)


@pytest.mark.parametrize("idf", [False, True])
def test_multi_reference_rows_with_baseline_equal_the_direct_mean(tmp_path, rows, corpus, idf):
    baseline = write_baseline(tmp_path / "baseline.tsv")
    options = dict(model_type="minilm", idf=idf, idf_references=corpus if idf else None)
    scorer = get_scorer("bertscore", baseline_path=baseline, **options)
    golds, refs = [r["gold"] for r in rows], [r["references"] for r in rows]
    variants = [variant(g) for g in golds]
    # gold first, then a variant against the same references: the second call is warm
    for hyps in (golds, variants):
        got = score_rows(scorer, hyps, refs, cache=None)
        raw = direct_pairs(get_scorer("bertscore", **options), *flat_pairs(hyps, refs))
        b = torch.tensor([0.16, 0.26, 0.36])  # the written file's row of layer 6
        assert_close(got, mean_by_row((raw - b) / (1 - b), refs))


def test_single_reference_equals_bert_score_score_with_idf_and_rescaling(tmp_path, rows):
    import bert_score

    baseline = write_baseline(tmp_path / "baseline.tsv")
    golds, refs = [r["gold"] for r in rows], [r["references"][0] for r in rows]
    scorer = get_scorer("bertscore", model_type="minilm", idf=True, idf_references=refs,
                        baseline_path=baseline)
    score_rows(scorer, [variant(g) for g in golds], refs, cache=None)  # references now cached
    got = score_rows(scorer, golds, refs, cache=None)
    # nthreads=0: idf counted in this process (bert_score's default pool forks this threaded
    # process, and a forked child can wait forever on a lock it inherited held)
    p, r, f = bert_score.score(golds, refs, model_type=resolve_model("minilm"), num_layers=LAYER,
                               idf=True, lang="en", rescale_with_baseline=True,
                               baseline_path=baseline, nthreads=0)
    assert_close(got, {"precision": p.tolist(), "recall": r.tolist(), "f1": f.tolist()})


# -- each text encoded once ----------------------------------------------------------------------

def test_references_are_not_encoded_again(rows):
    scorer = get_scorer("bertscore", model_type="minilm")
    golds, refs = [r["gold"] for r in rows], [r["references"] for r in rows]
    distinct_refs = len({ref for rs in refs for ref in rs})
    with encoder_rows(scorer) as first:
        score_rows(scorer, golds, refs, cache=None)
    assert first[0] == scorer.encoded_texts == distinct_refs + len(set(golds))
    with encoder_rows(scorer) as second:  # a perturbed cell: only its new hypotheses
        score_rows(scorer, [variant(g) for g in golds], refs, cache=None)
    assert second[0] == len({variant(g) for g in golds})
    with encoder_rows(scorer) as third:  # nothing new at all
        score_rows(scorer, golds, refs, cache=None)
    assert third[0] == 0
    assert scorer.encoded_texts == first[0] + second[0]


def test_a_text_in_several_roles_and_batches_is_encoded_once(rows):
    scorer = get_scorer("bertscore", model_type="minilm", batch_size=4)
    refs = rows[0]["references"]
    hyps = refs[:3] + [rows[0]["gold"]]  # references also scored as hypotheses
    with encoder_rows(scorer) as seen:
        score_rows(scorer, hyps, [refs] * len(hyps), cache=None, batch_size=1)
    assert seen[0] == len(set(refs) | set(hyps))


def test_cache_is_bounded_and_eviction_keeps_scores(rows):
    golds, refs = [r["gold"] for r in rows], [r["references"] for r in rows]
    roomy = get_scorer("bertscore", model_type="minilm")
    want = score_rows(roomy, golds, refs, cache=None)

    few = get_scorer("bertscore", model_type="minilm")
    few.embedding_cache_texts = 5
    assert_close(score_rows(few, golds, refs, cache=None), want)
    assert len(few._embedding_cache) == 5

    small = get_scorer("bertscore", model_type="minilm")
    one_text = sum(t.numel() * t.element_size() for t in roomy.embeddings([golds[0]])[golds[0]])
    small.embedding_cache_bytes = 3 * one_text
    assert_close(score_rows(small, golds, refs, cache=None), want)
    assert 0 < small._embedding_bytes <= small.embedding_cache_bytes
    assert small._embedding_bytes == sum(t.numel() * t.element_size()
                                         for stats in small._embedding_cache.values()
                                         for t in stats)
    with encoder_rows(small) as seen:  # evicted texts are encoded again, correctly
        assert_close(score_rows(small, golds, refs, cache=None), want)
    assert seen[0] > 0


def test_cached_embeddings_are_not_modified_by_matching(rows):
    # greedy_cos_idf normalises its inputs in place: the cache must hand it copies
    scorer = get_scorer("bertscore", model_type="minilm")
    golds, refs = [r["gold"] for r in rows[:2]], [r["references"] for r in rows[:2]]
    score_rows(scorer, golds, refs, cache=None)
    before = {text: (emb.clone(), idf.clone()) for text, (emb, idf) in
              scorer._embedding_cache.items()}
    score_rows(scorer, [variant(g) for g in golds], refs, cache=None)
    for text, (emb, idf) in before.items():
        now = scorer._embedding_cache[text]
        assert torch.equal(now[0], emb) and torch.equal(now[1], idf)


def test_scorer_version_and_identity_unchanged():
    scorer = get_scorer("bertscore", model_type="minilm")
    assert scorer.version == "1"  # same scores, so cached scores stay valid
    bounded = get_scorer("bertscore", model_type="minilm")
    bounded.embedding_cache_texts = 1
    assert bounded.identity() == scorer.identity()
