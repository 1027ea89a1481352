"""Benchmarks measure in child processes (their own peak RSS, no warm state): run one."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Sequence


def run_child(script: str, args: Sequence[str], **env: str) -> dict:
    """``python script args`` with ``env`` added; its last stdout line, parsed as JSON."""
    done = subprocess.run([sys.executable, script, *args], capture_output=True, text=True,
                          env=dict(os.environ, HF_HUB_OFFLINE="1", TOKENIZERS_PARALLELISM="false",
                                   **env))
    if done.returncode:
        raise SystemExit(done.stderr[-3000:])
    return json.loads(done.stdout.strip().splitlines()[-1])
