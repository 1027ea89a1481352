"""The rank and monotonicity protocol (PROTOCOLS.md §1): ``blindspot run``'s default protocol.

Its declaration (options included) is :data:`blindspot.protocols.declarations.RANK`; its run is
:func:`blindspot.runner.pipeline.judge_run` (perturb, score, judge), its result a
:class:`RankResult`, its report :func:`blindspot.report.writer.render_report`; its judge is
:mod:`blindspot.judging` (the verdict rules, the curve judgement, the per-sample view, the NaN policy):
import its names from there.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console

from blindspot.errors import DataRoles, MetricNeeds
from blindspot.exit_codes import gate
from blindspot.perturbations.perturbation import canonical_task
from blindspot.perturbations.suites import suite_tests
from blindspot.protocols.declarations import RANK
from blindspot.protocols.interface import Protocol, ProtocolRequest, ProtocolResult
from blindspot.report.files import ReportFiles
from blindspot.report.schema import SCHEMA_VERSION, DatasetResult, RunResult, results_schema
from blindspot.report.terminal import print_summary
from blindspot.report.writer import render_report
from blindspot.runner.data import gold_inputs
from blindspot.runner.pipeline import default_state_folder, judge_run
from blindspot.runner.stream import stream_path


@dataclass(kw_only=True)
class RankResult(ProtocolResult):
    """A rank run's result (:func:`judge_run`; its layout and JSON Schema:
    :class:`blindspot.report.schema.RunResult`): the run's config and, per dataset, every
    metric's typed verdicts."""

    schema_version: int = SCHEMA_VERSION
    protocol: str = "rank"
    config: dict[str, Any]
    datasets: dict[str, DatasetResult]

    @classmethod
    def of(cls, run: RunResult) -> RankResult:
        """The protocol's result of the runner's :class:`RunResult`."""
        return cls(schema_version=run.schema_version, protocol=run.protocol, tool=run.tool,
                   config=run.config, datasets=run.datasets)

    @classmethod
    def json_schema(cls) -> dict[str, Any]:
        """The schema generated from :class:`~blindspot.report.schema.RunResult` down to every
        point (:func:`~blindspot.report.schema.results_schema`)."""
        return results_schema()


def state_folder(request: ProtocolRequest) -> Path | None:
    """The run's resumable state: the ``state_dir`` option, else ``<out>/.state`` when the run
    has a report folder, else None (:func:`judge_run` then keeps it in the cache)."""
    given = request.options.get("state_dir")
    if given is not None:
        return Path(given)
    return Path(request.out) / ".state" if request.out is not None else None


def module_view(results: dict[str, Any]) -> dict[str, Any]:
    """What ``evaluate.load("blindspot/blindspot").compute`` returns for a one-metric rank run."""
    dataset = next(iter(results["datasets"].values()))
    (entry_name, entry), = dataset["metrics"].items()
    tests = entry["tests"]
    return {"metric": entry_name, "gold": entry["gold"], "error": entry["error"],
            "verdicts": {t: r["status"] for t, r in tests.items()},
            "failed": [t for t, r in tests.items() if r["status"] == "fail"],
            "explanations": {t: r["explanation"] for t, r in tests.items()},
            "gate": gate(results),
            "errors": {t: r["error"] for t, r in tests.items() if r["status"] == "error"},
            "skipped_tests": dataset["skipped_tests"], "tests": tests,
            "expectations": entry.get("expectations", []), "results": results}


class RankProtocol(Protocol[RankResult]):
    declaration = RANK

    def inputs(self, request: ProtocolRequest) -> tuple[list[DataRoles], list[MetricNeeds]]:
        """The gold data's columns and the metrics' needs, checked before any work (with
        ``chunk_size``, each source first checked to be a file that streams); the test names
        first, so a misspelt test is named before the data's columns are read."""
        suite_tests(request.tests, canonical_task(request.task))
        if request.options.get("chunk_size") is not None:
            for source in request.data if isinstance(request.data, (list, tuple)) else [request.data]:
                stream_path(source)
        return gold_inputs(request)

    def execute(self, request: ProtocolRequest) -> RankResult:
        """:func:`judge_run` on the request (options checked against ``RANK.options``)."""
        options = {**request.options, "state_dir": state_folder(request)}
        return RankResult.of(judge_run(
            request.data, request.metrics, task=request.task, tests=request.tests,
            seeds=request.seeds, columns=request.columns, split=request.split,
            metric_options=request.metric_options, resources=request.resources,
            noise_cap=request.noise_cap, num_proc=request.num_proc, progress=request.progress,
            **options))

    def kept_in(self, request: ProtocolRequest) -> Path | None:
        """The run state (:func:`state_folder`), else the cache's run folder."""
        return state_folder(request) or default_state_folder()

    def render(self, result: RankResult) -> ReportFiles:
        """results.json, report.md, report.html and the plots (:func:`render_report`)."""
        return render_report(result.to_dict())

    def summarise(self, result: RankResult, console: Console) -> None:
        print_summary(result.to_dict(), console)

    def view(self, result: RankResult) -> dict[str, Any]:
        return module_view(result.to_dict())


def run_blindspot(data: Any, metrics: Any, *, out: str | Path | None = None,
                  **settings: Any) -> dict[str, Any]:
    """The rank protocol from Python: ``get_protocol("rank").run(...)`` as the results dict
    (:mod:`blindspot.report.schema`), the report folder written when ``out`` is given.

    ``settings`` are the request's fields (``task``, ``tests``, ``seeds``, ``columns``,
    ``split``, ``metric_options``, ``resources``, ``noise_cap``, ``num_proc``, ``progress``) and
    the rank protocol's options (``levels``, ``tolerance``, ``state_dir`` -- default
    ``<out>/.state``, else the cache --, ``engine``, ``chunk_size``...), checked as
    ``--protocol-option`` is."""
    return RankProtocol().run(ProtocolRequest.of(data, metrics, out=out, **settings)).to_dict()


__all__ = ["RankProtocol", "RankResult", "module_view", "run_blindspot",
           "state_folder"]
