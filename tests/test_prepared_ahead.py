"""The next batch prepared while this one is scored (issue 28, item 4), checked on a CPU.

On the device path GPT-PPL and BARTScore tokenize the next batch in a worker thread while the device scores
the current one (:func:`blindspot.scoring.engine.scores_in_turn`), and a local run streams every
job of a chunk through it. What must hold: the same numbers as batch by batch, the same order, an
error raised at its own batch's turn, the preparation really running beside the scoring, and a
run's ``results.json`` byte-identical either way. A tiny GPT-2 with SmolLM2's tokenizer.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from engine_support import wmt21_rows

from blindspot.protocols.rank import run_blindspot
from blindspot.scorers.gpt_ppl import CausalBatch, GptPpl
from blindspot.scoring.cache import MemoryScoreCache
from blindspot.scoring.engine import score_rows, scores_in_turn
from blindspot.scoring.scorer import ScoreInput, get_scorer
from blindspot.tiny_models import tiny_causal_lm, tiny_t5

TEXTS = [row["gold"] for row in wmt21_rows(12)]


@pytest.fixture(scope="module")
def causal_folder(tmp_path_factory: pytest.TempPathFactory) -> str:
    return tiny_causal_lm(tmp_path_factory.mktemp("tiny-gpt"))


def batches_of(texts: Sequence[str], size: int) -> list[list[ScoreInput]]:
    return [[ScoreInput(t) for t in texts[i: i + size]] for i in range(0, len(texts), size)]


@pytest.mark.parametrize(("precision", "ahead"), [(None, False), ("fp32", True), ("bf16", True)])
def test_only_the_device_path_prepares_ahead(causal_folder: str, precision: str | None,
                                             ahead: bool) -> None:
    """A CPU run with no precision asked computes as it always did, batch by batch."""
    scorer = GptPpl(model=causal_folder, precision=precision)
    assert scorer.prepares_ahead() is ahead


def test_batches_in_turn_score_as_batch_by_batch(causal_folder: str) -> None:
    scorer = GptPpl(model=causal_folder, precision="fp32", token_budget=64)
    batches = batches_of(TEXTS, 5)  # 5, 5, 2
    alone = [scorer.score_batch(batch) for batch in batches]
    assert list(scores_in_turn(scorer, batches)) == alone
    in_turn = score_rows(scorer, TEXTS, cache=MemoryScoreCache(), batch_size=5)["gpt_ppl"]
    at_once = score_rows(scorer, TEXTS, cache=None, batch_size=len(TEXTS))["gpt_ppl"]
    assert in_turn == pytest.approx(at_once, rel=1e-5)  # other batches: float rounding apart
    assert list(scores_in_turn(scorer, [])) == []


@pytest.mark.parametrize("kind", ["seq2seq", "causal"])
def test_bartscore_batches_in_turn_score_as_batch_by_batch(kind: str, causal_folder: str,
                                                           tmp_path: Path) -> None:
    model = tiny_t5(tmp_path / "t5") if kind == "seq2seq" else causal_folder
    rows = wmt21_rows(7)
    items = [ScoreInput(r["gold"], (r["reference"],), r["source"]) for r in rows]
    batches = [items[:3], items[3:6], items[6:]]
    plain = get_scorer("bartscore", model=model, model_kind=kind)
    fast = get_scorer("bartscore", model=model, model_kind=kind, precision="fp32",
                      token_budget=128)
    assert not plain.prepares_ahead() and fast.prepares_ahead()
    in_turn = list(scores_in_turn(fast, batches))
    assert in_turn == [fast.score_batch(batch) for batch in batches]
    for new, old in zip((s for b in in_turn for s in b),
                        (s for b in batches for s in plain.score_batch(b)), strict=True):
        assert new == pytest.approx(old, rel=1e-5)  # the device path, the row path's numbers


class _Watched(GptPpl):
    """GPT-PPL that records which thread prepares each batch, and whose scoring of a batch waits
    (up to 20 s) for the next batch's preparation to start: in turn, it starts at once; one
    batch after the other, never."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.prepared_in: list[str] = []
        self.started: dict[int, threading.Event] = {}
        self.overlapped: list[bool] = []

    def prepare_batch(self, batch: Sequence[ScoreInput]) -> CausalBatch:
        index = len(self.prepared_in)
        self.prepared_in.append(threading.current_thread().name)
        self.started.setdefault(index, threading.Event()).set()
        if "raise here" in batch[0].hypothesis:
            raise ValueError("this batch cannot be tokenized")
        return super().prepare_batch(batch)

    def score_prepared(self, batch: Sequence[ScoreInput], prepared: CausalBatch
                       ) -> list[dict[str, float]]:
        turn = len(self.overlapped)
        if turn + 1 < self.expected:
            following = self.started.setdefault(turn + 1, threading.Event())
            self.overlapped.append(following.wait(timeout=20))
        else:
            self.overlapped.append(True)
        return super().score_prepared(batch, prepared)

    expected = 0


