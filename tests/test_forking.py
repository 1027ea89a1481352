"""Worker processes forked from a parent that already ran torch on several threads."""

from __future__ import annotations

import random
import sys
from concurrent.futures import ProcessPoolExecutor

import pytest
import torch

from blindspot.forking import single_thread_after_fork, worker_context
from blindspot.perturbations.dataset import perturb_local
from blindspot.perturbations.perturbation import REGISTRY, Perturbation, Ratio, Row


def _matmul_in_child() -> tuple[int, float]:
    single_thread_after_fork(load_torch=False)
    a = torch.ones(256, 256)
    return torch.get_num_threads(), float((a @ a).sum())


def test_workers_are_forked_on_linux_and_spawned_elsewhere() -> None:
    expected = "fork" if sys.platform.startswith("linux") else "spawn"
    assert worker_context().get_start_method() == expected


def test_forked_child_runs_torch_on_one_thread_after_the_parent_used_its_pool() -> None:
    threads = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        a = torch.ones(256, 256)
        assert float((a @ a).sum()) == 256.0 ** 3  # the parent's thread pool has run
        with ProcessPoolExecutor(2, mp_context=worker_context()) as pool:
            done = [pool.submit(_matmul_in_child) for _ in range(4)]
            results = [future.result(timeout=120) for future in done]  # a hang fails here
    finally:
        torch.set_num_threads(threads)
    expected = 1 if worker_context().get_start_method() == "fork" else torch.get_num_threads()
    assert results == [(expected, 256.0 ** 3)] * 4
    assert torch.get_num_threads() == threads  # the parent is left as it was



class _Boom(Perturbation):
    """A test that fails on one row, to see a worker's error reach the caller."""

    name = "boom"
    category = "fluency"
    description = "fails on the row 'explode'"
    level_kind = Ratio(0.0, 1.0)
    levels = {"summarization": (0.5,)}
    deterministic = True

    def perturb(self, row: Row, level: float, rng: random.Random) -> str | None:
        if row.text == "explode":
            raise RuntimeError("boom on row 'explode'")
        return row.text.upper()


def test_an_error_in_a_worker_reaches_the_caller() -> None:
    import datasets

    from blindspot.perturbations.dataset import SuiteJob, prepare_suite

    REGISTRY.register("boom", _Boom)
    try:
        ds = datasets.Dataset.from_dict({"id": [1, 2, 3], "gold": ["a b.", "explode", "c d."]})
        job = prepare_suite(ds, "boom,truncation", "summarization", seeds=[1, 2])
        with pytest.raises(RuntimeError, match="boom on row 'explode'"):
            list(perturb_local(SuiteJob(job.plan, job.state), 2))
    finally:
        REGISTRY.unregister("boom")
