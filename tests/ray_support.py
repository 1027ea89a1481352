"""The test session's one Ray cluster, and a metric whose Ray worker dies once.

One head for the whole session (tests/conftest.py's ``ray_head``), started as a user would
(``ray start --head``: 2 CPUs, its own temp dir, its own auth token, loopback only) and stopped by
its process group when the session ends, even when a test failed. Starting a cluster costs tens of
seconds on 2 busy cores, so every test that needs one joins this head: in this process as a driver
(:func:`driver`), or from a ``blindspot`` process of its own (``--address``, with :attr:`Head.env`).

Ray turns 127.0.0.1 into this machine's IP (even ``--node-ip-address 127.0.0.1``) unless it runs
single-node, ``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0``: the head and its drivers run with that
variable, so nothing listens beyond loopback.
"""

from __future__ import annotations

import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any


class CrashOnceOverlap:
    """Share of hypothesis tokens found in the reference; the first worker process that scores
    while ``marker`` does not exist creates it and dies (``os._exit``), as a killed worker."""

    name = "crash_once_overlap"
    config_name = None

    def __init__(self, marker: Path) -> None:
        self.marker = str(marker)

    def compute(self, predictions: list[str], references: list[Any],
                use_aggregator: bool = True, **_: Any) -> dict[str, Any]:
        if not os.path.exists(self.marker):
            Path(self.marker).write_text(str(os.getpid()))
            os._exit(1)
        scores = []
        for hyp, ref in zip(predictions, references, strict=True):
            words = hyp.split()
            vocab = set((ref if isinstance(ref, str) else ref[0]).split())
            scores.append(sum(w in vocab for w in words) / len(words) if words else 0.0)
        return {"score": scores if not use_aggregator else sum(scores) / len(scores)}


@dataclass
class Head:
    """A running head: where to reach it and the environment its drivers need."""

    gcs_port: int
    client_port: int
    env: dict[str, str]
    cache: Path  # the BLINDSPOT_CACHE of the head's workers (which must never write one)
    logs: Path  # the head's session logs, quoted when a driver fails

    @property
    def address(self) -> str:
        """What a driver on the cluster's node joins (``--address HOST:PORT``)."""
        return f"127.0.0.1:{self.gcs_port}"

    @property
    def client_address(self) -> str:
        """What a Ray Client driver joins (``--address ray://HOST:PORT``)."""
        return f"ray://127.0.0.1:{self.client_port}"

    def client_server_logs(self) -> str:
        """The tails of the Ray Client servers' logs: the proxier's and each driver's own server
        (``ray_client_server_PORT.err``), the only account of a client that could not start."""
        tails = []
        for log in sorted(self.logs.glob("ray_client_server*")):
            text = log.read_text(encoding="utf-8", errors="replace").strip()
            if text:
                tails.append(f"--- {log.name} (last 40 lines)\n"
                             + "\n".join(text.splitlines()[-40:]))
        return "\n".join(tails) or f"(no Ray Client server log under {self.logs})"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _stop(group: int) -> None:
    """Stop every process of the head's process group (ours: a new session), TERM then KILL."""
    for sig, wait_s in ((signal.SIGTERM, 3.0), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(group, sig)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline:
            try:
                os.killpg(group, 0)
            except ProcessLookupError:
                return
            time.sleep(0.2)


#: a process of its own beside the head: once the process that started the head is gone (an
#: xdist worker that crashed, a suite stopped with kill), it stops the head's process group, so
#: no head outlives its test session to slow the next one; it ends with the group
WATCHDOG = """
import os, signal, sys, time
owner, group = int(sys.argv[1]), int(sys.argv[2])
while True:
    time.sleep(1)
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        sys.exit(0)
    try:
        os.kill(owner, 0)
    except ProcessLookupError:
        os.killpg(group, signal.SIGKILL)
"""


@contextmanager
def running_head() -> Iterator[Head]:
    """A loopback head with 2 CPUs and a 200 MB object store, stopped on exit."""
    # a short folder: Ray's Unix sockets live under it, and their paths may not pass 107 bytes
    folder = Path(tempfile.mkdtemp(prefix="bs-ray-", dir="/tmp" if os.path.isdir("/tmp")
                                   else None))
    token = folder / "auth_token"
    token.write_text(secrets.token_hex(32))
    cache = folder / "head-cache"
    env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0", "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0",
           "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN_PATH": str(token),
           "BLINDSPOT_CACHE": str(cache)}
    env.pop("RAY_ADDRESS", None)
    gcs_port, client_port = free_port(), free_port()
    # `ray start` of this interpreter (the head's workers run the Python that started it)
    command = [sys.executable, "-m", "ray.scripts.scripts", "start", "--head",
               "--node-ip-address", "127.0.0.1", "--num-cpus", "2", "--port", str(gcs_port),
               "--ray-client-server-port", str(client_port), "--include-dashboard", "false",
               "--dashboard-host", "127.0.0.1", "--dashboard-port", str(free_port()),
               "--dashboard-agent-listen-port", str(free_port()),
               "--object-store-memory", str(200 * 1024 * 1024),
               "--temp-dir", str(folder / "ray"), "--disable-usage-stats"]
    # a new session: the head's daemons stay in this process group, which the exit stops
    started = subprocess.Popen(command, env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, start_new_session=True)
    watchdog = subprocess.Popen([sys.executable, "-I", "-c", WATCHDOG, str(os.getpid()),
                                 str(started.pid)], start_new_session=True)
    try:
        output, _ = started.communicate(timeout=180)
        if started.returncode != 0:
            raise RuntimeError(f"`ray start --head` failed ({started.returncode}):\n{output}")
        yield Head(gcs_port, client_port, env, cache, folder / "ray" / "session_latest" / "logs")
    finally:
        started.kill()
        _stop(started.pid)
        watchdog.kill()
        watchdog.wait()
        shutil.rmtree(folder, ignore_errors=True)


#: what a driver in this process takes from the head's environment while it is joined
DRIVER_ENV = ("RAY_USAGE_STATS_ENABLED", "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "RAY_AUTH_MODE",
              "RAY_AUTH_TOKEN_PATH")


@contextmanager
def driver(head: Head) -> Iterator[Any]:
    """This process joined to ``head`` as a driver (``ray.init(address=...)``), so that a run
    with ``engine="ray"`` and no address uses it; left (``ray.shutdown``) on exit."""
    import ray
    from ray._private.authentication_test_utils import reset_auth_token_state

    saved = {name: os.environ.get(name) for name in DRIVER_ENV}
    os.environ.update({name: head.env[name] for name in DRIVER_ENV})
    reset_auth_token_state()  # Ray read its auth settings when it was imported: read them again
    try:
        ray.init(address=head.address, include_dashboard=False, log_to_driver=False)
        try:
            yield ray
        finally:
            ray.shutdown()
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        reset_auth_token_state()
