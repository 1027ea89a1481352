"""The shared scoring layer: U distinct inputs cost U evaluations, the persistent cache is
correct across processes and kills, and bad input gets a clear error naming the argument."""

from __future__ import annotations

import multiprocessing
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
from collections.abc import Sequence
from pathlib import Path

import pytest

from blindspot.scoring import ScoreCache, ScoreInput, Scorer, score_corpus, score_rows

pytestmark = pytest.mark.quick  # make check: no model load


class CountingScorer(Scorer):
    """Length of the hypothesis minus the number of references; counts what it is asked."""

    name = "counting"
    outputs = ("length", "refs")
    uses_references = "optional"

    def __init__(self, **config):
        super().__init__(**config)
        self.seen: list[ScoreInput] = []
        self.batches: list[int] = []

    def score_batch(self, batch: Sequence[ScoreInput]) -> list[dict[str, float]]:
        self.seen.extend(batch)
        self.batches.append(len(batch))
        offset = self.config.get("offset", 0)
        return [{"length": float(len(i.hypothesis) + offset), "refs": float(len(i.references))}
                for i in batch]

    def score_corpus(self, inputs):
        return {"length": float(sum(len(i.hypothesis) for i in inputs)), "refs": 0.0}


def test_u_distinct_inputs_cost_u_evaluations(tmp_path: Path) -> None:
    scorer = CountingScorer()
    hyps = ["a", "bb", "a", "ccc", "bb", "a"]
    refs = [["x"], ["y"], ["x"], ["z"], ["other"], ["x"]]
    out = score_rows(scorer, hyps, refs, cache=ScoreCache(tmp_path / "s.sqlite"), batch_size=2)
    assert out["length"] == [1, 2, 1, 3, 2, 1]
    assert len(scorer.seen) == 4  # ("bb", "other") differs from ("bb", "y")
    assert scorer.batches == [2, 2]
    # sorted by length, longest first, so batches pad little
    assert [i.hypothesis for i in scorer.seen][:2] == ["bb", "ccc"] or \
        scorer.seen[0].cost() >= scorer.seen[-1].cost()


def test_warm_cache_computes_nothing_and_config_changes_the_key(tmp_path: Path) -> None:
    cache = ScoreCache(tmp_path / "s.sqlite")
    score_rows(CountingScorer(), ["one", "two"], None, cache=cache)
    warm = CountingScorer()
    assert score_rows(warm, ["two", "one"], None, cache=cache)["length"] == [3, 3]
    assert warm.seen == []
    other = CountingScorer(offset=10)
    assert score_rows(other, ["one"], None, cache=cache)["length"] == [13]
    assert len(other.seen) == 1


def test_no_cache_option(tmp_path: Path) -> None:
    scorer = CountingScorer()
    score_rows(scorer, ["x"], cache=None)
    score_rows(scorer, ["x"], cache=None)
    assert len(scorer.seen) == 2


def test_corpus_scores_are_cached_by_whole_set(tmp_path: Path) -> None:
    cache = ScoreCache(tmp_path / "c.sqlite")
    assert score_corpus(CountingScorer(), ["ab", "c"], cache=cache)["length"] == 3
    assert score_corpus(CountingScorer(), ["ab", "cd"], cache=cache)["length"] == 4


@pytest.mark.parametrize("kwargs, message", [
    (dict(predictions="a string", references=None), "predictions must be a list"),
    (dict(predictions=["a", None], references=None), r"predictions\[1\] must be a string"),
    (dict(predictions=["a", "b"], references=[["x"]]), "references must have one item per prediction"),
    (dict(predictions=["a"], references=[3]), r"references\[0\] must be a string or a list"),
    (dict(predictions=["a"], references=[["x"]], sources=["s", "t"]), "sources must have one item"),
])
def test_bad_input_names_the_argument(kwargs, message) -> None:
    with pytest.raises(ValueError, match=message):
        score_rows(CountingScorer(), cache=None, **kwargs)


def test_reference_based_metric_without_references() -> None:
    class NeedsRefs(CountingScorer):
        uses_references = "required"

    with pytest.raises(ValueError, match="needs references"):
        score_rows(NeedsRefs(), ["a"], None, cache=None)
    with pytest.raises(ValueError, match=r"references\[0\] is empty"):
        score_rows(NeedsRefs(), ["a"], [[]], cache=None)


def test_empty_strings_score() -> None:
    assert score_rows(CountingScorer(), ["", ""], [[""], [""]], cache=None)["length"] == [0, 0]


def _writer(path: str, start: int, count: int) -> None:
    cache = ScoreCache(path)
    for i in range(start, start + count, 10):
        cache.put_many((f"k{j}", {"v": j}) for j in range(i, i + 10))


def test_two_processes_writing_at_once(tmp_path: Path) -> None:
    path = str(tmp_path / "shared.sqlite")
    ScoreCache(path)
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(path, start, 500)) for start in (0, 250)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    cache = ScoreCache(path)
    values = cache.get_many([f"k{j}" for j in range(750)])
    assert len(values) == 750 and all(values[f"k{j}"] == {"v": j} for j in range(750))


def test_killed_writer_leaves_a_usable_cache(tmp_path: Path) -> None:
    path = tmp_path / "killed.sqlite"
    script = textwrap.dedent(f"""
        from blindspot.scoring import ScoreCache
        cache = ScoreCache({str(path)!r})
        i = 0
        while True:
            cache.put_many((f"k{{i}}-{{j}}", {{"v": j}}) for j in range(50))
            i += 1
            if i == 20:
                print("ready", flush=True)
    """)
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "ready"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    con = sqlite3.connect(path)
    assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    cache = ScoreCache(path)
    n = len(cache)
    assert n >= 20 * 50 and n % 50 == 0  # whole batches only: each batch is one transaction
    cache.put_many([("after", {"v": 1})])
    assert cache.get_many(["after"]) == {"after": {"v": 1}}
