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

Start Ray yourself (``ray start --head`` ...) and pass ``address="auto"`` to join a cluster;
without an address a local Ray instance is started for the run (no dashboard, no usage stats).
"""

from __future__ import annotations

import logging
import os
import pickle
from collections.abc import Iterator, Sequence
from typing import Any

from blindspot.runner.engines import ScoreJob, ScorerRecipe, run_score_job


def _resolve(value: Any) -> Any:
    """An object put in Ray's object store, fetched (a plain value is returned as is)."""
    import ray

    return ray.get(value) if isinstance(value, ray.ObjectRef) else value


class PerturbWorker:
    """A Ray Data actor that applies suite cells, holding the suite's shared state."""

    def __init__(self, state: Any) -> None:
        self.state = _resolve(state)

    def __call__(self, batch: dict[str, Any]) -> dict[str, Any]:
        from blindspot.perturbations.dataset import apply_item

        indices = [int(i) for i in batch["index"]]
        return {"index": indices,
                "payload": [pickle.dumps(apply_item(self.state, i)) for i in indices]}


class ScoreWorker:
    """A Ray Data actor that holds one metric's scorer (its model loaded once) and runs jobs.

    A job's error is returned, not raised, so the driver raises it where that job's cell is.
    """

    def __init__(self, recipe: bytes) -> None:
        from ray import cloudpickle

        self.scorer = cloudpickle.loads(recipe).build()

    def __call__(self, batch: dict[str, Any]) -> dict[str, Any]:
        payloads = []
        for raw in batch["job"]:
            try:
                outcome: Any = ("ok", run_score_job(self.scorer, pickle.loads(raw)))
            except Exception as error:  # noqa: BLE001  (sent back to the driver)
                outcome = ("error", f"{type(error).__name__}: {error}")
            payloads.append(pickle.dumps(outcome))
        return {"index": batch["index"], "payload": payloads}


class RayEngine:
    """Runs perturbation and scoring on Ray (see the module docstring)."""

    name = "ray"
    computes_ahead = True

    def __init__(self, address: str | None = None, num_proc: int | None = None,
                 actors: int | None = None, gpus_per_actor: float | None = None,
                 **init_options: Any) -> None:
        os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
        import ray

        self.num_proc, self.actors, self.gpus_per_actor = num_proc, actors, gpus_per_actor
        self._started = not ray.is_initialized()
        if self._started:
            ray.init(address=address, include_dashboard=False, log_to_driver=False,
                     **init_options)
        context = ray.data.DataContext.get_current()
        context.enable_progress_bars = False  # the run shows its own bars
        logging.getLogger("ray.data").setLevel(logging.WARNING)  # no line per pipeline

    # -- resources -------------------------------------------------------------------------------

    def _cluster(self) -> tuple[int, int]:
        import ray

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
        finish; dead actors are restarted and their batches retried."""
        import ray

        size = max(1, min(actors, len(rows)))
        # one actor: one job at a time, in input order (what an order-dependent scorer needs)
        pool = (ray.data.ActorPoolStrategy(size=1, max_tasks_in_flight_per_actor=1) if size == 1
                else ray.data.ActorPoolStrategy(size=size))
        dataset = ray.data.from_items(rows, override_num_blocks=max(1, len(rows)))
        mapped = dataset.map_batches(
            worker, fn_constructor_args=(argument,), batch_size=1, compute=pool,
            num_cpus=0 if gpus else 1, num_gpus=gpus)  # actors restart, tasks retry: -1
        for row in mapped.iter_rows():
            yield int(row["index"]), pickle.loads(row["payload"])

    def perturb(self, job: Any) -> Iterator[tuple[int, dict[str, list[Any]]]]:
        """Every cell of a prepared suite, one actor per CPU slot (``num_proc`` when given)."""
        import ray

        count = len(job.plan.items)
        if count == 0:
            return
        actors = self.num_proc or self._cluster()[0]
        state = ray.put(job.state)
        yield from self._map([{"index": i} for i in range(count)], PerturbWorker, state, actors)

    def score(self, recipe: ScorerRecipe, jobs: Sequence[ScoreJob]) -> Iterator[list[dict]]:
        """Each job's scores in job order (they finish in any order; the driver reorders)."""
        from ray import cloudpickle

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
                if status == "error":
                    raise RuntimeError(value)
                yield value
                next_index += 1

    def close(self) -> None:
        """Shut down the Ray instance this engine started (a cluster joined stays up)."""
        import ray

        if self._started and ray.is_initialized():
            ray.shutdown()


__all__ = ["PerturbWorker", "RayEngine", "ScoreWorker"]
