"""A real Hub-API server on 127.0.0.1 for the Hub round-trip tests: olah (PyPI ``olah``), which
serves the git repositories under its ``mirrors-path`` through the Hub's download API (repo info,
refs, tree, paths-info, resolve), the API ``huggingface_hub`` and ``datasets`` use when
``HF_ENDPOINT`` points at it. It takes no uploads (405 to ``create_repo``), so the round trip pushes
with ``--push-git`` into the repositories it serves.

olah needs huggingface_hub>=1.27, which the main environment cannot have, so it runs from its own
environment, ``.venv-hub`` beside the checkout's ``.venv`` (requirements/hub-server.txt, pinned by
hub-server-constraints.txt), built here on first use (and rebuilt when those files change).
Its upstream is set to a closed loopback port and its mode to offline: it never calls out.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
from filelock import FileLock
from space_support import _free_port as free_port

CHECKOUT = Path(__file__).resolve().parent.parent
HUB_VENV = Path(os.environ.get("BLINDSPOT_HUB_VENV", CHECKOUT / ".venv-hub"))
REQUIREMENTS = CHECKOUT / "requirements" / "hub-server.txt"
CONSTRAINTS = CHECKOUT / "requirements" / "hub-server-constraints.txt"
INSTALL_TIMEOUT = 600
START_TIMEOUT = 90


def olah_python() -> Path:
    """The interpreter of the hub-server environment, built when missing (once, under a lock)."""
    python = HUB_VENV / "bin" / "python"
    stamp = HUB_VENV / ".blindspot-hub-server"
    with FileLock(str(HUB_VENV) + ".lock"):
        if stamp.is_file() and stamp.read_bytes() == REQUIREMENTS.read_bytes() + CONSTRAINTS.read_bytes():
            return python
        steps = [[sys.executable, "-m", "venv", "--clear", str(HUB_VENV)],
                 [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                  "-r", str(REQUIREMENTS), "-c", str(CONSTRAINTS)]]
        for step in steps:
            done = subprocess.run(step, capture_output=True, text=True, timeout=INSTALL_TIMEOUT)
            if done.returncode != 0:
                pytest.fail(f"could not build the hub-server environment {HUB_VENV} "
                            f"({' '.join(step[:4])}...):\n{done.stderr[-3000:]}")
        stamp.write_bytes(REQUIREMENTS.read_bytes() + CONSTRAINTS.read_bytes())
    return python


@dataclass(frozen=True)
class HubServer:
    """A running olah: its endpoint (for ``HF_ENDPOINT``), the folder of git repositories it
    serves (for ``--push-git``) and its log."""

    endpoint: str
    mirrors: Path
    log: Path


def _config(port: int, mirrors: Path, state: Path) -> str:
    dead = f"127.0.0.1:{free_port()}"  # upstream: a closed loopback port, never the real Hub
    return "\n".join([
        "[basic]", 'host = "127.0.0.1"', f"port = {port}", f'repos-path = "{state}"',
        f'mirrors-path = ["{mirrors}"]', 'hf-scheme = "http"', f'hf-netloc = "{dead}"',
        f'hf-lfs-netloc = "{dead}"', 'mirror-scheme = "http"',
        f'mirror-netloc = "127.0.0.1:{port}"', f'mirror-lfs-netloc = "127.0.0.1:{port}"',
        "metadata-cache-ttl = 0",  # a branch resolves to its newest commit at once after a push
        "[accessibility]", "offline = true", ""])


def _wait_until_serving(endpoint: str, process: subprocess.Popen, log: Path) -> None:
    """Until olah answers an API request (a 404 for a repository it lacks counts: it serves), or
    a clear failure."""
    deadline = time.monotonic() + START_TIMEOUT
    while process.poll() is None and time.monotonic() < deadline:
        try:
            urllib.request.urlopen(f"{endpoint}/api/datasets/none/none/refs", timeout=5).close()
            return
        except urllib.error.HTTPError:
            return
        except OSError:
            time.sleep(0.5)
    state = (f"exited with {process.returncode}" if process.poll() is not None
             else f"did not answer in {START_TIMEOUT} s")
    pytest.fail(f"olah on {endpoint} {state}:\n{log.read_text()[-3000:]}")


@contextmanager
def hub_server(folder: Path) -> Iterator[HubServer]:
    """olah on a free loopback port, serving ``folder/mirrors``, until the block ends."""
    python = olah_python()
    mirrors, state = folder / "mirrors", folder / "olah-state"
    mirrors.mkdir(parents=True)
    port = free_port()
    config = folder / "olah.toml"
    config.write_text(_config(port, mirrors, state), encoding="utf-8")
    log = folder / "olah.log"
    with log.open("w") as handle:
        process = subprocess.Popen([str(python), "-m", "olah.server", "--config", str(config)],
                                   stdout=handle, stderr=subprocess.STDOUT,
                                   stdin=subprocess.DEVNULL, cwd=folder)
    endpoint = f"http://127.0.0.1:{port}"
    try:
        _wait_until_serving(endpoint, process, log)
        yield HubServer(endpoint, mirrors, log)
    finally:
        process.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=20)
        process.kill()  # nothing once it has exited
        process.wait(timeout=20)
