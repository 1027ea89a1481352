"""The Ray engine: a run's perturbation and scoring as Ray Data pipelines, on one machine or many.

Perturbation maps the suite's cells (one row per (test, level, seed) cell) through a pool of
actors that each receive the parsed texts once; scoring maps the score jobs the runner planned
through a pool of actors that each build the metric's model once (one actor per GPU when the
cluster has GPUs, else one per CPU slot; ``actors=`` and ``gpus_per_actor=`` choose). Workers
never touch the caches: results come back to the driver, which writes the parse cache, the
score cache and the run state, so a job retried after a worker died is still written once.
A scorer whose scores depend on what it computed before (``Scorer.order_dependent``:
BERTScore's embedding cache) gets one actor that runs its jobs one at a time, in order, which is
what the local engine does, so its results stay bit-identical.
Ray Data's actor pools restart a dead actor and retry its batch (``max_restarts`` and
``max_task_retries`` default to -1 there), so a worker process that dies costs only a retry.

Start Ray yourself (``ray start --head`` ...) and pass ``address="auto"`` (or the head's
``host:port``) to join a cluster as a driver on one of its nodes, or ``ray://host:port`` (the head's
Ray Client port, 10001 by default) to drive it from a machine outside it; without an address a
local Ray instance is started for the run (no dashboard, no usage stats). A Ray Client driver has
no core worker, which Ray Data's executor needs, so there each pipeline runs in a small actor on
the cluster (:class:`RemotePipeline`) that hands its rows back as they finish; the driver still
writes every cache. An address where nothing answers is a clear error at once, not a long wait.
"""

from __future__ import annotations

import logging
import os
import pickle
import queue
import socket
import sys
import threading
from collections.abc import Iterator, Sequence
from typing import Any, cast
from urllib.parse import urlsplit

os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # before Ray is imported

import ray  # noqa: E402  (this module is the Ray edge: engines.py loads it only for --engine ray)
import ray.util.client  # noqa: E402
from ray import cloudpickle  # noqa: E402
from ray._private.services import canonicalize_bootstrap_address  # noqa: E402

from blindspot.perturbations.dataset import apply_item, cell_table  # noqa: E402
from blindspot.runner.jobs import ScoreJob, ScoreJobError, ScorerRecipe, run_score_job  # noqa: E402


def _resolve(value: Any) -> Any:
    """An object put in Ray's object store, fetched (a plain value is returned as is)."""
    return ray.get(value) if isinstance(value, ray.ObjectRef) else value


class PerturbWorker:
    """A Ray Data actor that applies suite cells, holding the suite's shared state."""

    def __init__(self, state: Any) -> None:
        self.state = _resolve(state)

    def __call__(self, batch: dict[str, Any]) -> dict[str, Any]:
        indices = [int(i) for i in batch["index"]]
        return {"index": indices, "payload": [pickle.dumps(cell_table(apply_item(self.state, i)))
                                              for i in indices]}


class ScoreWorker:
    """A Ray Data actor that holds one metric's scorer (its model loaded once) and runs jobs.

    A job's error is returned, not raised, so the driver raises it where that job's cell is.
    """

    def __init__(self, recipe: Any) -> None:
        self.scorer = cloudpickle.loads(_resolve(recipe)).build()

    def __call__(self, batch: dict[str, Any]) -> dict[str, Any]:
        payloads = []
        for raw in batch["job"]:
            try:
                outcome: Any = ("ok", run_score_job(self.scorer, pickle.loads(raw)))
            except Exception as error:  # noqa: BLE001  (sent back to the driver)
                outcome = ("error", f"{type(error).__name__}: {error}")
            payloads.append(pickle.dumps(outcome))
        return {"index": batch["index"], "payload": payloads}


def _quiet_data() -> None:
    """No Ray Data progress bars (the run shows its own) and no log line per pipeline."""
    ray.data.DataContext.get_current().enable_progress_bars = False
    logging.getLogger("ray.data").setLevel(logging.WARNING)


