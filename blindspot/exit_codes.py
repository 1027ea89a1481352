"""The exit codes of the ``blindspot`` command and its one way of failing.

The contract (README, "Exit codes"; ``blindspot run --help``):

* 0: the run finished and every test was judged (pass or fail);
* 1: bad input or a usage error, found before any work (``error: `` and one paragraph on stderr),
  or a fault that stopped the run: the output's disk is full, a worker process kept dying (one
  ``error: `` line naming what and where, and what the run state keeps: the same command
  resumes);
* 2: the run finished, but some tests (or whole metrics) ended in ``error``;
* 3: ``--fail-on fail`` or ``--fail-on significant`` was given and a test failed
  (``significant``: a fail that is not ``within_noise``); 3 wins over 2, the asked-for condition
  holds whatever the tests that erred would have said. ``--fail-on error`` is the default: fails
  alone end with 0.
* 130 (Ctrl-C) or 143 (SIGTERM): the run was interrupted; one ``interrupted: `` line says how many
  cells the run state keeps (the same command resumes).

:func:`run_exit_code` is the one place a finished run's results become its exit code;
:func:`gate` is the same decision as data (``compute()["gate"]``).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from enum import Enum, IntEnum
from typing import Any, NoReturn

import typer
from typer._click.exceptions import BadParameter, NoSuchOption, UsageError  # typer 0.29 vendors click
from typer.core import TyperGroup

from blindspot.faults import OutOfSpaceError, RunInterrupted, WorkerLost
from blindspot.suggest import did_you_mean


class ExitCode(IntEnum):
    JUDGED = 0
    BAD_INPUT = 1
    TESTS_IN_ERROR = 2
    TESTS_FAILED = 3


class FailOn(str, Enum):
    """What makes ``blindspot run`` exit 3 (``--fail-on``)."""

    error = "error"  # nothing: only errors end non-zero (2); the default
    fail = "fail"  # any failed test
    significant = "significant"  # a failed test beyond the noise (not ``within_noise``)


#: which failed tests each ``--fail-on`` stops on, by the test's results entry
_STOPS_ON: dict[FailOn, Callable[[Mapping[str, Any]], bool]] = {
    FailOn.error: lambda verdict: False,
    FailOn.fail: lambda verdict: True,
    FailOn.significant: lambda verdict: not verdict.get("within_noise"),
}

EPILOG = ("Exit status: 0 every test judged; 1 bad input or usage, found before any work, or a "
          "full output disk (rerun to resume); 2 the run finished but some tests ended in error; "
          "3 with --fail-on fail|significant, a test failed (significant: beyond the noise); "
          "130/143 interrupted by Ctrl-C/SIGTERM (rerun to resume).")


def fail(message: str) -> NoReturn:
    """Print ``error: message`` on stderr (one paragraph, never wrapped) and exit 1."""
    typer.secho("error: ", fg=typer.colors.RED, bold=True, err=True, nl=False)
    typer.echo(message, err=True)
    raise typer.Exit(code=ExitCode.BAD_INPUT)


def _entries(found: Any) -> Iterator[tuple[str, Mapping[str, Any]]]:
    if isinstance(found, Mapping):
        yield from ((name, entry) for name, entry in found.items() if isinstance(entry, Mapping))


def _metric_entries(results: Mapping[str, Any]) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """Every metric entry of a results dict: under ``datasets`` (rank, preference) or at the
    top (correlation, deviation)."""
    yield from _entries(results.get("metrics"))
    for dataset, found in _entries(results.get("datasets")):
        yield from ((f"{dataset}: {name}", entry) for name, entry in _entries(found.get("metrics")))


def ended_in_error(results: Mapping[str, Any]) -> list[str]:
    """What ended in ``error``: ``"dataset: metric"`` (the metric failed) or
    ``"dataset: metric / test"`` (one test of it did)."""
    found = []
    for name, entry in _metric_entries(results):
        if entry.get("error"):
            found.append(name)
            continue
        found += [f"{name} / {test}" for test, verdict in (entry.get("tests") or {}).items()
                  if verdict.get("status") == "error"]
    return found


def failed_tests(results: Mapping[str, Any], fail_on: FailOn | str) -> list[str]:
    """The failed tests ``--fail-on`` stops on, ``"dataset: metric / test"``: every fail
    (``fail``), the fails not within noise (``significant``), none (``error``)."""
    stops = _STOPS_ON[FailOn(fail_on)]
    return [f"{name} / {test}" for name, entry in _metric_entries(results)
            for test, verdict in (entry.get("tests") or {}).items()
            if isinstance(verdict, Mapping) and verdict.get("status") == "fail" and stops(verdict)]


def run_exit_code(results: Mapping[str, Any], fail_on: FailOn | str = FailOn.error) -> ExitCode:
    """The exit code of a finished run under ``--fail-on``."""
    if failed_tests(results, fail_on):
        return ExitCode.TESTS_FAILED
    return ExitCode.TESTS_IN_ERROR if ended_in_error(results) else ExitCode.JUDGED


def gate(results: Mapping[str, Any]) -> dict[str, Any]:
    """The run as a CI gate sees it: what erred, what failed (beyond the noise or not) and the
    exit code each ``--fail-on`` would end with."""
    return {"errors": ended_in_error(results),
            "fails": failed_tests(results, FailOn.fail),
            "significant_fails": failed_tests(results, FailOn.significant),
            "exit_code": {mode.value: int(run_exit_code(results, mode)) for mode in FailOn}}


def usage_message(error: UsageError) -> str:
    """A usage error (unknown option or command, a value of the wrong type or outside the
    choices, a missing option) as one paragraph in the project's manner: "did you mean" from
    :func:`did_you_mean`, and the command whose ``--help`` shows the usage."""
    if isinstance(error, BadParameter) and (wrong := _wrong_choice(error)) is not None:
        text = wrong
    elif isinstance(error, NoSuchOption):
        text = f"no such option: {error.option_name}"
        if error.ctx is not None:
            names = [name for param in error.ctx.command.get_params(error.ctx) for name in param.opts]
            text += did_you_mean(error.option_name, names)
    else:
        text = error.format_message().rstrip(".")
    where = error.ctx.command_path if error.ctx is not None else "blindspot"
    return f"{text}; see `{where} --help`"


def _wrong_choice(error: BadParameter) -> str | None:
    """``--format 'demtr' is not one of aces, demetr; did you mean 'demetr'?`` when the value
    is outside the option's choices (an ``Enum``), else None. typer checks choices with pydantic,
    whose error, the cause of typer's, keeps the value given."""
    from pydantic import ValidationError  # imported by typer for the check that failed

    choices = getattr(getattr(error.param, "type_descriptor", None), "choices", None)
    if error.param is None or not choices or not isinstance(error.__cause__, ValidationError):
        return None
    given = str(error.__cause__.errors()[0]["input"])
    names = [str(getattr(choice, "value", choice)) for choice in choices]
    return (f"{error.param.opts[-1]} {given!r} is not one of {', '.join(names)}"
            f"{did_you_mean(given, names)}")


