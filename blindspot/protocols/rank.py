"""The rank and monotonicity protocol (PROTOCOLS.md §1): ``blindspot run``'s default protocol.

Its run is :func:`blindspot.runner.run.run_blindspot` (perturb, score, judge, report) and its
judge is :mod:`blindspot.judging` (the verdict rules, the curve judgement, the per-sample view,
the NaN policy), which this module re-exports for the code that names the protocol.
"""

from __future__ import annotations

from typing import Any

from blindspot.exit_codes import gate
from blindspot.judging import (DEFAULT_RULE, GOLD, N_BOOT, NOISE_CAP, RULES, TOLERANCE,
                               Comparison, Evidence, Noise, Ruling, VerdictRule, get_rule,
                               judge_curve, judge_rows, per_sample, register_rule,
                               summarise_point)
from blindspot.runner.run import run_blindspot


def run_request(request: Any) -> dict[str, Any]:
    """The rank protocol's entry in the protocol registry: :func:`run_blindspot` on a request
    (its options checked by the registry against ``RANK_OPTIONS``)."""
    return run_blindspot(request.data, request.metrics, task=request.task, tests=request.tests,
                         seeds=request.seeds, columns=request.columns, out=request.out,
                         split=request.split, metric_options=request.metric_options,
                         resources=request.resources, noise_cap=request.noise_cap,
                         num_proc=request.num_proc, progress=request.progress,
                         **request.options)


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


__all__ = ["DEFAULT_RULE", "GOLD", "N_BOOT", "NOISE_CAP", "RULES", "TOLERANCE", "Comparison",
           "Evidence", "Noise", "Ruling", "VerdictRule", "get_rule", "judge_curve", "judge_rows",
           "module_view", "per_sample", "register_rule", "run_request", "summarise_point"]