def test_the_next_batch_is_prepared_in_a_worker_while_this_one_is_scored(
        causal_folder: str) -> None:
    scorer = _Watched(model=causal_folder, precision="fp32")
    batches = batches_of(TEXTS, 4)
    scorer.expected = len(batches)
    scores = list(scores_in_turn(scorer, batches))
    assert scorer.overlapped == [True] * len(batches)
    main = threading.current_thread().name
    assert scorer.prepared_in[0] == main  # the first loads the model here
    assert all(name.startswith("prepare-gpt_ppl") for name in scorer.prepared_in[1:])
    plain = GptPpl(model=causal_folder, precision="fp32")
    assert scores == [plain.score_batch(batch) for batch in batches]


def test_a_failed_preparation_is_raised_at_its_own_turn(causal_folder: str) -> None:
    scorer = _Watched(model=causal_folder, precision="fp32")
    batches = [*batches_of(TEXTS[:6], 3), [ScoreInput("raise here")], *batches_of(TEXTS[6:], 3)]
    scorer.expected = 3  # the third batch never gets scored
    turns = scores_in_turn(scorer, batches)
    first, second = next(turns), next(turns)
    assert len(first) == len(second) == 3
    with pytest.raises(ValueError, match="cannot be tokenized"):
        next(turns)
    assert len(scorer.prepared_in) == 3  # nothing after the failed batch was prepared


def test_a_run_that_streams_its_jobs_writes_the_same_bytes(
        causal_folder: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The local run computes a chunk's jobs ahead through the stream when its scorer prepares
    ahead; cell by cell instead, the very same results.json. No score cache: each run scores
    every text itself (and a run with the cache off and a progress bar no longer fails)."""
    monkeypatch.setenv("BLINDSPOT_SCORE_CACHE", "0")
    gold = tmp_path / "gold.jsonl"
    gold.write_text("".join(json.dumps({"id": str(i), "gold": text}) + "\n"
                            for i, text in enumerate(TEXTS)), encoding="utf-8")
    settings = dict(task="translation", tests="truncation,negation", seeds=[1, 2],
                    metric_options={"gpt_ppl": {"model": causal_folder, "precision": "fp32",
                                                "token_budget": 256}},
                    progress=True, chunk_size=5)
    streamed: list[str] = []  # the batches prepared in the worker thread, ahead
    real = GptPpl.prepare_batch

    def counting(self: GptPpl, batch: Sequence[ScoreInput]) -> CausalBatch:
        if threading.current_thread() is not threading.main_thread():
            streamed.append(threading.current_thread().name)
        return real(self, batch)

    with monkeypatch.context() as patch:
        patch.setattr(GptPpl, "prepare_batch", counting)
        run_blindspot(str(gold), "gpt_ppl", out=tmp_path / "ahead", **settings)
    with monkeypatch.context() as patch:
        patch.setattr(GptPpl, "prepares_ahead", lambda self: False)
        run_blindspot(str(gold), "gpt_ppl", out=tmp_path / "cells", **settings)
    assert len(streamed) > 3  # the chunks' jobs went through the stream, prepared ahead
    ahead = (tmp_path / "ahead" / "results.json").read_bytes()
    assert ahead == (tmp_path / "cells" / "results.json").read_bytes()
    (entry,) = json.loads(ahead)["datasets"]["gold.jsonl"]["metrics"].values()
    assert entry["options"]["precision"] == "fp32"
    assert all(t["status"] in ("pass", "fail") for t in entry["tests"].values())


def test_a_run_killed_while_streaming_resumes_to_the_same_bytes(
        causal_folder: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A kill (Ctrl-C) in the middle of a chunk's stream of jobs: what was scored before it is
    in the score cache, so the resumed run scores only the rest, and writes the full run's
    bytes."""
    gold = tmp_path / "gold.jsonl"
    gold.write_text("".join(json.dumps({"id": str(i), "gold": text}) + "\n"
                            for i, text in enumerate(TEXTS)), encoding="utf-8")
    settings = dict(task="translation", tests="truncation,negation", seeds=[1, 2],
                    metric_options={"gpt_ppl": {"model": causal_folder, "precision": "fp32"}},
                    progress=False, chunk_size=6)
    real = GptPpl.score_prepared

    def run(out: str, cache: str, scored: list[int], stop_after: int | None = None) -> None:
        def score_prepared(self: GptPpl, batch: Sequence[ScoreInput], prepared: CausalBatch
                           ) -> list[dict[str, float]]:
            if len(scored) == stop_after:
                raise KeyboardInterrupt
            scores = real(self, batch, prepared)
            scored.append(len(batch))
            return scores

        with monkeypatch.context() as patch:
            patch.setenv("BLINDSPOT_CACHE", str(tmp_path / cache))
            patch.setattr(GptPpl, "score_prepared", score_prepared)
            run_blindspot(str(gold), "gpt_ppl", out=tmp_path / out, **settings)

    full: list[int] = []
    run("full", "cache-full", full)
    whole = (tmp_path / "full" / "results.json").read_bytes()
    before: list[int] = []
    with pytest.raises(KeyboardInterrupt):
        run("resumed", "cache", before, stop_after=len(full) * 3 // 4)  # in the second chunk
    assert not (tmp_path / "resumed" / "results.json").exists()
    after: list[int] = []
    run("resumed", "cache", after)
    assert (tmp_path / "resumed" / "results.json").read_bytes() == whole
    assert before and after and sum(before) + sum(after) == sum(full)  # nothing scored twice
