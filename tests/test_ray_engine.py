"""The Ray engine gives the very results of the local engine, even when a worker dies.

This process drives the session's one Ray cluster (2 CPUs, loopback, no dashboard, no usage
stats: tests/ray_support.py). Each engine runs with its own fresh cache folder, so the Ray run
really computes everything itself.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from engine_support import write_cnndm_gold

from blindspot.protocols.rank import run_blindspot
from blindspot.runner.metric_spec import MetricSpec
from blindspot.scoring.cache import ScoreCache
from blindspot.scoring.custom import FunctionScorer

RUN = dict(task="summarization", tests="truncation,sentence_switching", seeds=[1, 2],
           progress=False)
#: one perturbing and one scoring actor (each is a process that imports blindspot), where the
#: pool's size is not what is tested: the byte-identity test runs the default pools
ONE_ACTOR = dict(actors=1, num_proc=1)


@pytest.fixture(scope="module")
def cluster(ray_driver: Any) -> Any:
    """This process joined to the session's Ray cluster (tests/conftest.py)."""
    return ray_driver


@pytest.fixture()
def gold_file(tmp_path: Path) -> Path:
    return write_cnndm_gold(tmp_path / "gold.jsonl", 8)


def _run(tmp_path: Path, name: str, monkeypatch: pytest.MonkeyPatch, data: Path, metrics: Any,
         **settings: Any) -> bytes:
    """results.json of a run with its own cache folder (``settings`` over :data:`RUN`)."""
    monkeypatch.setenv("BLINDSPOT_CACHE", str(tmp_path / f"cache-{name}"))
    run_blindspot(str(data), metrics, out=tmp_path / name, **{**RUN, **settings})
    return (tmp_path / name / "results.json").read_bytes()


def driver_must_not(*_: Any, **__: Any) -> Any:
    raise AssertionError("computed on the driver, not on Ray")


def _driver_must_not_compute(monkeypatch: pytest.MonkeyPatch, metrics: tuple[str, ...]) -> None:
    """From here on, perturbing or scoring in this (driver) process fails: Ray does the work."""
    import blindspot.perturbations.dataset as dataset
    from blindspot.scoring.scorer import SCORERS

    monkeypatch.setattr(dataset, "apply_item", driver_must_not)
    for name in metrics:
        monkeypatch.setattr(SCORERS[name], "score_batch", driver_must_not)