def _pipeline(rows: list[dict[str, Any]], worker: type, argument: Any, size: int,
              gpus: float) -> Iterator[tuple[int, bytes]]:
    """(index, pickled payload) of every row mapped through a pool of ``size`` actors built
    with ``argument`` (put once in the object store), as they finish; dead actors are
    restarted and their batches retried (Ray Data's defaults: -1)."""
    _quiet_data()
    shared = ray.put(argument)
    # one actor: one job at a time, in input order (what an order-dependent scorer needs)
    pool = (ray.data.ActorPoolStrategy(size=1, max_tasks_in_flight_per_actor=1) if size == 1
            else ray.data.ActorPoolStrategy(size=size))
    dataset = ray.data.from_items(rows, override_num_blocks=max(1, len(rows)))
    mapped = dataset.map_batches(worker, fn_constructor_args=(shared,), batch_size=1,
                                 compute=pool, num_cpus=0 if gpus else 1, num_gpus=gpus)
    for row in mapped.iter_rows():
        yield int(row["index"]), row["payload"]


class RemotePipeline:
    """A pipeline run on the cluster for a Ray Client driver, its rows handed back in chunks.

    Ray Data's executor needs a process with a core worker, which a Ray Client driver lacks;
    this actor (no CPU of its own, so it never takes a slot from the workers) is that process.
    """

    def __init__(self, rows: list[dict[str, Any]], worker: type, argument: Any, size: int,
                 gpus: float) -> None:
        self.finished: queue.Queue[tuple[str, Any]] = queue.Queue()
        threading.Thread(target=self._drain, args=(rows, worker, argument, size, gpus),
                         daemon=True).start()

    def _drain(self, *pipeline: Any) -> None:
        try:
            for item in _pipeline(*pipeline):
                self.finished.put(("row", item))
            self.finished.put(("end", None))
        except BaseException as error:  # noqa: BLE001  (raised on the driver)
            self.finished.put(("error", error))

    def take(self) -> list[tuple[str, Any]]:
        """What finished since the last call (waits for at least one item)."""
        items = [self.finished.get()]
        while not self.finished.empty():
            items.append(self.finished.get())
        return items


def _remote_pipeline(rows: list[dict[str, Any]], worker: type, argument: Any, size: int,
                     gpus: float) -> Iterator[tuple[int, bytes]]:
    """:func:`_pipeline` run by a :class:`RemotePipeline` actor, its rows as they finish."""
    # ray types ActorClass.remote() as "handle or class"; it returns a handle (under Ray Client a
    # client handle, so no isinstance narrowing to ray.actor.ActorHandle)
    runner = cast("ray.actor.ActorHandle[RemotePipeline]",
                  ray.remote(num_cpus=0)(RemotePipeline).remote(rows, worker, argument, size, gpus))
    try:
        while True:
            for kind, value in ray.get(runner.take.remote()):
                if kind == "error":
                    raise value
                if kind == "end":
                    return
                yield value
    finally:
        ray.kill(runner)


def _is_client() -> bool:
    """True when this process drives the cluster through Ray Client (``ray://``)."""
    return ray.util.client.ray.is_connected()


#: how long to wait for a TCP answer from the address given before calling it unreachable
CONNECT_TIMEOUT_S = 5.0

HOW_TO_START = ("To use a cluster, start it with `ray start --head --port 6379` and pass the "
                "address it prints (HEAD_IP:6379 from a node of the cluster, ray://HEAD_IP:10001 "
                "from elsewhere, through Ray Client), or leave --address out to start Ray on "
                "this machine for the run.")


def _target(address: str | None) -> tuple[str | None, str]:
    """The address Ray will use for ``address`` (RAY_ADDRESS stands in for none or ``auto``, as
    in ``ray.init``) and how to name it in an error."""
    from_env = os.environ.get("RAY_ADDRESS")
    if from_env and address in (None, "auto"):
        return from_env, f"RAY_ADDRESS={from_env} (--address {address or 'not given'})"
    return address, f"--address {address}"


