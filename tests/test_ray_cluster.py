"""`blindspot run --engine ray --address ...` joins a Ray cluster started apart from the run.

The head is the session's one cluster (tests/ray_support.py), started as a user would (``ray
start --head``: 2 CPUs, its own temp dir, its own auth token, loopback only). ``blindspot run``
joins it in a process of its own, as a driver on a node of the cluster (``HOST:PORT``, what
``--address auto`` and RAY_ADDRESS resolve to) and through Ray Client (``ray://HOST:PORT``); both
give the local engine's results.json byte for byte.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from engine_support import write_cnndm_gold
from ray_support import Head
from typer.testing import CliRunner

#: a small real slice: 6 CNN/DM rows, two tests, one seed, one metric (tests/test_ray_engine.py
#: holds the engine to the local results on more; here it is the joining that is tested)
RUN_ARGS = ["--metrics", "chrf", "--tests", "truncation,sentence_switching", "--seeds", "1",
            "--task", "summarization"]
#: one perturbing and one scoring actor: each is a process that imports blindspot
ONE_ACTOR = ("--actors", "1", "--num-proc", "1")


@pytest.fixture(scope="module")
def head(ray_head: Head) -> Head:
    """The session's one Ray cluster (tests/ray_support.py), started as a user would."""
    return ray_head


