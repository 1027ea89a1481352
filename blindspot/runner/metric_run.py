"""One metric on one dataset: its scorer, and its scores through the run state and score cache.

Every kind of run scores through :class:`MetricRun`: a cell's scores come from the run state when
a previous run finished them (a killed run resumes), else through the score cache (nothing is
scored twice), else from the scorer here or, computed ahead, from the run's engine. The run state
keeps the scorer's own (unsigned) scores; :meth:`MetricRun.score` turns them higher-is-better.
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from blindspot.forking import fit_threads_to_load
from blindspot.progress import restart_clock
from blindspot.runner.engines import Engine, ScoreJob, ScoreJobError, ScorerRecipe, run_score_job
from blindspot.runner.metric_spec import MetricSpec
from blindspot.runner.state import RunState, content_key
from blindspot.scoring.anchors import ANCHOR_ROWS, sanity_anchors
from blindspot.scoring.cache import MemoryScoreCache, default_score_cache
from blindspot.scoring.engine import (
    build_inputs,
    corpus_key,
    input_keys,
    pending_batches,
    score_corpus,
    score_rows,
)
from blindspot.scoring.scorer import ScoreInput, Scorer

#: a chunk's references and sources as the metric reads them (None where it uses neither)
Inputs = dict[str, Any]


def _cost(inputs: Sequence[Any]) -> int:
    return sum(item.cost() for item in inputs)


@dataclass(frozen=True)
class ScoringEstimate:
    """A measured forecast of one metric's scoring, printed before long work."""

    metric: str
    texts: int  # distinct inputs still to score (not in the run state or score cache)
    seconds: float  # after the measured batches
    rate: float  # input characters per second in the timed batches

    #: forecasts shorter than this are not printed
    QUIET_BELOW_S: ClassVar[float] = 5.0
    #: a forecast times batches until this much scoring time has passed (or a tenth of them)
    TIMED_S: ClassVar[float] = 2.0

    def __str__(self) -> str:
        return (f"scoring {self.texts:,} texts with {self.metric}: about {self.seconds:.0f} s "
                f"(measured {self.rate:,.0f} characters/s on this machine)")


def announce(estimate: ScoringEstimate | None, bar: Any) -> None:
    """Print a long scoring's forecast above the progress bar (short ones are not printed);
    the bar's own forecast starts afresh too, without the model load the estimate paid for."""
    if estimate is not None and estimate.seconds >= ScoringEstimate.QUIET_BELOW_S:
        bar.write(str(estimate), file=sys.stderr)
    restart_clock(bar)


class MadeHere:
    """A score cache whose writes are what this run computed: each batch's keys are marked in
    the run state (:meth:`RunState.mark_made`) before the batch is cached, so a resumed run
    still counts them as made, never as read from the cache."""

    def __init__(self, cache: Any, state: RunState) -> None:
        self.cache, self.state = cache, state

    def get_many(self, keys: Sequence[str]) -> dict[str, Any]:
        return dict(self.cache.get_many(keys))

    def put_many(self, items: Iterable[tuple[str, Any]]) -> None:
        kept = list(items)
        self.state.mark_made([key for key, _ in kept])
        self.cache.put_many(kept)

    def __len__(self) -> int:
        return len(self.cache)