def _dialled(target: str, named: str) -> tuple[str, int]:
    """The (host, port) Ray will dial for ``target``: a Ray Client address as written; a
    cluster address as Ray resolves it (``auto`` through the address file of this node's
    ``ray start``; 127.0.0.1 and localhost become this machine's IP, unless Ray runs
    loopback-only, ``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0``)."""
    if "://" not in target:
        # Ray's own resolution (ray is pinned in requirements/constraints.txt)
        try:
            target = canonicalize_bootstrap_address(target) or target
        except (ConnectionError, ValueError) as error:  # auto and no cluster; not host:port
            raise ValueError(f"{named}: {str(error).rstrip('.')}. {HOW_TO_START}") from None
    parts = urlsplit(target if "://" in target else f"//{target}")
    try:
        host, port = parts.hostname, parts.port
    except ValueError:  # a port that is not a number
        host, port = None, None
    if not host or port is None:
        raise ValueError(f"{named} must be auto, HOST:PORT or ray://HOST:PORT. {HOW_TO_START}")
    return host, port


def _check_reachable(address: str | None) -> None:
    """A clear error at once when nothing answers where Ray would dial for ``address``
    (Ray itself retries for minutes); no address at all is left to Ray (it starts one)."""
    target, named = _target(address)
    if not target:
        return
    host, port = _dialled(target, named)
    try:
        socket.create_connection((host, port), timeout=CONNECT_TIMEOUT_S).close()
    except OSError as error:
        reason = error.strerror or type(error).__name__
        raise ValueError(f"{named}: no Ray cluster answers at {host}:{port} ({reason}). "
                         f"{HOW_TO_START}") from None


#: Ray Client's proxier forks a server for each driver that connects, and under load that child
#: can die at once, with empty logs (ray-project/ray#63202, open in the pinned Ray); a new
#: connection gets a new server, so a driver tries this many times before it gives up
CLIENT_SERVER_ATTEMPTS = 3
#: what the proxier answers a driver whose server died at start: its own message, or psutil's
#: when the child died between the proxier's two looks at it
CLIENT_SERVER_FAILED = "Starting Ray client server failed"
CLIENT_SERVER_GONE = ("NoSuchProcess", "ZombieProcess")


def _server_died(cause: BaseException) -> bool:
    """True when Ray Client's answer says the driver's server died as it started."""
    said = str(cause)
    return CLIENT_SERVER_FAILED in said or (
        "start_specific_server" in said and any(gone in said for gone in CLIENT_SERVER_GONE))


def _connect(address: str | None, init_options: dict[str, Any]) -> None:
    """Join the cluster at ``address`` (or start one); a failure is a clear error naming it."""
    _check_reachable(address)
    named = _target(address)[1]
    for attempt in range(1, CLIENT_SERVER_ATTEMPTS + 1):
        try:
            ray.init(address=address, include_dashboard=False, log_to_driver=False,
                     **init_options)
            return
        except (ConnectionError, ray.exceptions.AuthenticationError) as error:
            cause = error.__cause__ or error
            if not _server_died(cause):
                raise ValueError(
                    f"{named}: could not join the Ray cluster ({type(cause).__name__}: "
                    f"{str(cause).strip()}). A cluster with token authentication (Ray's "
                    "default once a token exists) needs RAY_AUTH_MODE=token and its token here "
                    f"too. {HOW_TO_START}") from None
            if attempt == CLIENT_SERVER_ATTEMPTS:
                raise ValueError(
                    f"{named}: the cluster could not start a Ray Client server for this driver "
                    f"in {attempt} attempt{'s' if attempt > 1 else ''} (it died as it started: "
                    "ray-project/ray#63202). Its reason, if any, is in ray_client_server*.err "
                    "under the head's session logs (/tmp/ray/session_latest/logs by default). "
                    "Run again, or run on a node of the cluster with --address HEAD_IP:6379, "
                    "which needs no Ray Client server.") from None
            print(f"{named}: the cluster's Ray Client server for this driver died as it started "
                  f"(ray-project/ray#63202); connecting again ({attempt + 1} of "
                  f"{CLIENT_SERVER_ATTEMPTS})", file=sys.stderr)


