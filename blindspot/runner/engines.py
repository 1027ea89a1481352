"""Where a run's perturbation and scoring happen: in this process (``local``) or on Ray (``ray``).

An engine decides only *where* work runs. What runs is planned once, by the runner, for every
engine: each chunk's suite cells (:func:`blindspot.runner.pipeline.perturbed_cells`) and the score
batches (:func:`blindspot.scoring.engine.pending_batches`, after the score cache and the run
state were consulted, so nothing is computed twice). Results come back to the driver, which alone
writes the caches and the run state, assembles the results and judges them: that single code path
is why ``results.json`` is byte-identical whichever engine computed it.

>>> sorted(ENGINES)
['local', 'ray']
>>> get_engine("local").name
'local'
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from blindspot.perturbations.dataset import perturb_local
from blindspot.registry import Registry, lowercase
from blindspot.runner.jobs import (
    ScoreJob,
    ScoreJobError,
    ScorerRecipe,
    job_error,
    run_score_job,
    run_score_jobs,
)


class Engine(Protocol):
    """What the runner asks of an engine."""

    name: str
    #: True: the runner hands it every score job of a metric at once (one pipeline, workers
    #: load the model once); False: cells are scored one by one in this process, each stored in
    #: the run state as soon as it is done (what lets a killed local run resume cell by cell).
    computes_ahead: bool

    def perturb(self, job: Any) -> Iterable[tuple[int, Any]]:
        """Every cell of a prepared suite (``SuiteJob``) as (cell index, its Arrow table
        (``perturbations.dataset.cell_table``)), in any order."""

    def score(self, recipe: ScorerRecipe, jobs: Sequence[ScoreJob]) -> Iterator[list[dict]]:
        """Each job's scores, in job order; raises a job's error when the iteration reaches it."""

    def close(self) -> None:
        """Release what the engine started."""


@dataclass
class LocalEngine:
    """This process for scoring, ``num_proc`` processes for perturbation (the default)."""

    num_proc: int | None = None
    name: str = "local"
    computes_ahead: bool = False

    def perturb(self, job: Any) -> Iterable[tuple[int, Any]]:
        return perturb_local(job, self.num_proc)

    def score(self, recipe: ScorerRecipe, jobs: Sequence[ScoreJob]) -> Iterator[list[dict]]:
        scores = run_score_jobs(recipe.build(), jobs)
        for _ in jobs:
            try:
                done = next(scores)
            except Exception as error:  # the metric's own error: declared, see ScoreJobError
                raise job_error(error) from error
            yield done

    def close(self) -> None:
        return None


@dataclass(frozen=True)
class EngineSpec:
    """A registered engine: the run settings it takes and how it is built from them."""

    name: str
    options: tuple[str, ...]  #: the run settings it takes (``num_proc`` for every engine)
    build: Callable[..., Engine]  #: ``build(**options)`` -> the engine


def _ray_engine(**options: Any) -> Engine:
    # the Ray edge: ray (seconds to import) loads only for ``--engine ray``
    from blindspot.runner.ray_engine import RayEngine
    return RayEngine(**options)


#: the engines by name, registered here, where the engine interface is
ENGINES: Registry[EngineSpec] = Registry("engine", normalise=lowercase)
ENGINES.register("local", EngineSpec("local", ("num_proc",), LocalEngine))
ENGINES.register("ray", EngineSpec("ray", ("num_proc", "address", "actors", "gpus_per_actor"),
                                   _ray_engine))


def get_engine(name: str, **options: Any) -> Engine:
    """The engine called ``name`` built with ``options`` (an unknown name lists the valid ones)."""
    return ENGINES.get(name).build(**options)


def engine_options(name: str, settings: Mapping[str, Any]) -> dict[str, Any]:
    """The options of engine ``name`` found in a run's settings; a setting that only another
    engine takes (``address`` without the Ray engine) is an error, not silently dropped."""
    wanted = ENGINES.get(name).options
    known = dict.fromkeys(k for spec in ENGINES.values() for k in spec.options)  # in order
    stray = [k for k in known if k not in wanted and settings.get(k) is not None]
    if stray:
        flags = ", ".join(f"--{k.replace('_', '-')}" for k in stray)
        takers = sorted(e for e, spec in ENGINES.items() if set(stray) <= set(spec.options))
        raise ValueError(f"{flags} only appl{'ies' if len(stray) == 1 else 'y'} with --engine "
                         f"{' or '.join(takers)} (this run's engine: {name})")
    return {k: settings[k] for k in wanted if settings.get(k) is not None}


__all__ = ["ENGINES", "EngineSpec", "Engine", "LocalEngine", "ScoreJob", "ScoreJobError",
           "ScorerRecipe", "engine_options", "get_engine", "job_error",
           "run_score_job"]