@pytest.fixture(scope="module")
def gold(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_cnndm_gold(tmp_path_factory.mktemp("gold") / "gold.jsonl", 6)


@pytest.fixture(scope="module")
def local(gold: Path, tmp_path_factory: pytest.TempPathFactory) -> bytes:
    """results.json of the local engine (this process, a cache of its own)."""
    from blindspot.cli import app

    folder = tmp_path_factory.mktemp("local")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("BLINDSPOT_CACHE", str(folder / "cache"))
        done = CliRunner().invoke(app, ["run", "--data", str(gold), *RUN_ARGS,
                                        "--out", str(folder / "out")])
    assert done.exit_code == 0, done.output
    return (folder / "out" / "results.json").read_bytes()


def _blindspot(env: dict[str, str], *args: str, timeout: int = 600
               ) -> subprocess.CompletedProcess:
    """``blindspot`` in a process of its own, as a user runs it (a hang fails the test)."""
    return subprocess.run([sys.executable, "-m", "blindspot.cli", *args], env=env,
                          capture_output=True, text=True, timeout=timeout)


def _run_on(head: Head, gold: Path, folder: Path, *engine_args: str) -> Path:
    """The run's output folder after ``blindspot run --engine ray <engine_args>`` on ``head``."""
    env = {**head.env, "BLINDSPOT_CACHE": str(folder / "cache"), "COLUMNS": "200"}
    done = _blindspot(env, "run", "--data", str(gold), *RUN_ARGS, "--out", str(folder / "out"),
                      "--engine", "ray", *engine_args)
    assert done.returncode == 0, done.stdout + done.stderr + "\n" + head.client_server_logs()
    return folder


def _score_entries(cache: Path) -> int:
    from blindspot.scoring.cache import ScoreCache

    return len(ScoreCache(cache / "scores.sqlite"))


def test_a_driver_on_the_cluster_gets_the_local_results(head: Head, gold: Path, local: bytes,
                                                        tmp_path: Path) -> None:
    run = _run_on(head, gold, tmp_path, "--address", head.address, *ONE_ACTOR)
    assert (run / "out" / "results.json").read_bytes() == local
    # the driver wrote both caches; the cluster's workers wrote none
    assert (run / "cache" / "parses.sqlite").exists()
    assert _score_entries(run / "cache") > 0
    assert not head.cache.exists()


def test_a_ray_client_driver_gets_the_local_results(head: Head, gold: Path, local: bytes,
                                                    tmp_path: Path) -> None:
    """Through Ray Client (the pipelines then run in an actor on the cluster: a client has no
    core worker for Ray Data), with one scoring actor and one perturbing actor."""
    run = _run_on(head, gold, tmp_path, "--address", head.client_address, *ONE_ACTOR)
    assert (run / "out" / "results.json").read_bytes() == local
    assert (run / "cache" / "parses.sqlite").exists()
    assert _score_entries(run / "cache") > 0
    assert not head.cache.exists()


@pytest.mark.parametrize("given, from_env", [
    ("ray://127.0.0.1:{port}", None), ("127.0.0.1:{port}", None),
    ("auto", "ray://127.0.0.1:{port}"),  # auto stands for RAY_ADDRESS, as in ray.init
])
def test_an_address_where_nothing_answers_is_a_clear_error(given: str, from_env: str | None,
                                                           gold: Path, tmp_path: Path) -> None:
    # bound on every interface (Ray may dial this machine's IP for 127.0.0.1), never listening:
    # connections are refused and no other process can take the port meanwhile
    with socket.socket() as closed:
        closed.bind(("", 0))
        port = closed.getsockname()[1]
        env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0", "COLUMNS": "400"}
        for setting in ("RAY_ADDRESS", "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"):  # a user's machine
            env.pop(setting, None)
        if from_env:
            env["RAY_ADDRESS"] = from_env.format(port=port)
        # refused at once (Ray alone would retry for minutes): well within the guard
        done = _blindspot(env, "run", "--data", str(gold), *RUN_ARGS, "--out",
                          str(tmp_path / "out"), "--engine", "ray", "--address",
                          given.format(port=port), timeout=120)
    output = done.stdout + done.stderr
    assert done.returncode == 1, output  # bad input found before any work (README, "Exit codes")
    named = (f"RAY_ADDRESS={env['RAY_ADDRESS']} (--address auto)" if from_env
             else f"--address {given.format(port=port)}")
    assert f"{named}: no Ray cluster answers at " in output
    assert f":{port} (Connection refused)" in output and "ray start --head" in output
    assert "Traceback" not in output
    assert not (tmp_path / "out" / "results.json").exists()


#: what a Ray Client driver gets when the proxier's fork of its server died (the pinned Ray's
#: two answers, seen here: the proxier's own, and psutil's when the child died between its looks)
SERVER_DIED = [
    "Initialization failure from server:\nTraceback (most recent call last):\n  File \"proxier.py\","
    " line 772, in Datapath\n    raise RuntimeError(\nRuntimeError: Starting Ray client server "
    "failed. See ray_client_server_23000.err for detailed logs.",
    "Initialization failure from server:\nTraceback (most recent call last):\n  File \"proxier.py\","
    " line 396, in start_specific_server\n    cmd = psutil_proc.cmdline()\n"
    "psutil.ZombieProcess: PID still exists but it's a zombie (pid=22209)",
]


@pytest.fixture
def listening() -> Iterator[str]:
    """A ``ray://`` address where something answers (the reachability check passes)."""
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        yield f"ray://127.0.0.1:{server.getsockname()[1]}"


@pytest.mark.parametrize("died", SERVER_DIED, ids=["proxier", "psutil"])
@pytest.mark.parametrize("failures, joined", [(0, True), (1, True), (2, True), (3, False)])
def test_a_client_server_that_dies_at_start_is_tried_again(
        failures: int, joined: bool, died: str, listening: str, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """ray-project/ray#63202: under load the proxier's fork of a driver's server can die at once
    (it failed clean-clone CI once, and 1 test run in 4 here with two busy cores); a new connection
    gets a new server. ``ray.init`` stands in for the cluster: the race cannot be forced."""
    from blindspot.runner import ray_engine

    calls: list[str | None] = []

    def init(address: str | None = None, **options: object) -> None:
        calls.append(address)
        if len(calls) <= failures:
            raise ConnectionAbortedError(died)

    monkeypatch.setattr(ray_engine.ray, "init", init)
    if joined:
        ray_engine._connect(listening, {})
    else:
        with pytest.raises(ValueError) as refused:
            ray_engine._connect(listening, {})
        assert str(refused.value).startswith(
            f"--address {listening}: the cluster could not start a Ray Client server for this "
            "driver in 3 attempts (it died as it started: ray-project/ray#63202).")
        assert "--address HEAD_IP:6379" in str(refused.value)
    assert calls == [listening] * min(failures + 1, ray_engine.CLIENT_SERVER_ATTEMPTS)
    retries = [line for line in capsys.readouterr().err.splitlines() if "connecting again" in line]
    assert retries == [f"--address {listening}: the cluster's Ray Client server for this driver "
                       f"died as it started (ray-project/ray#63202); connecting again "
                       f"({n} of 3)" for n in range(2, min(failures, 2) + 2)]


@pytest.mark.parametrize("answer", [
    "Initialization failure from server:\nUnauthenticated",
    "Initialization failure from server:\nTraceback (most recent call last):\n  File "
    "\"proxier.py\", line 365, in start_specific_server\nRuntimeError: Failed to create "
    "runtime_env for Ray client server, it is caused by:\nNo module named 'x'",
], ids=["token", "runtime_env"])
def test_other_refusals_are_not_tried_again(answer: str, listening: str,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """Only the server that died at start is worth a second connection; anything else (the
    cluster refusing this driver's token, a runtime_env it cannot build) is said at once, in
    Ray's words."""
    from blindspot.runner import ray_engine

    calls: list[str | None] = []

    def init(address: str | None = None, **options: object) -> None:
        calls.append(address)
        raise ConnectionAbortedError(answer)

    monkeypatch.setattr(ray_engine.ray, "init", init)
    with pytest.raises(ValueError) as refused:
        ray_engine._connect(listening, {})
    assert calls == [listening]
    assert f"could not join the Ray cluster (ConnectionAbortedError: {answer})" in str(refused.value)
