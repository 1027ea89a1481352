"""The search job: load gold data, run the greedy search against one metric, judge the perturbed
texts with a panel of other metrics, rank the edit patterns, optionally test whether the patterns
generalise; :class:`SearchResult` writes the report.

:func:`search_result` is the one search (the ``search`` protocol of ``blindspot search``,
``blindspot run``, ``evaluate.load("blindspot/blindspot")`` and the Space calls it;
:func:`blindspot.search.protocol.run_search` runs the protocol from Python). Its
results dict is plain JSON with no timings or paths, so two runs with the same inputs and seed give identical
files (with a call budget; a time budget depends on the machine, see
:mod:`blindspot.search.greedy`).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from blindspot import __version__
from blindspot.perturbations.perturbation import canonical_task
from blindspot.protocols.interface import ProtocolResult, get_protocol
from blindspot.protocols.rank import RankResult
from blindspot.report.files import ReportFiles
from blindspot.report.search_report import render_search_report
from blindspot.runner.data import load_gold_data
from blindspot.runner.entries import signature
from blindspot.runner.metric_spec import resolve_metrics
from blindspot.search.candidates import DEFAULT_K, EmbeddingNeighbours, MaskedLMCandidates
from blindspot.search.generalise import generalisation
from blindspot.search.greedy import Budget, Hypothesis, greedy_search
from blindspot.search.panel import DEFAULT_PANEL, MetricScores, judge_texts, mean, panel_specs
from blindspot.search.patterns import rank_patterns

SCHEMA_VERSION = 1
DEFAULT_EMBEDDING_MODEL = "minilm"
#: the generalisation's rank report, a folder of the search's report folder
GENERALISATION_FOLDER = "generalisation"


@dataclass(kw_only=True)
class SearchResult(ProtocolResult):
    """results.json of a search (layout: :mod:`blindspot.report.search_report`): the config, the
    budget spent, the panel's summary, the ranked edit patterns, every example, and whether the
    patterns generalise; with ``generalise``, also the rank run behind that verdict (written as
    the report's ``generalisation/`` folder, not into results.json)."""

    schema_version: int = SCHEMA_VERSION
    protocol: str = "search"
    config: dict[str, Any]
    budget: dict[str, Any]
    summary: dict[str, Any]
    patterns: list[dict[str, Any]]
    examples: list[dict[str, Any]]
    generalisation: dict[str, Any] | None = None
    generalisation_run: RankResult | None = None

    UNSAVED: ClassVar[tuple[str, ...]] = ("generalisation_run",)

    def render(self) -> ReportFiles:
        """results.json, report.md and search.png; the generalisation's rank report as the
        folder ``generalisation``."""
        run = self.generalisation_run
        folders = {} if run is None else {GENERALISATION_FOLDER: get_protocol("rank").render(run)}
        return render_search_report(self.to_dict(), folders)


def generalisation_state(out: str | Path | None) -> Path | None:
    """The generalisation run's resumable state: beside its report, when there is one."""
    return Path(out) / GENERALISATION_FOLDER / ".state" if out is not None else None


@dataclass
class SearchSettings:
    """How the search runs (everything but the data and the metrics)."""

    noise_ratio: float = 0.1
    k: int = DEFAULT_K
    mlm: str | None = None
    embedding_model: str | None = DEFAULT_EMBEDDING_MODEL
    max_calls: int | None = None
    max_seconds: float | None = None
    seed: int = 0
    limit: int | None = None
    batch_size: int | None = None
    progress: bool = True

    def check(self) -> None:
        """A ValueError naming the setting that is out of range."""
        if not 0 < float(self.noise_ratio) <= 1:
            raise ValueError(f"noise_ratio must be in (0, 1], got {self.noise_ratio!r}")
        if int(self.k) < 1:
            raise ValueError(f"k (candidates per source) must be at least 1, got {self.k!r}")
        if self.max_calls is not None and int(self.max_calls) < 1:
            raise ValueError(f"max_calls must be at least 1 (a budget of no metric calls finds "
                             f"nothing), got {self.max_calls!r}")
        if self.max_seconds is not None and float(self.max_seconds) <= 0:
            raise ValueError(f"max_seconds must be > 0, got {self.max_seconds!r}")
        if self.limit is not None and int(self.limit) < 1:
            raise ValueError(f"limit must be at least 1 row, got {self.limit!r}")

    def candidates_json(self) -> dict[str, Any]:
        """Which candidate sources ran, and a note when one is missing."""
        notes = []
        if not self.mlm:
            notes.append("no masked LM given (--mlm): replacement candidates come from embedding "
                         "neighbours only")
        if not self.embedding_model:
            notes.append("no embedding model: no embedding-neighbour candidates")
        if not self.mlm and not self.embedding_model:
            notes = ["no candidate source: the search only deletes words"]
        return {"mlm": self.mlm, "embedding": self.embedding_model, "k": int(self.k),
                "note": "; ".join(notes) or None}


def candidate_sources(settings: SearchSettings) -> list[Any]:
    """The masked LM's top-k (when given) and the embedding neighbours (when given), in order."""
    sources: list[Any] = []
    if settings.mlm:
        sources.append(MaskedLMCandidates(settings.mlm, int(settings.k)))
    if settings.embedding_model:
        sources.append(EmbeddingNeighbours(settings.embedding_model, int(settings.k)))
    return sources


def _one_metric(metric: Any, options: Any) -> Any:

    specs = resolve_metrics(metric, options)
    if len(specs) != 1:
        raise ValueError(f"the search targets one metric; got {[s.name for s in specs]} "
                         "(put the others in the panel)")
    return specs[0]


def _rows(gold: Any, limit: int | None) -> dict[str, list[Any]]:
    """The columns the search reads, cut to the first ``limit`` rows."""
    n = gold.dataset.num_rows if limit is None else min(int(limit), gold.dataset.num_rows)
    texts = gold.column("hypothesis")[:n]
    for i, text in enumerate(texts):
        if not isinstance(text, str):
            raise ValueError(f"row {i}: the hypothesis column {gold.columns['hypothesis']!r} "
                             f"holds {type(text).__name__}, not text; fill missing golds with \"\"")
    sources = gold.column("source")
    references = gold.column("references")
    return {"ids": gold.ids()[:n], "golds": texts,
            "sources": sources[:n] if sources is not None else [None] * n,
            "references": references[:n] if references is not None else None}


def _clean(value: Any) -> Any:
    """``value`` with NaN and infinite floats as None (results.json is strict JSON)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_clean(v) for v in value]
    return value


def _judge_all(metrics: Sequence[MetricScores], rows: Mapping[str, Any], perturbed: list[str]
               ) -> dict[str, dict[str, list[dict[str, Any]]]]:
    """Per metric and view (``gold``, and ``references`` when the data has them): per-example
    gold/perturbed scores and relative changes."""
    judged: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for metric in metrics:
        views = {"gold": judge_texts(metric, rows["golds"], perturbed, rows["sources"])}
        if rows["references"] is not None and metric.scorer.uses_references != "none":
            views["references"] = judge_texts(metric, rows["golds"], perturbed, rows["sources"],
                                              rows["references"])
        judged[metric.spec.name] = views
    return judged


def _summary(states: list[Hypothesis], judged: Mapping[str, Any], target: str,
             signatures: Mapping[str, str | None]) -> dict[str, Any]:
    """Counts, the mean noise ratio and each metric's mean relative change (and signature),
    over the examples whose search reached the target noise ratio."""
    reached = [i for i, s in enumerate(states) if s.status == "reached"]
    metrics: dict[str, dict[str, Any]] = {}
    for name, views in judged.items():
        metrics[name] = {"role": "target" if name == target else "panel",
                         "signature": signatures[name]}
        for view, rows in views.items():
            metrics[name][view] = mean([rows[i]["relative_change"] for i in reached])
    return {"examples": len(states), "reached": len(reached),
            "statuses": dict(sorted(Counter(s.status for s in states).items())),
            "mean_noise_ratio": mean([states[i].noise_ratio for i in reached]),
            "mean_edits": mean([float(len(states[i].trail)) for i in reached]),
            "metrics": metrics}


def _example(state: Hypothesis, judged: Mapping[str, Any], index: int) -> dict[str, Any]:
    return {"id": state.id, "gold": state.gold, "perturbed": state.text if state.trail
            else state.gold, "status": state.status, "noise_ratio": state.noise_ratio,
            "calls": state.calls, "gold_score": state.gold_score, "score": state.score,
            "relative_change": state.relative(state.score) if state.trail else 0.0,
            "trail": state.trail,
            "metrics": {name: {view: rows[index] for view, rows in views.items()}
                        for name, views in judged.items()}}


def search_result(data: Any, metric: Any, *, noise_ratio: float = 0.1,
                  panel: Any = DEFAULT_PANEL, mlm: str | None = None,
                  embedding_model: str | None = DEFAULT_EMBEDDING_MODEL, k: int = DEFAULT_K,
                  max_calls: int | None = None, max_seconds: float | None = None, seed: int = 0,
                  limit: int | None = None, columns: Mapping[str, str | None] | None = None,
                  task: str = "summarization", split: str = "test",
                  metric_options: Mapping[str, Mapping[str, Any]] | None = None,
                  generalise: bool = False, top_patterns: int = 3,
                  generalise_seeds: Sequence[int] = (1, 2, 3), state_dir: Path | None = None,
                  progress: bool = True, batch_size: int | None = None) -> SearchResult:
    """Search for perturbations ``metric`` does not penalise, on the gold texts of ``data``;
    nothing is written (the report: :meth:`SearchResult.write`).

    Args:
        data: a jsonl/csv/parquet path, ``"demo"``, a Hub id, a Dataset or a dict of columns.
        metric: the targeted metric: a spec (``"chrf"``, ``"bertscore.f1@minilm"``) or a module.
        noise_ratio: the target noise ratio of every hypothesis (word-level, paper Eq. 1).
        panel: other metrics judging the same perturbed texts (the target's family is left out).
        mlm: a masked LM (Hub id or folder) for top-k candidates; None: embedding neighbours only.
        embedding_model: the model whose input embeddings give the nearest-word candidates.
        k: candidates per source and word (the paper's k1 = k2 = 8).
        max_calls, max_seconds: the budget (scored candidate texts; wall time).
        seed: breaks exact ties between edits.
        limit: search only the first ``limit`` rows.
        generalise: turn the ``top_patterns`` best patterns into a perturbation and run the rank
            protocol with it on the *whole* dataset (``generalise_seeds``), target and panel;
            ``state_dir`` keeps that run's finished work (default: the cache).
    Returns:
        the typed result (see :mod:`blindspot.report.search_report` for the layout of its dict).
    """

    settings = SearchSettings(noise_ratio, k, mlm, embedding_model, max_calls, max_seconds, seed,
                              limit, batch_size, progress)
    settings.check()
    task = canonical_task(task)
    spec = _one_metric(metric, metric_options)
    others = panel_specs(spec, panel, metric_options)
    gold = load_gold_data(data, task, columns, split)
    rows = _rows(gold, limit)
    target = MetricScores(spec, rows["golds"], batch_size)
    judges = [target] + [MetricScores(s, rows["golds"], batch_size) for s in others]
    states = [Hypothesis(i, g, s)
              for i, g, s in zip(rows["ids"], rows["golds"], rows["sources"], strict=True)]
    live = [s for s in states if s.status != "empty"]
    for state, score in zip(live, target.against_gold([s.gold for s in live],
                                                      [s.gold for s in live],
                                                      [s.source for s in live]), strict=True):
        state.gold_score = state.score = score
    budget = Budget(max_calls, max_seconds)
    greedy_search(states, target.against_gold, candidate_sources(settings), float(noise_ratio),
                  budget, seed=int(seed), progress=progress)
    perturbed = [s.text if s.trail else s.gold for s in states]
    judged = _judge_all(judges, rows, perturbed)
    examples = [_example(s, judged, i) for i, s in enumerate(states)]
    edits = [{**e, "example": ex["id"]} for ex in examples for e in ex["trail"]]
    result = SearchResult(
        tool={"name": "blindspot", "version": __version__},
        config=_clean({"metric": spec.as_json(), "panel": [s.as_json() for s in others],
                       "noise_ratio": float(noise_ratio), "seed": int(seed), "task": task,
                       "dataset": gold.name, "rows": len(states), "columns": gold.columns,
                       "candidates": settings.candidates_json()}),
        budget=_clean(budget.as_json()),
        summary=_clean(_summary(states, judged, spec.name,
                                {j.spec.name: signature(j.spec, j.scorer, (int(seed),))
                                 for j in judges})),
        patterns=_clean(rank_patterns([e for e in edits if e["score_change"] is not None])),
        examples=_clean(examples))
    if generalise:
        found, result.generalisation_run = generalisation(
            result.to_dict(), data, [spec, *others], task=task, columns=columns, split=split,
            seeds=generalise_seeds, top=top_patterns, progress=progress, state_dir=state_dir)
        result.generalisation = _clean(found)
    return result


__all__ = ["GENERALISATION_FOLDER", "SearchResult", "SearchSettings", "generalisation_state",
           "search_result"]
