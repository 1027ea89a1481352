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
_MAIN_PID = os.getpid()
#: environment variables by which a user sets torch's thread count themselves
THREAD_SETTINGS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS")


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


def threads_for_load(cores: int, load: float) -> int:
    """torch's intra-op threads for a machine of ``cores`` at 1-minute load average ``load``
    (this process counted as one): the cores the other processes leave free, at least one.

    One OpenMP thread per core on a busy machine makes the threads wait on each other at every
    parallel region: on 2 cores at load 8, a SmolLM2 forward pass ran 2.5-4x faster on one
    thread than on two (``benchmarks/first_five_minutes.py --threads``).

    >>> threads_for_load(2, 0.3), threads_for_load(2, 1.6), threads_for_load(2, 3.0)
    (2, 2, 1)
    """
    others = int(max(0.0, load - 1.0))
    return max(1, min(cores, cores - others))


def fit_threads_to_load() -> int | None:
    """Set torch's threads by :func:`threads_for_load` now, in a process that started on its
    own, has torch loaded (importing it only for this would cost seconds) and whose user set no
    thread count; returns the count set (None: left alone)."""
    torch = sys.modules.get("torch")
    if (torch is None or os.getpid() != _MAIN_PID
            or any(os.environ.get(v) for v in THREAD_SETTINGS)):
        return None

    threads = threads_for_load(os.cpu_count() or 1, os.getloadavg()[0])
    torch.set_num_threads(threads)
    return threads


__all__ = ["check_num_proc", "fit_threads_to_load", "single_thread_after_fork",
           "threads_for_load", "worker_context"]
