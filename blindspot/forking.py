"""Worker processes that start at no cost: forked where the platform allows it.

A forked worker inherits what the parent already has -- imported modules (torch, spaCy,
CheckList's pattern tables), the suite's tests and the parsed texts -- copy-on-write, instead of
importing and unpickling it all again; spawned workers paid 12-17 s of CPU each for that on the
WikiText suite, which capped ``--num-proc 2`` at about 1.4x. The one thing a fork breaks is
torch's OpenMP thread pool, whose threads do not survive it (a child that enters a parallel
region can wait for them forever): a forked child runs torch on one thread, as PyTorch's own
DataLoader workers do, and one thread per worker process is what a process pool wants anyway.
Platforms where ``fork`` is not the safe default (macOS, Windows) spawn.

    >>> worker_context().get_start_method() in ("fork", "spawn")
    True
"""

from __future__ import annotations

import multiprocessing
import os
import sys
from multiprocessing.context import BaseContext
from typing import Any

#: processes that started (or imported this module) on their own: their torch pool is sound
_FRESH_PIDS = {os.getpid()}


def worker_context() -> BaseContext:
    """``fork`` on Linux, else ``spawn``: the context worker pools are made with."""
    return multiprocessing.get_context("fork" if sys.platform.startswith("linux") else "spawn")


def check_num_proc(num_proc: Any) -> int | None:
    """``num_proc`` as a number of worker processes (None: this process only), or a clear
    error for zero, a negative number or anything but a whole number."""
    if num_proc is None:
        return None
    if isinstance(num_proc, bool) or not isinstance(num_proc, int) or num_proc < 1:
        raise ValueError(f"--num-proc (num_proc) must be a whole number of worker processes, "
                         f"at least 1, or left out to work in this process; got {num_proc!r}")
    return num_proc


def single_thread_after_fork(load_torch: bool = True) -> None:
    """In a forked child, set torch to one thread before it runs anything (see the module doc).

    With ``load_torch=False`` a child that has not imported torch is left alone (a pool
    initializer must not pay torch's import for tests that never use it). Idempotent.
    """
    pid = os.getpid()
    if pid in _FRESH_PIDS or (not load_torch and "torch" not in sys.modules):
        return
    import torch

    torch.set_num_threads(1)
    _FRESH_PIDS.add(pid)


__all__ = ["check_num_proc", "single_thread_after_fork", "worker_context"]
