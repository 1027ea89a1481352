"""Per-session work areas of the Space: one folder per browser session, one process per run.

Users never see each other's uploads or runs: every file a session writes lives under its own
folder (named after a hash of gradio's session id), the runs a session made are kept in its
``gr.State``, and the running process of a session is looked up by that session only. When the
page is closed the session's process is ended and its folder removed.

A session may start :attr:`SpaceLimits.max_runs` runs, one at a time (the run queue serves one
run of all sessions at once), each stopped after :attr:`SpaceLimits.run_seconds`. What the page
shows of a failure is the run's error message with the server's folders taken out, never the
log (whose traceback may quote server files). The Space's workspace keeps one spare worker
process (``spare=True``): started ahead, its imports done, it takes the next run, and the next
spare starts once that run has ended (so it never competes with a run for the cores).
"""

from __future__ import annotations

import atexit
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from blindspot.report.writer import RESULTS_FILE
from blindspot.space.limits import DEFAULT_LIMITS, SpaceLimits
from blindspot.space.worker import EVENT_PREFIX, LOG_FILE, REQUEST_FILE, WAIT

#: the log of the spare worker's start-up (its run's log is the run folder's, :data:`LOG_FILE`)
SPARE_LOG = "spare.log"


def progress_text(event: Mapping[str, Any]) -> str:
    """A progress event as the page shows it, as the command line's bar says it: its name, its
    count (``scoring 2/6 cells``) and what it is on (``: rouge.rougeL truncation 0.5 s1``)."""
    unit = event.get("unit") or "it"
    count = f"{event['n']:g}/{event['total']:g} {unit}{'s' if event['total'] != 1 else ''}" \
        if event.get("total") else ""
    text = " ".join(x for x in (event.get("desc"), count) if x)
    return f"{text}: {event['postfix']}" if event.get("postfix") else text


def session_key(session_hash: str | None) -> str:
    """A folder name for a gradio session id (a hash: the id itself never reaches the disk)."""
    return hashlib.sha256((session_hash or "anonymous").encode("utf-8")).hexdigest()[:20]


def _worker(argument: str, log: Any) -> subprocess.Popen:
    """A worker process (``python -m blindspot.space.worker ARGUMENT``) logging to ``log``."""
    env = dict(os.environ, PYTHONUNBUFFERED="1", GRADIO_ANALYTICS_ENABLED="False",
               HF_HUB_DISABLE_TELEMETRY="1", TOKENIZERS_PARALLELISM="false")
    return subprocess.Popen(
        [sys.executable, "-m", "blindspot.space.worker", argument], stdout=subprocess.PIPE,
        stderr=log, stdin=subprocess.PIPE if argument == WAIT else subprocess.DEVNULL, text=True,
        encoding="utf-8", env=env)


class Job:
    """One stress-test run in its own process (``spare``, a worker waiting for its request, or a
    new one); read :meth:`events`, end it with :meth:`cancel`."""

    def __init__(self, request: Mapping[str, Any], folder: Path,
                 spare: subprocess.Popen | None = None) -> None:
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        request_path = folder / REQUEST_FILE
        request_path.write_text(json.dumps(dict(request), indent=2), encoding="utf-8")
        self._log = None
        if spare is not None:
            assert spare.stdin is not None
            spare.stdin.write(f"{request_path}\n")
            spare.stdin.close()
            self.process = spare
        else:
            self._log = open(folder / LOG_FILE, "w", encoding="utf-8")
            self.process = _worker(str(request_path), self._log)
        self.cancelled = False
        self.error: str | None = None

    def events(self) -> Iterator[dict[str, Any]]:
        """The run's events as they come (progress, start, error, done), until it exits."""
        assert self.process.stdout is not None
        for line in self.process.stdout:
            if line.startswith(EVENT_PREFIX):
                event = json.loads(line[len(EVENT_PREFIX):])
                if event.get("event") == "error":
                    self.error = event.get("message")
                yield event
        self.process.wait()
        if self._log is not None:
            self._log.close()

    def cancel(self) -> None:
        """End the run now (its finished cells stay in the report folder's state)."""
        self.cancelled = True
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    @property
    def returncode(self) -> int | None:
        return self.process.poll()

    def log_tail(self, lines: int = 15) -> str:
        """The last lines of the run's log, for an error the page shows."""
        path = self.folder / LOG_FILE
        text = path.read_text(encoding="utf-8", errors="replace") if path.is_file() else ""
        return "\n".join(text.splitlines()[-lines:])


class RunLimitError(ValueError):
    """A session asked for more runs than the Space allows."""


