"""A metric's entry in ``results.json``: built, failed or judged here, for every kind of run.

Every run (:func:`blindspot.runner.pipeline.run_dataset`, whether its data is one chunk or many) and
the protocols that report a metric's entry make it here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from blindspot import __version__
from blindspot.expectations import applied_drops, check_expectations
from blindspot.perturbations.perturbation import REGISTRY
from blindspot.report.schema import GoldSummary, MetricResult, TestResult
from blindspot.runner.curves import Cell, Gold, JudgeSettings, gold_value, judge_test
from blindspot.runner.metric_spec import MetricSpec
from blindspot.scoring.signature import metric_signature


def tool() -> dict[str, str]:
    """The ``tool`` entry of every protocol's results: this package and its version."""
    return {"name": "blindspot", "version": __version__}


def error_text(error: BaseException) -> str:
    """An exception as a results entry shows it: its type and (the start of) its message."""
    return f"{type(error).__name__}: {str(error).strip()[:500]}"


def missing_input(spec: MetricSpec, scorer: Any, columns: Mapping[str, str | None],
                  column_names: Sequence[str]) -> str | None:
    """Why ``scorer`` cannot score data with these column roles (a missing references/source
    column), or None."""
    needs = {"references": scorer.uses_references, "source": scorer.uses_source}
    for role, use in needs.items():
        if use == "required" and not columns[role]:
            return (f"metric {spec.name!r} needs {role}; the data has no {role} column "
                    f"(columns: {list(column_names)}); name it with --{role}-column")
    return None


def signature(spec: MetricSpec, scorer: Any | None, seeds: Sequence[int] = ()) -> str | None:
    """The signature of a metric's entry in any protocol's results (what produced its numbers,
    :mod:`blindspot.scoring.signature`); None when its scorer could not be built. ``seeds``:
    the run's, none for a protocol that perturbs nothing."""
    if scorer is None:
        return None
    return metric_signature(scorer, spec.output or scorer.outputs[0], seeds)


def metric_entry(spec: MetricSpec, scorer: Any | None, seeds: Sequence[int]) -> MetricResult:
    """A metric's entry before any test is judged, signed by its scorer (run with ``seeds``)."""
    return MetricResult(spec.metric, spec.output or (scorer.outputs[0] if scorer else ""),
                        spec.as_json()["options"], spec.higher_is_better,
                        bool(scorer.corpus_level) if scorer else False,
                        signature=signature(spec, scorer, seeds))


def gold_summary(gold: Gold) -> GoldSummary:
    return GoldSummary(gold_value(gold), 0.0, gold.rows, 0)


def categories(tests: Sequence[str]) -> dict[str, str]:
    """Each test's category (fluency, consistency, ...), as its perturbation declares it."""
    return {t: REGISTRY[t].category for t in tests}


def verdict_rule(test: str) -> str:
    """The rule the test declares for its verdict (``Perturbation.verdict_rule``)."""
    return REGISTRY[test].verdict_rule


def judge_metric(entry: MetricResult, gold: Gold, by_test: Iterable[tuple[str, list[Cell]]],
                 categories: Mapping[str, str], settings: JudgeSettings) -> None:
    """Judge each test of a metric (``by_test``: its scored cells, one test at a time, so a
    run loads one test's scores at once) and add the expectations."""
    drops: dict[tuple[str, str], float | None] = {}
    for test, test_cells in by_test:
        entry.tests[test] = judge_test(test, categories[test], test_cells, gold, settings,
                                       verdict_rule(test))
        drops.update(applied_drops(test_cells, gold.scores, gold.corpus_score))
    checks = check_expectations({t: r.to_dict() for t, r in entry.tests.items()}, drops,
                                settings.tolerance)
    if checks:  # the examination paper's expectations, when the run has its tests
        entry.expectations = checks


def by_test(cells: Sequence[Cell]) -> list[tuple[str, list[Cell]]]:
    """The cells grouped by test, in plan order."""
    grouped: dict[str, list[Cell]] = {}
    for cell in cells:
        grouped.setdefault(cell.test, []).append(cell)
    return list(grouped.items())


def fail_all(entry: MetricResult, tests: Sequence[str], categories: Mapping[str, str],
             message: str) -> None:
    """The metric could not run (or failed on the gold rows): every test is an error."""
    entry.error = message
    for test in tests:
        entry.tests[test] = TestResult.failed(test, categories[test], verdict_rule(test),
                                              message)


__all__ = ["by_test", "categories", "error_text", "fail_all", "gold_summary", "judge_metric",
           "metric_entry", "missing_input", "signature", "tool", "verdict_rule"]