class MetricRun:
    """One metric on one dataset: its scorer, and cell scores kept in the run state.

    ``idf_references``: the references an idf-weighting metric counts (every reference of the
    dataset; None where the run never holds them all)."""

    def __init__(self, spec: MetricSpec, state: RunState, batch_size: int | None = None,
                 idf_references: Sequence[Any] | None = None):
        self.spec, self.state, self.batch_size = spec, state, batch_size
        self.recipe = ScorerRecipe(spec, idf_references)
        self.scorer = self.recipe.build()
        self.identity = self.scorer.identity()
        self.sign = 1.0 if spec.higher_is_better else -1.0
        # the score cache (None when switched off); scores computed ahead by an engine land here.
        # A metric that pays per call writes through :class:`MadeHere`, which marks what this run
        # computed, so that its usage tells calls made from scores read from the cache
        self.cache: Any = default_score_cache()
        if self.scorer.cost_outputs:
            self.cache = MadeHere(self.cache if self.cache is not None else MemoryScoreCache(),
                                  state)
        #: what each distinct input scored in this run cost (its ``cost_outputs``), by cache key:
        #: kept in the run state with the scores, so a resumed run reports the same usage
        self.costs: dict[str, list[float | None]] = {}

    def reserve(self, cell_texts: Iterable[list[str]], inputs: Inputs, anchors: int = 0) -> None:
        """Tell the scorer how many distinct inputs the cells still need scored, plus
        ``anchors`` (at most that many sanity-anchor inputs to come), before any is scored
        (:meth:`~blindspot.scoring.scorer.Scorer.reserve`: a judge's call budget)."""
        if type(self.scorer).reserve is Scorer.reserve:
            return  # it takes any number: nothing to count
        jobs = self.pending_jobs(cell_texts, inputs)
        self.scorer.reserve(sum(len(batch) for _, batch in jobs) + anchors)

    def _costs_of(self, keys: Sequence[str], scores: Sequence[dict[str, Any]]
                  ) -> dict[str, list[float | None]]:
        """The cost outputs of each scored input (NaN, a count not reported, as None)."""
        named = self.scorer.cost_outputs
        return {key: [None if math.isnan(float(score[c])) else float(score[c]) for c in named]
                for key, score in zip(keys, scores, strict=True)}

    def usage(self) -> dict[str, float | None] | None:
        """The run's cost, summed over the distinct inputs this run computed (a resume
        included), and ``cached``: how many distinct inputs it read from the score cache
        instead (None for a scorer that declares no cost outputs); a count some computed row
        did not report is None."""
        if not self.scorer.cost_outputs:
            return None
        made = self.state.made(list(self.costs))
        totals: dict[str, float | None] = {}
        for index, name in enumerate(self.scorer.cost_outputs):
            values = [row[index] for key, row in self.costs.items() if key in made]
            totals[name] = None if any(v is None for v in values) else float(sum(
                v for v in values if v is not None))
        totals["cached"] = float(len(self.costs) - len(made))
        return totals

    def inputs(self, references: Sequence[Any] | None, sources: Sequence[Any] | None) -> Inputs:
        """Rows' references and sources as this metric reads them (what it does not use: None)."""
        return {"references": references if self.scorer.uses_references != "none" else None,
                "sources": sources if self.scorer.uses_source != "none" else None}

    def _state_key(self, texts: list[str], inputs: Inputs) -> str:
        return content_key("scores", self.identity, self.spec.output, texts, inputs)

    def pending_jobs(self, cell_texts: Iterable[list[str]], inputs: Inputs) -> list[ScoreJob]:
        """The score jobs the cells (``cell_texts``, in scoring order, all of the rows
        ``inputs``) still need: those not in the run state nor the score cache, batched exactly
        as :meth:`score` would batch them one cell after the other, so every engine computes the
        very same numbers."""
        if self.cache is None:  # no score cache: what is computed waits in memory (see _keep)
            self.cache = MemoryScoreCache()
        known: set[str] = set()
        jobs: list[ScoreJob] = []
        for texts in cell_texts:
            if self.state.get_scores(self._state_key(texts, inputs)) is not None:
                continue
            try:
                built = build_inputs(self.scorer, texts, **inputs)
            except ValueError:
                continue  # the cell reports this error itself when it is scored
            if self.scorer.corpus_level:
                key = corpus_key(self.scorer, built)
                if key not in known and not self.cache.get_many([key]):
                    jobs.append(("corpus", built))
                known.add(key)
                continue
            keys = input_keys(self.scorer, built)
            known.update(self.cache.get_many([k for k in keys.values() if k not in known]))
            jobs += [("rows", batch) for batch in
                     pending_batches(self.scorer, keys, known, self.batch_size)]
            known.update(keys.values())
        return jobs

    def compute_ahead(self, cell_texts: Iterable[list[str]], inputs: Inputs, engine: Engine,
                      bar: Any) -> None:
        """Score what the cells need on ``engine``, written once, here, into the score cache.

        A job the metric fails on (:class:`ScoreJobError`, declared by the engine) stops this:
        the cells are then scored one by one in this process, which reports the failure on the
        cell it belongs to. Any other error (the engine's own) is raised.
        """
        jobs = self.pending_jobs(cell_texts, inputs)
        try:
            for done, (job, scores) in enumerate(zip(jobs, engine.score(self.recipe, jobs),
                                                     strict=True), 1):
                self._keep(job, scores)
                bar.set_postfix_str(f"{self.spec.name} batch {done}/{len(jobs)}")
        except ScoreJobError as error:
            bar.write(f"{self.spec.name}: {error}; scoring its cells one by one here to find "
                      "the cell it belongs to", file=sys.stderr)
        restart_clock(bar)  # the cells read what was computed: their pace is not its pace

    def anchors(self, texts: list[str], references: Sequence[Any] | None,
                sources: Sequence[Any] | None, engine: Engine | None
                ) -> dict[str, float | None] | None:
        """The metric's sanity anchors on the first gold rows (:func:`sanity_anchors`), kept in
        the run state like a cell's scores, so a resumed run scores nothing again."""
        rows = slice(0, ANCHOR_ROWS)
        # the sources too, even for a metric that reads none: the copied-source anchor scores them
        key = content_key("anchors", self.identity, self.spec.output, texts[rows],
                          self.inputs(None if references is None else references[rows],
                                      None if sources is None else sources[rows]),
                          None if sources is None else list(sources[rows]), ANCHOR_ROWS)
        kept = self.state.get_record(key)
        if kept is None:
            before = set(self.costs)
            kept = {"anchors": sanity_anchors(self.scorer, self.spec, texts, references, sources,
                                              score_batch=self.cached_batch_scorer(engine))}
            if self.scorer.cost_outputs:
                kept["costs"] = {k: v for k, v in self.costs.items() if k not in before}
            self.state.put_record(key, kept)
        self.costs.update(kept.get("costs", {}))
        return kept["anchors"]

    def cached_batch_scorer(self, engine: Engine | None
                            ) -> Callable[[list[ScoreInput]], list[dict[str, float]]]:
        """A batch scorer that reads and writes the score cache: what the cache lacks is scored
        on ``engine`` when it computes ahead (a Ray run scores on Ray, never on the driver),
        else by the scorer in this process, and kept in the cache (the same code scores nothing
        twice)."""

        def cached(inputs: list[ScoreInput]) -> list[dict[str, float]]:
            keys = input_keys(self.scorer, inputs)
            found = self.cache.get_many(list(keys.values())) if self.cache is not None else {}
            missing = [item for item, key in keys.items() if key not in found]
            if missing:
                job: ScoreJob = ("rows", missing)
                scores = (next(iter(engine.score(self.recipe, [job])))
                          if engine is not None and engine.computes_ahead
                          else run_score_job(self.scorer, job))
                self._keep(job, scores)
                found.update(zip([keys[item] for item in missing], scores, strict=True))
            if self.scorer.cost_outputs:
                self.costs.update(self._costs_of(list(keys.values()),
                                                 [found[k] for k in keys.values()]))
            return [found[keys[item]] for item in inputs]
        return cached

    def _keep(self, job: ScoreJob, scores: list[dict[str, float]]) -> None:
        """Write a job's scores into the score cache (a memory one when the cache is off)."""
        if self.cache is None:  # no score cache: keep what is computed ahead for this run only
            self.cache = MemoryScoreCache()
        kind, inputs = job
        keys = ([corpus_key(self.scorer, inputs)] if kind == "corpus"
                else list(input_keys(self.scorer, inputs).values()))
        self.cache.put_many(zip(keys, scores, strict=True))

    def estimate(self, cell_texts: Iterable[list[str]], inputs: Inputs
                 ) -> ScoringEstimate | None:
        """How long scoring the cells will take, measured: the first pending batch is scored
        (it loads the model), the last ones are timed until :attr:`ScoringEstimate.TIMED_S` have
        passed (or a tenth of the batches are done: one batch's time is a noisy sample on a
        busy machine), and the rest is extrapolated by input length (:meth:`ScoreInput.cost`).
        The last, not the next: the cells then score in order from the first, each doing its
        own work, so the progress bar's remaining time is measured on real steps (the last cells
        find their scores ready); a scorer whose scores depend on what it computed before
        (``order_dependent``) times the next ones, in order. The batches land in the score
        cache, batched as :meth:`score` batches them, so the scores are the same. None when fewer
        than two batches are pending (nothing long to announce) or when a batch fails (the cell
        that holds it reports the error when it is scored)."""
        jobs = [job for job in self.pending_jobs(cell_texts, inputs) if job[0] == "rows"]
        if len(jobs) < 2:
            return None
        first = self._try(jobs[0])
        if first is None:
            return None
        self._keep(jobs[0], first)
        fit_threads_to_load()  # the first batch loaded the model, and torch with it
        order = jobs[1:] if self.scorer.order_dependent else jobs[:0:-1]
        timed, took, limit = 0, 0.0, max(1, len(jobs) // 10)
        while timed < len(order) and took < ScoringEstimate.TIMED_S and timed < limit:
            start = time.perf_counter()
            scores = self._try(order[timed])
            took += time.perf_counter() - start
            if scores is None:
                return None
            self._keep(order[timed], scores)
            timed += 1
        rate = sum(_cost(inputs) for _, inputs in order[:timed]) / max(took, 1e-6)
        rest = sum(_cost(inputs) for _, inputs in order[timed:])
        return ScoringEstimate(self.spec.name, sum(len(inputs) for _, inputs in jobs),
                               rest / rate, rate)

    def _try(self, job: ScoreJob) -> list[dict[str, float]] | None:
        """A job's scores, or None when the metric raises on it: the cell that holds the job
        reports that error when it is scored."""
        try:
            return run_score_job(self.scorer, job)
        except Exception:  # noqa: BLE001  (the metric's own error, reported on its cell)
            return None

    def score(self, texts: list[str], inputs: Inputs) -> tuple[list[float] | None, float | None]:
        """Higher-is-better per-row scores (or the corpus score) of ``texts`` against the rows
        ``inputs``, from the run state when already done (which keeps them unsigned)."""
        key = self._state_key(texts, inputs)
        kept = self.state.get_scores(key)
        if kept is None:
            output = self.spec.output or self.scorer.outputs[0]
            if self.scorer.corpus_level:
                corpus = float(score_corpus(self.scorer, texts, cache=self.cache,
                                            **inputs)[output])
                self.state.put_scores(key, corpus=corpus)
                kept = {"corpus": corpus}
            else:
                every = score_rows(self.scorer, texts, batch_size=self.batch_size,
                                   cache=self.cache, **inputs)
                rows = every[output]
                if self.scorer.cost_outputs:  # kept before the scores: a resume finds both
                    built = build_inputs(self.scorer, texts, **inputs)
                    keyed = input_keys(self.scorer, built)
                    first: dict[str, int] = {}
                    for index, item in enumerate(built):
                        first.setdefault(keyed[item], index)
                    self.state.put_record(f"{key}:costs", {"costs": self._costs_of(
                        list(first), [{c: every[c][i] for c in self.scorer.cost_outputs}
                                      for i in first.values()])})
                self.state.put_scores(key, scores=[float(x) for x in rows])
                kept = {"scores": [float(x) for x in rows]}
        if self.scorer.cost_outputs and not self.scorer.corpus_level:
            record = self.state.get_record(f"{key}:costs")
            self.costs.update((record or {}).get("costs", {}))
        if "corpus" in kept:
            return None, self.sign * kept["corpus"]
        return [self.sign * s for s in kept["scores"]], None


__all__ = ["Inputs", "MadeHere", "MetricRun", "ScoringEstimate", "announce"]