class Workspace:
    """The folders and running jobs of every session, under one root folder."""

    def __init__(self, root: str | Path | None = None,
                 limits: SpaceLimits = DEFAULT_LIMITS, spare: bool = False) -> None:
        self.root = Path(root) if root else Path(tempfile.mkdtemp(prefix="blindspot-space-"))
        self.root.mkdir(parents=True, exist_ok=True)
        self.limits = limits
        self._jobs: dict[str, Job] = {}
        self._tickets: dict[str, int] = {}
        self._failures: dict[str, str] = {}
        self._lock = threading.Lock()
        self.keeps_spare = spare
        self._spare: subprocess.Popen | None = None
        if spare:
            self._start_spare()
            atexit.register(self.close)

    def _start_spare(self) -> None:
        """A worker that imports ahead and waits for the next run, unless one is waiting."""
        with self._lock:
            if self._spare is None or self._spare.poll() is not None:
                with open(self.root / SPARE_LOG, "a", encoding="utf-8") as log:
                    self._spare = _worker(WAIT, log)

    def _take_spare(self) -> subprocess.Popen | None:
        """The waiting worker, if one is alive (it is the caller's from then on)."""
        with self._lock:
            spare, self._spare = self._spare, None
        return spare if spare is not None and spare.poll() is None else None

    def close(self) -> None:
        """End the spare worker (the Space stops)."""
        spare = self._take_spare()
        if spare is not None:
            spare.kill()
            spare.wait()

    def folder(self, session_hash: str | None, *parts: str) -> Path:
        """The session's folder (or a sub-folder of it), created on first use."""
        path = self.root.joinpath(session_key(session_hash), *parts)
        path.mkdir(parents=True, exist_ok=True)
        return path

    def new_run_folder(self, session_hash: str | None) -> Path:
        """A fresh ``runs/<n>`` folder of the session (n counts from 1); a
        :class:`RunLimitError` once the session has made its ``max_runs`` runs."""
        runs = self.folder(session_hash, "runs")
        with self._lock:
            number = 1 + max((int(p.name) for p in runs.iterdir() if p.name.isdigit()), default=0)
            if number > self.limits.max_runs:
                limit = self.limits.max_runs
                raise RunLimitError(
                    f"this session has used its {limit} run{'s' if limit != 1 else ''}, the "
                    "limit of this Space; download the reports you need, then reload the page "
                    "for a new session, or run `blindspot run` locally")
            path = runs / str(number)
            path.mkdir()
        return path

    def ticket(self, session_hash: str | None) -> int:
        """A number for a run about to start; Stop pressed before it starts voids it."""
        key = session_key(session_hash)
        with self._lock:
            self._tickets[key] = self._tickets.get(key, 0) + 1
            return self._tickets[key]

    def start(self, session_hash: str | None, request: Mapping[str, Any], folder: Path,
              ticket: int | None = None) -> Job | None:
        """Start a run of the session (one at a time per session: a running one is ended).

        None when ``ticket`` was voided by :meth:`cancel` in the meantime (Stop came first).
        """
        key = session_key(session_hash)
        self.cancel(session_hash, void=False)
        spare = self._take_spare()
        with self._lock:
            if ticket is not None and ticket != self._tickets.get(key):
                if spare is not None and self._spare is None:  # kept for the next run
                    self._spare = spare
                return None
            job = Job(request, folder, spare)
            self._jobs[key] = job
        return job

    def run_to_end(self, session_hash: str | None, request: Mapping[str, Any], folder: Path,
                   ticket: int | None, progress: Callable[..., Any] | None = None) -> str:
        """Run a request in the worker until it ends: ``"done"``, ``"stopped"`` (Stop came first
        or ended it) or ``"failed"`` (the message is in :meth:`failure`); ``progress`` gets
        ``((n, total), desc=...)`` for every progress event, as ``gr.Progress`` takes it."""
        self._failures.pop(session_key(session_hash), None)
        job = self.start(session_hash, request, folder, ticket)
        if job is None:
            return "stopped"
        timer = threading.Timer(self.limits.run_seconds, self._time_out, (session_hash, job))
        timer.daemon = True
        timer.start()
        try:
            for event in job.events():
                if progress is not None and event["event"] == "progress" and event.get("total"):
                    progress((event["n"], event["total"]), desc=progress_text(event))
        finally:
            timer.cancel()
            if self.keeps_spare:  # the next run's worker imports now, while the page renders
                self._start_spare()
        if job.cancelled:
            return "stopped" if session_key(session_hash) not in self._failures else "failed"
        if job.returncode != 0 or not (folder / RESULTS_FILE).is_file():
            self._failures[session_key(session_hash)] = self.public(
                job.error or f"the run process ended with exit code {job.returncode}",
                session_hash)
            return "failed"
        return "done"

    def _time_out(self, session_hash: str | None, job: Job) -> None:
        """Stop a run that outlived :attr:`SpaceLimits.run_seconds` and say why."""
        self._failures[session_key(session_hash)] = (
            f"the run was stopped after {self.limits.run_seconds:g} s, the time limit of this "
            "Space; pick fewer rows, tests or metrics, or run `blindspot run` locally")
        job.cancel()

    def public(self, text: str, session_hash: str | None) -> str:
        """``text`` as a visitor may see it: the server's folders taken out (a session's files
        are named relative to its folder)."""
        folder = str(self.root / session_key(session_hash))
        return text.replace(folder + os.sep, "").replace(folder, ".").replace(
            str(self.root), "<space>")

    def failure(self, session_hash: str | None) -> str:
        """Why the session's last run failed."""
        return self._failures.get(session_key(session_hash), "")

    def job(self, session_hash: str | None) -> Job | None:
        return self._jobs.get(session_key(session_hash))

    def cancel(self, session_hash: str | None, void: bool = True) -> bool:
        """End the session's running job (and void a ticket not yet started); True when a job
        was running."""
        key = session_key(session_hash)
        with self._lock:
            if void:
                self._tickets[key] = self._tickets.get(key, 0) + 1
            job = self._jobs.pop(key, None)
        if job is None or job.returncode is not None:
            return False
        job.cancel()
        return True

    def forget(self, session_hash: str | None) -> None:
        """The page was closed: end its job and delete its files."""
        self.cancel(session_hash)
        shutil.rmtree(self.root / session_key(session_hash), ignore_errors=True)