class RayEngine:
    """Runs perturbation and scoring on Ray (see the module docstring)."""

    name = "ray"
    computes_ahead = True

    def __init__(self, address: str | None = None, num_proc: int | None = None,
                 actors: int | None = None, gpus_per_actor: float | None = None,
                 **init_options: Any) -> None:
        self.num_proc, self.actors, self.gpus_per_actor = num_proc, actors, gpus_per_actor
        self._started = not ray.is_initialized()
        if self._started:
            _connect(address, init_options)

    # -- resources -------------------------------------------------------------------------------

    def _cluster(self) -> tuple[int, int]:
        resources = ray.cluster_resources()
        return max(1, int(resources.get("CPU", 1))), int(resources.get("GPU", 0))

    def _score_slots(self, scorer: Any) -> tuple[int, float]:
        """(actors, GPUs per actor) for scoring: one per GPU when there are GPUs, else one per
        CPU; one actor for an order-dependent scorer (its jobs then run in order)."""
        cpus, gpus = self._cluster()
        per_actor = self.gpus_per_actor if self.gpus_per_actor is not None else (1 if gpus else 0)
        if scorer.order_dependent:
            return 1, per_actor
        default = int(gpus // per_actor) if per_actor else cpus
        return max(1, self.actors or default), per_actor

    # -- the pipelines ---------------------------------------------------------------------------

    def _map(self, rows: list[dict[str, Any]], worker: type, argument: Any, actors: int,
             gpus: float = 0) -> Iterator[tuple[int, Any]]:
        """(index, payload) of every row mapped through a pool of ``actors`` actors, as they
        finish: here, or on the cluster when this process is a Ray Client driver."""
        size = max(1, min(actors, len(rows)))
        if _is_client():
            stream: Iterator[tuple[int, bytes]] = _remote_pipeline(rows, worker, argument, size,
                                                                   gpus)
        else:
            stream = _pipeline(rows, worker, argument, size, gpus)
        for index, payload in stream:
            yield index, pickle.loads(payload)

    def perturb(self, job: Any) -> Iterator[tuple[int, Any]]:
        """Every cell of a prepared suite, one actor per CPU slot (``num_proc`` when given)."""
        count = len(job.plan.items)
        if count == 0:
            return
        actors = self.num_proc or self._cluster()[0]
        yield from self._map([{"index": i} for i in range(count)], PerturbWorker, job.state,
                             actors)

    def score(self, recipe: ScorerRecipe, jobs: Sequence[ScoreJob]) -> Iterator[list[dict]]:
        """Each job's scores in job order (they finish in any order; the driver reorders)."""
        if not jobs:
            return
        actors, gpus = self._score_slots(recipe.build())
        rows = [{"index": i, "job": pickle.dumps(job)} for i, job in enumerate(jobs)]
        finished: dict[int, Any] = {}
        next_index = 0
        for index, outcome in self._map(rows, ScoreWorker, cloudpickle.dumps(recipe), actors,
                                        gpus):
            finished[index] = outcome
            while next_index in finished:
                status, value = finished.pop(next_index)
                if status == "error":  # the metric raised on this job (not a lost worker)
                    raise ScoreJobError(value)
                yield value
                next_index += 1

    def close(self) -> None:
        """Shut down the Ray instance this engine started (a cluster joined stays up)."""
        if self._started and ray.is_initialized():
            ray.shutdown()


__all__ = ["PerturbWorker", "RayEngine", "RemotePipeline", "ScoreWorker"]
