"""Scoring computed ahead by an engine (Ray's path, issue 17): a metric's own error on a job falls
back to scoring the cells here, which reports it on its cell; an engine's own error is raised,
never swallowed into a silent fallback."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from blindspot.protocols.rank import run_blindspot
from blindspot.runner.engines import LocalEngine, ScoreJob, ScorerRecipe

RUN = dict(task="summarization", tests="repeated_token,truncation", seeds=[1], progress=False)


def no_repeats(predictions: list[str], references: list[list[str]]) -> list[float]:
    """Word counts; raises on a text with a word said twice in a row (no demo gold text has one;
    repeated_token makes them)."""
    if any(re.search(r"\b(\w+) \1\b", p) for p in predictions):
        raise ValueError("a word repeated")
    return [float(len(p.split())) for p in predictions]


@dataclass
class LostCluster(LocalEngine):
    """An engine whose own machinery fails (not the metric): a lost cluster."""

    computes_ahead: bool = True

    def score(self, recipe: ScorerRecipe, jobs: Sequence[ScoreJob]) -> Iterator[list[dict]]:
        raise ConnectionError("the cluster went away")
        yield  # a generator, like every engine's score


def _results(tmp_path: Path, name: str, monkeypatch: pytest.MonkeyPatch, **settings: Any) -> str:
    monkeypatch.setenv("BLINDSPOT_CACHE", str(tmp_path / f"cache-{name}"))
    results = run_blindspot("demo", no_repeats, state_dir=tmp_path / name, **RUN,
                            **settings)
    return json.dumps(results, sort_keys=True)


def test_a_metric_error_on_a_job_is_reported_on_its_cell(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    plain = _results(tmp_path, "plain", monkeypatch)
    ahead = _results(tmp_path, "ahead", monkeypatch, engine=LocalEngine(computes_ahead=True))
    assert ahead == plain
    (dataset,) = json.loads(ahead)["datasets"].values()
    tests = dataset["metrics"]["no_repeats"]["tests"]
    assert tests["repeated_token"]["status"] == "error"
    assert tests["repeated_token"]["error"].endswith("ValueError: a word repeated")
    assert tests["truncation"]["status"] == "pass"  # fewer words at every level


def test_an_engine_error_is_raised_not_swallowed(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ConnectionError, match="the cluster went away"):
        _results(tmp_path, "lost", monkeypatch, engine=LostCluster())
