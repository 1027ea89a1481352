"""The child process of one Space run: ``python -m blindspot.space.worker request.json``, or
``python -m blindspot.space.worker --wait`` (a spare: it imports what a run needs first, says
``ready``, then reads its request file's path from stdin).

The request names a registered protocol (``protocol``; default rank) and its
:class:`~blindspot.protocols.interface.ProtocolRequest` fields: the stress, search and check-up
tabs all send one.

A run goes through the protocol registry in its own process, so the Stop button ends it for good
(the process is terminated; the report folder's ``.state`` keeps the cells already finished) and
a crash in a metric never takes the Space down. A spare started before the visitor presses Run
(:class:`blindspot.space.session.Workspace` keeps one) has paid the seconds of its imports by
then, and the process ends as soon as its report is written (no interpreter teardown): the run
takes about what ``blindspot run`` takes. Progress goes to stdout as one JSON event per line
after :data:`EVENT_PREFIX` (every :func:`blindspot.progress.progress_bar` of the run is a
:class:`ReportingTqdm`); everything else the libraries print goes to stderr, the run's log
(:data:`LOG_FILE` in its folder).
"""

from __future__ import annotations

import json
import os
import sys
import time
import traceback
from pathlib import Path
from typing import Any, TextIO

from tqdm.std import tqdm as _StdTqdm

from blindspot.perturbations.perturbation import REGISTRY
from blindspot.progress import report_progress_with
from blindspot.protocols.interface import PROTOCOLS, ProtocolRequest, get_protocol
from blindspot.scoring.scorer import SCORERS

EVENT_PREFIX = "@@blindspot-event "
#: a run folder's request and log
REQUEST_FILE = "request.json"
LOG_FILE = "run.log"
#: the argument of a spare worker
WAIT = "--wait"
#: Seconds between two progress events of one bar (the last update is always sent).
REPORT_INTERVAL = 0.25

_EVENTS: TextIO = sys.stdout


def emit(event: str, **fields: Any) -> None:
    """Write one event line for the Space to read."""
    _EVENTS.write(EVENT_PREFIX + json.dumps({"event": event, **fields}) + "\n")
    _EVENTS.flush()


class ReportingTqdm(_StdTqdm):
    """A tqdm bar that also sends its position as progress events."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._last_report = 0.0
        super().__init__(*args, **kwargs)

    def _report(self, force: bool = False) -> None:
        if self.disable:  # a disabled bar keeps no position
            return
        now = time.monotonic()
        if force or now - self._last_report >= REPORT_INTERVAL or self.n == self.total:
            self._last_report = now
            emit("progress", desc=self.desc or "", postfix=self.postfix or "", n=self.n,
                 total=self.total, unit=self.unit)

    def update(self, n: float | None = 1) -> bool | None:
        shown = super().update(n)
        self._report()
        return shown

    def close(self) -> None:
        self._report(force=True)
        super().close()


def request_from_json(payload: dict[str, Any]) -> Any:
    """The protocol name and :class:`ProtocolRequest` a request file describes."""

    fields = dict(payload)
    fields.pop("protocol", None)
    fields["seeds"] = tuple(fields.get("seeds") or (1,))
    return ProtocolRequest(**fields)


def run_protocol(payload: dict[str, Any]) -> None:
    """A protocol request: its report folder is written to ``out``."""
    protocol = get_protocol(payload.get("protocol", "rank"))
    emit("start", protocol=protocol.name)
    protocol.run(request_from_json(payload))


def run_file(path: Path) -> int:
    """Run the request in ``path``; 0 when the report folder was written, else 1."""

    payload = json.loads(path.read_text(encoding="utf-8"))
    try:
        run_protocol(payload)
    except Exception as error:  # reported to the page; the log has the traceback

        traceback.print_exc()
        emit("error", message=f"{type(error).__name__}: {str(error).strip()[:1000]}")
        return 1
    emit("done")
    return 0


def prepare() -> None:
    """Import what a run needs (every protocol's code, the tests and metrics registries), as a
    spare does before its request comes."""
    for name in PROTOCOLS:
        get_protocol(name)
    len(REGISTRY), len(SCORERS)  # filled on first read


def wait_for_request() -> Path | None:
    """A spare's request: its path, read from stdin once the spare is ready; its log from then
    on is the run folder's (stderr moves there). None when stdin closes first (the Space ended)."""
    prepare()
    emit("ready")
    line = sys.stdin.readline().strip()
    if not line:
        return None
    path = Path(line)
    sys.stderr.flush()
    with open(path.parent / LOG_FILE, "a", encoding="utf-8") as log:
        os.dup2(log.fileno(), 2)
    return path


def main(argv: list[str] | None = None) -> int:
    global _EVENTS
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print(f"usage: python -m blindspot.space.worker REQUEST.json | {WAIT}", file=sys.stderr)
        return 2
    _EVENTS, sys.stdout = sys.stdout, sys.stderr  # library prints go to the log, not the events
    report_progress_with(ReportingTqdm)
    path = wait_for_request() if args[0] == WAIT else Path(args[0])
    return 0 if path is None else run_file(path)


if __name__ == "__main__":
    code = main()
    sys.stderr.flush()
    _EVENTS.flush()
    os._exit(code)  # the report is written and closed: skip the seconds of interpreter teardown
