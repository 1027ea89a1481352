"""The one path of every protocol command (``blindspot run``, ``stream``, ``search``,
``judge-audit``): read the seeds, run a protocol on a
:class:`~blindspot.protocols.interface.ProtocolRequest` (its result, then its report folder),
print its summary and where its report is, and exit with the run's exit code under
``--fail-on``.

The ``run``, ``stream``, ``search`` and ``judge-audit`` command modules import it.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import typer
from rich.console import Console

from blindspot.errors import message
from blindspot.exit_codes import ExitCode, FailOn, fail
from blindspot.faults import ScorerUnavailable
from blindspot.protocols.interface import ProtocolRequest, get_protocol
from blindspot.seeding import parse_seeds

# Wide tables when piped (make demo, CI logs); the terminal width otherwise.
console = Console(width=None if sys.stdout.isatty() else 160)


def seeds_option(text: str) -> list[int]:
    """``--seeds`` read (``1,2,3`` or ``1-5``); a bad one fails with the reason, exit 1."""
    try:
        return parse_seeds(text)
    except ValueError as error:
        fail(str(error))


def run_job(protocol: str, out: Path | None, fail_on: FailOn = FailOn.error,
            **request: Any) -> None:
    """Run a protocol on a request, print its summary and where the report is (with an ``out``),
    and exit with the run's exit code: 3 when ``--fail-on`` stops on a failed test, 2 when
    something ended in error (:meth:`~blindspot.protocols.interface.Protocol.ended_in_error`),
    else 0."""
    try:
        chosen = get_protocol(protocol)
        result = chosen.run(ProtocolRequest(out=out, **request))
    except (ValueError, KeyError, FileNotFoundError, ScorerUnavailable) as error:
        fail(message(error))
    chosen.summarise(result, console)
    if out is not None:
        console.print(f"[bold]report:[/] {(out / chosen.report_file).resolve()}")
    stopped = chosen.failed(result, fail_on)
    errored = chosen.ended_in_error(result)
    if stopped:
        code = ExitCode.TESTS_FAILED
        kind = "failed beyond the noise" if fail_on is FailOn.significant else "failed"
        typer.echo(f"--fail-on {fail_on.value}: {len(stopped)} {kind} ({_first(stopped)}); "
                   f"exit status {int(code)}", err=True)
    elif errored:
        code = ExitCode.TESTS_IN_ERROR
        typer.echo(f"{len(errored)} ended in error ({_first(errored)}); exit status {int(code)}",
                   err=True)
    else:
        code = ExitCode.JUDGED
    raise typer.Exit(code=code)


def _first(names: list[str], shown: int = 5) -> str:
    """The first ``shown`` names, then ``...`` when there are more."""
    return ", ".join(names[:shown]) + (", ..." if len(names) > shown else "")
