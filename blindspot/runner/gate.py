"""The CI gate of a rank run: which tests erred or failed, and the exit status ``blindspot run``
ends with.

Exit statuses (the contract every entry point keeps): 0 every test was judged (or the gate
ignores what failed); 1 bad input or usage, found before any work; 2 the run finished but some
tests ended in ``error``; 3 ``--fail-on fail`` or ``--fail-on significant`` was given and a test
failed (``significant``: a fail that is not ``within_noise``). ``--fail-on error`` is the default:
fails alone end with 0. When the gate's fails and errors meet, 3 wins: the asked-for condition
holds whatever the tests that erred would have said.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any

from blindspot.report.schema import iter_test_results

EXIT_OK = 0
EXIT_BAD_INPUT = 1
EXIT_ERRORS = 2
EXIT_FAILED = 3


class FailOn(str, Enum):
    """What makes ``blindspot run`` exit non-zero beyond a test's error."""

    error = "error"  # only errors (exit 2); the default
    fail = "fail"  # any failed test (exit 3)
    significant = "significant"  # a failed test beyond the noise (exit 3)


@dataclass(frozen=True)
class Gate:
    """The tests of a run that erred, failed, and failed beyond the noise, each named
    ``dataset / metric / test``."""

    errors: tuple[str, ...]
    fails: tuple[str, ...]
    significant: tuple[str, ...]

    def tripped(self, fail_on: FailOn | str) -> tuple[str, ...]:
        """The failed tests the gate ``fail_on`` stops on (none for ``error``)."""
        chosen = FailOn(fail_on)
        return {FailOn.error: (), FailOn.fail: self.fails,
                FailOn.significant: self.significant}[chosen]

    def exit_code(self, fail_on: FailOn | str = FailOn.error) -> int:
        """The exit status of the run under ``fail_on``."""
        if self.tripped(fail_on):
            return EXIT_FAILED
        return EXIT_ERRORS if self.errors else EXIT_OK

    def as_json(self) -> dict[str, Any]:
        return {"errors": list(self.errors), "fails": list(self.fails),
                "significant_fails": list(self.significant),
                "exit_code": {mode.value: self.exit_code(mode) for mode in FailOn}}


def run_gate(results: dict[str, Any]) -> Gate:
    """The gate of a rank run's results (``results.json``)."""
    errors, fails, significant = [], [], []
    for dataset, metric, test, result in iter_test_results(results):
        name = f"{dataset} / {metric} / {test}"
        if result["status"] == "error":
            errors.append(name)
        elif result["status"] == "fail":
            fails.append(name)
            if not result.get("within_noise"):
                significant.append(name)
    return Gate(tuple(errors), tuple(fails), tuple(significant))