def test_ray_results_are_byte_identical_to_local(cluster: Any, gold_file: Path, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Registered metrics and a user's function from ``my_metric.py:score`` (it reaches the
    workers by value: they cannot import the user's file), on a whitespace test and two that
    read spaCy's parses (shipped to the workers once): the local engine's results, byte for
    byte, every cell perturbed and scored on Ray."""
    script = tmp_path / "my_metric.py"
    script.write_text("def score(predictions, references):\n"
                      "    return [len(p.split()) / len(r[0].split())\n"
                      "            for p, r in zip(predictions, references)]\n", encoding="utf-8")
    metrics = f"rouge,chrf,{script}:score"
    tests = {"tests": "truncation,sentence_switching,stopword_removal"}
    local = _run(tmp_path, "local", monkeypatch, gold_file, metrics, **tests)
    _driver_must_not_compute(monkeypatch, ("rouge", "chrf"))
    monkeypatch.setattr(FunctionScorer, "score_batch", driver_must_not)
    remote = _run(tmp_path, "ray", monkeypatch, gold_file, metrics, engine="ray", **tests)
    assert remote == local
    results = json.loads(remote)
    (dataset_entry,) = results["datasets"].values()
    metrics_seen = dataset_entry["metrics"]
    assert set(metrics_seen) == {"rouge.rougeL", "chrf.chrf", "score"}
    assert all(t["status"] in ("pass", "fail") for m in metrics_seen.values()
               for t in m["tests"].values())
    assert metrics_seen["score"]["tests"]["truncation"]["status"] == "pass"
    # the driver wrote the score cache: the same entries as the local run's, no more
    assert (len(ScoreCache(tmp_path / "cache-ray" / "scores.sqlite"))
            == len(ScoreCache(tmp_path / "cache-local" / "scores.sqlite")))

    # run again: the run state has every cell, so nothing is dispatched to Ray at all
    from blindspot.runner.ray_engine import RayEngine

    monkeypatch.setattr(RayEngine, "_map", driver_must_not)
    assert _run(tmp_path, "ray", monkeypatch, gold_file, metrics, engine="ray", **tests) == local


def test_ray_runs_a_chunked_run_to_the_whole_local_runs_bytes(
        cluster: Any, gold_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Ray is an engine of the one plan: each chunk of a chunked run perturbed and scored there."""
    local = _run(tmp_path, "local", monkeypatch, gold_file, "chrf")
    _driver_must_not_compute(monkeypatch, ("chrf",))
    assert _run(tmp_path, "ray", monkeypatch, gold_file, "chrf", engine="ray", chunk_size=5,
                **ONE_ACTOR) == local  # 8 rows: chunks of 5 and 3


def test_killed_worker_is_retried_and_each_score_written_once(
        cluster: Any, gold_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from ray_support import CrashOnceOverlap

    marker = tmp_path / "crashed"
    marker.write_text("local run: no crash")
    spec = MetricSpec("crash_once_overlap", "score", module=CrashOnceOverlap(marker))
    local = _run(tmp_path, "local", monkeypatch, gold_file, [spec])

    marker.unlink()
    written: Counter[str] = Counter()
    put_many = ScoreCache.put_many

    def counting_put_many(self: ScoreCache, items: Any) -> None:
        items = list(items)
        written.update(k for k, _ in items)
        put_many(self, items)

    monkeypatch.setattr(ScoreCache, "put_many", counting_put_many)
    remote = _run(tmp_path, "ray", monkeypatch, gold_file, [spec], engine="ray", **ONE_ACTOR)
    crashed_pid = marker.read_text()
    assert crashed_pid.isdigit() and int(crashed_pid) != os.getpid()  # a Ray worker really died
    assert remote == local
    assert written and max(written.values()) == 1
    assert len(written) == len(ScoreCache(tmp_path / "cache-ray" / "scores.sqlite"))


def test_unknown_engine_is_a_clear_error(gold_file: Path, tmp_path: Path) -> None:
    # run_blindspot is the rank protocol's run: its engine option is checked by the declaration,
    # with the message the command line gives
    with pytest.raises(ValueError, match="engine='spark' is not accepted by the rank protocol: "
                                         "engine must be an engine name: local, ray"):
        run_blindspot(str(gold_file), "rouge", out=tmp_path / "x", engine="spark", **RUN)


def test_engine_options_on_the_command_line(gold_file: Path, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from blindspot.cli import app

    done = CliRunner().invoke(app, ["run", "--data", str(gold_file), "--metrics", "chrf", "--tests",
                                    "truncation", "--seeds", "1", "--engine", "spark", "--out",
                                    str(tmp_path / "r")])
    assert done.exit_code == 1
    # --engine is the rank protocol's engine option, checked by its declaration
    assert ("engine='spark' is not accepted by the rank protocol: engine must be an engine name: "
            "local, ray") in " ".join(done.output.split())


def test_ray_options_without_the_ray_engine_are_an_error(gold_file: Path, tmp_path: Path) -> None:
    """--address on the default local engine would be dropped silently: it is refused instead."""
    from typer.testing import CliRunner

    from blindspot.cli import app

    done = CliRunner().invoke(app, ["run", "--data", str(gold_file), "--metrics", "chrf", "--tests",
                                    "truncation", "--seeds", "1", "--address", "auto",
                                    "--actors", "2", "--out", str(tmp_path / "r")])
    assert done.exit_code == 1
    assert ("--address, --actors only apply with --engine ray (this run's engine: local)"
            in " ".join(done.output.split()))  # the console wraps long lines
    assert not (tmp_path / "r" / "results.json").exists()


def test_planned_batches_are_the_batches_of_cell_by_cell_scoring(
        gold_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Computing ahead (what the Ray engine is handed) scores the very batches, in the very
    order, that scoring cell by cell does: why any engine gets the same numbers."""
    from blindspot.runner.engines import LocalEngine
    from blindspot.scoring.scorer import SCORERS

    batches: list[tuple[str, ...]] = []
    score_batch = SCORERS["chrf"].score_batch

    def recording(self: Any, batch: Any) -> Any:
        batches.append(tuple(item.hypothesis for item in batch))
        return score_batch(self, batch)

    monkeypatch.setattr(SCORERS["chrf"], "score_batch", recording)
    cell_by_cell = _run(tmp_path, "cells", monkeypatch, gold_file, "chrf", batch_size=5)
    one_by_one, batches[:] = list(batches), []
    ahead = _run(tmp_path, "ahead", monkeypatch, gold_file, "chrf", batch_size=5,
                 engine=LocalEngine(computes_ahead=True))
    assert ahead == cell_by_cell
    assert batches == one_by_one and len(batches) > 10
