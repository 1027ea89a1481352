"""Shared set-up of the Space tests: a tiny adversarial dataset folder built from the demo, and
the app served by the real command on a free loopback port."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

import pytest

START_TIMEOUT = 180
TINY_TESTS = "truncation"
TINY_SEEDS = (1,)
TINY_ROWS = 3


def build_tiny_dataset(out: Path) -> Path:
    """The builder's real output on the first demo summarization rows: one test, one seed."""
    from blindspot.datasets_scripts.build_adversarial import build_adversarial_dataset

    return build_adversarial_dataset("demo", "summarization", out, tests=TINY_TESTS,
                                     seeds=TINY_SEEDS, limit=TINY_ROWS, name="tiny-demo")


def write_menli_slice(path: Path, per_type: int = 2) -> Path:
    """The first ``per_type`` rows of every error type of the shipped MENLI set (WMT20_de),
    written as a CSV of the same columns: 24 rows for the 12 types with 2 each."""
    import csv

    from conftest import SHARED_DATA

    with open(SHARED_DATA / "menli_wmt20_de_adversarial.csv", encoding="utf-8",
              newline="") as handle:
        reader = csv.DictReader(handle)
        counts: dict[str, int] = {}
        rows = []
        for row in reader:
            if counts.get(row["error"], 0) < per_type:
                counts[row["error"]] = counts.get(row["error"], 0) + 1
                rows.append(row)
        fields = reader.fieldnames
    with open(path, "w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=fields)
        writer.writeheader()
        writer.writerows(rows)
    return path


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _wait_until_serving(url: str, process: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"the Space exited with {process.returncode}:\n{log.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(url, timeout=5) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.5)
    pytest.fail(f"the Space did not answer on {url} in {START_TIMEOUT} s:\n"
                f"{log.read_text()[-3000:]}")


@contextmanager
def served_space(args: Sequence[str], cwd: Path, log: Path,
                 env: Mapping[str, str] | None = None) -> Iterator[str]:
    """``blindspot space ARGS`` on a free loopback port until the block ends; yields its URL."""
    port = _free_port()
    environ = dict(os.environ, GRADIO_ANALYTICS_ENABLED="False", HF_HUB_DISABLE_TELEMETRY="1",
                   **(env or {}))
    with log.open("w") as handle:
        process = subprocess.Popen(
            [sys.executable, "-m", "blindspot.cli", "space", "--host", "127.0.0.1", "--port",
             str(port), *args],
            stdout=handle, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=environ,
            cwd=cwd)
    url = f"http://127.0.0.1:{port}/"
    try:
        _wait_until_serving(url, process, log)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