@contextmanager
def _usage_errors_are_bad_input() -> Iterator[None]:
    try:
        yield
    except UsageError as error:  # click's own exit code is 2, which here means "tests in error"
        fail(usage_message(error))


@contextmanager
def _faults_are_one_line() -> Iterator[None]:
    """A fault of the machine is one line on stderr, never a traceback: a full output disk or a
    worker that kept dying (``error: ``, exit 1), an interrupted run (``interrupted: ``, exit
    128 + the signal: 130 Ctrl-C, 143 SIGTERM); click would print "Aborted!" and exit 1."""
    try:
        yield
    except KeyboardInterrupt as stop:
        typer.echo(str(stop) if isinstance(stop, RunInterrupted) else "interrupted", err=True)
        raise typer.Exit(code=getattr(stop, "exit_code", 130)) from None
    except (OutOfSpaceError, WorkerLost) as error:
        fail(str(error))


class BlindspotGroup(TyperGroup):
    """The command group: a usage error (an unknown option or command, a value of the wrong
    type) is one ``error: `` paragraph with exit status 1, as bad input is, so that exit status 2
    always means "tests ended in error". In the commands list each command's help is its first
    paragraph on one line (typer's rich mode would keep the docstring's line breaks there)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for command in self.commands.values():
            if command.help and not command.short_help:
                command.short_help = " ".join(inspect.cleandoc(command.help).split("\n\n")[0].split())

    def make_context(self, *args: Any, **kwargs: Any) -> Any:
        with _usage_errors_are_bad_input():
            return super().make_context(*args, **kwargs)

    def invoke(self, ctx: Any) -> Any:
        with _usage_errors_are_bad_input(), _faults_are_one_line():
            return super().invoke(ctx)

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        try:
            return super().resolve_command(ctx, args)
        except UsageError as error:
            if args and args[0] not in self.commands:
                error.message = (f"unknown command {args[0]!r}; valid commands: "
                                 f"{', '.join(self.commands)}{did_you_mean(args[0], self.commands)}")
            raise


__all__ = ["EPILOG", "BlindspotGroup", "ExitCode", "FailOn", "ended_in_error", "fail",
           "failed_tests", "gate", "run_exit_code", "usage_message"]
