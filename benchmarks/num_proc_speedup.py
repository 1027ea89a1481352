"""Benchmark: perturbation generation of the WikiText suite with 1 vs. N worker processes.

The target is a near-linear speed-up up to the core count: with ``--num-proc N`` the suite
(fluency + consistency at the paper levels, 5 seeds) takes at most 1/(0.85 N) of the one-process
time, i.e. a speed-up of at least 1.7x with 2 processes. Two settings: with the parse cache
filled first, in its own process, so both timed runs do the same work (reading parses, loading
what the tests use, perturbing every cell; on Linux the workers are forked and inherit the
parent's imports and parses, elsewhere they are spawned and receive them); and a first run on
empty caches, where the texts are parsed too (spaCy in ``--num-proc`` processes). Each run is its
own process; each setting runs ``--repeat`` times, alternating, and the fastest run counts (other
work on a shared machine only ever slows a run down). The machine's core count and load average
are printed with the figures, and so is the speed-up the runs' CPU seconds allow on idle cores.

    python benchmarks/num_proc_speedup.py [--num-proc 2] [--rows 1000] [--seeds 1,2,3,4,5] [--repeat 2]
                                          [--tests fluency,consistency]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import tempfile
import time
from itertools import islice
from pathlib import Path

from _child import run_child

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "wikitext103_open_ended.jsonl"
EFFICIENCY_TARGET = 0.85  # speed-up / processes


def _dataset(rows: int):
    import datasets

    with open(DATA, encoding="utf-8") as fh:
        golds = [json.loads(line) for line in islice(fh, rows)]
    return datasets.Dataset.from_list([{"id": g["id"], "gold": g["gold"]} for g in golds]), golds


def _resources(golds: list[dict]) -> dict:
    from blindspot.models import available_models
    from blindspot.runner.scorers import reference_corpus

    return {"lm": "smollm2" if "smollm2" in available_models() else None,
            "ngram_corpus": reference_corpus([g["reference"] for g in golds])}


def _child(rows: int, seeds: list[int], num_proc: int, parse_only: bool, tests: str) -> None:
    from blindspot.perturbations.dataset import preparse, run_suite

    ds, golds = _dataset(rows)
    if parse_only:
        preparse(g["gold"] for g in golds)
        print(json.dumps({"parsed": rows}))
        return
    resources = _resources(golds)
    start, cpu = time.perf_counter(), _cpu_seconds()
    out, plan = run_suite(ds, tests, "open_ended", seeds=seeds,
                          resources=resources, num_proc=num_proc, progress=False)
    print(json.dumps({"seconds": time.perf_counter() - start, "cpu": _cpu_seconds() - cpu,
                      "cells": len(plan.items), "rows_out": out.num_rows}))


def _cpu_seconds() -> float:
    """CPU time of this process and of its finished worker processes."""
    return sum(u.ru_utime + u.ru_stime for u in (resource.getrusage(resource.RUSAGE_SELF),
                                                resource.getrusage(resource.RUSAGE_CHILDREN)))


def _run(args: argparse.Namespace, cache: str, num_proc: int, parse_only: bool = False) -> dict:
    return run_child(__file__, ["--child", "--rows", str(args.rows), "--seeds", args.seeds,
                                "--num-proc", str(num_proc), "--tests", args.tests]
                     + (["--parse-only"] * parse_only),
                     BLINDSPOT_CACHE=cache)


def _report(name: str, one: dict, many: dict, procs: int, target: float) -> bool:
    """Print one setting's figures; whether its speed-up meets the target."""
    speedup = one["seconds"] / many["seconds"]
    # what the speed-up would be with idle cores: the CPU work divided evenly
    bound = one["cpu"] / many["cpu"] * procs
    print(f"  {name}")
    print(f"    1 process    : {one['seconds']:8.2f} s wall   {one['cpu']:8.2f} s CPU")
    print(f"    {procs} processes  : {many['seconds']:8.2f} s wall   {many['cpu']:8.2f} s CPU")
    print(f"    speed-up     : {speedup:8.2f} x   (target >= {target:.2f}x, near-linear); with "
          f"{procs} idle cores at most {bound:.2f} x (the CPU seconds divided evenly)")
    return speedup >= target


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--num-proc", type=int, default=2)
    parser.add_argument("--rows", type=int, default=1000)
    parser.add_argument("--seeds", default="1,2,3,4,5")
    parser.add_argument("--repeat", type=int, default=2, help="runs per setting; the fastest counts")
    parser.add_argument("--child", action="store_true")
    parser.add_argument("--parse-only", action="store_true")
    parser.add_argument("--tests", default="fluency,consistency", help="the suite (the target's)")
    args = parser.parse_args()
    seeds = [int(s) for s in args.seeds.split(",")]
    if args.child:
        _child(args.rows, seeds, args.num_proc, args.parse_only, args.tests)
        return 0
    load = os.getloadavg()[0]
    warm = tempfile.mkdtemp(prefix="bench-numproc-")
    _run(args, warm, 1, parse_only=True)
    settings = {"parse cache filled (perturbation only)": lambda: warm,
                "empty caches (parsing + perturbation)":
                    lambda: tempfile.mkdtemp(prefix="bench-numproc-cold-")}
    figures = {}
    for name, cache in settings.items():
        runs: dict[int, list[dict]] = {1: [], args.num_proc: []}
        for _ in range(args.repeat):
            for procs in runs:
                runs[procs].append(_run(args, cache(), procs))
        figures[name] = {p: min(r, key=lambda x: x["seconds"]) for p, r in runs.items()}
    cells = figures[next(iter(figures))][1]["cells"]
    print(f"WikiText suite {args.tests}, {args.rows} golds, {cells} cells, seeds {seeds}; "
          f"{os.cpu_count()} cores on this machine, load average {load:.2f} -> "
          f"{os.getloadavg()[0]:.2f} (1 min); fastest of {args.repeat} runs each")
    target = EFFICIENCY_TARGET * args.num_proc
    met = True
    for name, runs in figures.items():
        met &= _report(name, runs[1], runs[args.num_proc], args.num_proc, target)
    print("TARGET " + ("MET" if met else "MISSED") + f" (speed-up >= {target:.2f}x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
