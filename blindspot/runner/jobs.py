"""The unit of scoring work every engine runs: a score job, how its scorer is built anywhere,
and the one error a metric's failure on a job is declared as (:class:`ScoreJobError`).

Below both engines (:mod:`blindspot.runner.engines`, :mod:`blindspot.runner.ray_engine`), so the
Ray engine needs nothing from the module that registers it.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from blindspot.runner.scorers import scorer_for
from blindspot.scoring.engine import checked_scores, scores_in_turn
from blindspot.scoring.scorer import ScoreInput, Scorer

#: One unit of scoring work: ``("rows", batch)`` (per-row scores of a batch of distinct inputs,
#: exactly as the local engine batches them) or ``("corpus", inputs)`` (one corpus-level score).
ScoreJob = tuple[str, list[ScoreInput]]


class ScoreJobError(RuntimeError):
    """The metric raised on one score job (the error is the metric's, not the engine's): the
    run scores that job's cells in this process, and the cell reports the error there. Any other
    exception from an engine (a lost worker, a broken connection) ends the run."""


@dataclass
class ScorerRecipe:
    """How to build a metric's scorer anywhere: the run's spec and the references (for idf).

    ``built`` is the driver's own instance, reused in-process and never shipped to a worker.
    """

    spec: Any
    references: Sequence[Any] | None
    built: Scorer | None = field(default=None, repr=False)

    def build(self) -> Scorer:
        """The scorer (the driver's instance when there is one, else a new one)."""
        if self.built is None:
            self.built = scorer_for(self.spec, self.references)
        return self.built

    def __getstate__(self) -> dict[str, Any]:
        return {"spec": self.spec, "references": self.references, "built": None}


def run_score_job(scorer: Scorer, job: ScoreJob) -> list[dict[str, float]]:
    """The scores of one job: one dict per input of a batch, or one corpus-level dict."""
    kind, inputs = job
    if kind == "corpus":
        return [scorer.score_corpus(inputs)]
    return checked_scores(scorer, inputs, scorer.score_batch(inputs))


def run_score_jobs(scorer: Scorer, jobs: Sequence[ScoreJob]) -> Iterator[list[dict[str, float]]]:
    """Each job's scores, in job order, as :func:`run_score_job` gives them; row jobs go through
    :func:`~blindspot.scoring.engine.scores_in_turn`, so a scorer that prepares ahead tokenizes
    the next job while the device scores this one. A job's error is raised at its turn."""
    if any(kind != "rows" for kind, _ in jobs):
        for job in jobs:
            yield run_score_job(scorer, job)
        return
    yield from scores_in_turn(scorer, [inputs for _, inputs in jobs])


def job_error(error: Exception) -> ScoreJobError:
    """A metric's error on a score job, declared as such (its message kept)."""
    return ScoreJobError(f"{type(error).__name__}: {error}")
