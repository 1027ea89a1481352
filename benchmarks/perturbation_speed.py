"""Benchmark: the whole fluency + consistency suite vs. one spaCy pass over the same texts.

The lower bound any implementation pays is one ``en_core_web_sm`` pass over the golds; the
target is that the full suite (every test at the task's paper levels, 5 seeds, its own parse
included, cold cache) costs at most 3x that pass on the 1000 WikiText golds. Each measurement
runs in its own process so that peak memory (max RSS) is its own.

    python benchmarks/perturbation_speed.py [--data ../shared/data] [--num-proc N] [--rows N]
                                            [--tests fluency,consistency]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from itertools import islice
from pathlib import Path

TARGET_RATIO = 3.0
CORPORA = {
    "wikitext (open_ended)": ("wikitext103_open_ended.jsonl", "open_ended"),
    "cnn/dm (summarization)": ("cnndm_summeval100_summarization.jsonl", "summarization"),
}


def _golds(path: Path, rows: int | None = None) -> list[dict]:
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in islice(fh, rows)]


def _measure_spacy(path: Path, rows: int | None) -> dict:
    from blindspot.models import load_spacy

    texts = [r["gold"] for r in _golds(path, rows)]
    nlp = load_spacy("en_core_web_sm")
    list(nlp.pipe(texts[:5]))  # warm-up: model load is not part of the pass
    start = time.perf_counter()
    for _ in nlp.pipe(texts, batch_size=64):
        pass
    return {"seconds": time.perf_counter() - start, "texts": len(texts)}


def _measure_suite(path: Path, task: str, num_proc: int | None, rows_read: int | None,
                   tests: str) -> dict:
    import datasets

    from blindspot.models import load_spacy
    from blindspot.perturbations.dataset import run_suite

    rows = _golds(path, rows_read)
    keep = ["id", "gold"] + (["source"] if "source" in rows[0] else [])
    ds = datasets.Dataset.from_list([{k: r[k] for k in keep} for r in rows])
    load_spacy("en_core_web_sm")  # model load excluded, as for the baseline
    start = time.perf_counter()
    out, plan = run_suite(ds, tests, task, seeds=[1, 2, 3, 4, 5],
                          source_column=None, num_proc=num_proc, progress=False)
    seconds = time.perf_counter() - start
    return {"seconds": seconds, "cells": len(plan.items), "rows_out": out.num_rows,
            "skipped": plan.skipped}


def _child(kind: str, path: str, task: str, num_proc: int | None, rows: int | None,
           tests: str) -> None:
    result = _measure_spacy(Path(path), rows) if kind == "spacy" else _measure_suite(
        Path(path), task, num_proc, rows, tests)
    result["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps(result))


def _run_child(kind: str, path: Path, task: str, num_proc: int | None, rows: int | None,
               tests: str) -> dict:
    env = dict(os.environ, BLINDSPOT_CACHE=tempfile.mkdtemp(prefix="bench-cache-"),
               HF_HUB_OFFLINE="1", TOKENIZERS_PARALLELISM="false")
    cmd = [sys.executable, __file__, "--child", kind, "--path", str(path), "--task", task,
           "--tests", tests]
    if num_proc:
        cmd += ["--num-proc", str(num_proc)]
    if rows:
        cmd += ["--rows", str(rows)]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default_data = Path(__file__).resolve().parents[2] / "shared" / "data"
    parser.add_argument("--data", type=Path, default=default_data)
    parser.add_argument("--num-proc", type=int, default=None)
    parser.add_argument("--child", choices=["spacy", "suite"])
    parser.add_argument("--path")
    parser.add_argument("--task")
    parser.add_argument("--rows", type=int, default=None, help="the first N golds of each corpus")
    parser.add_argument("--tests", default="fluency,consistency", help="the suite (the target's)")
    args = parser.parse_args()
    if args.child:
        _child(args.child, args.path, args.task, args.num_proc, args.rows, args.tests)
        return 0
    verdicts = []
    for label, (file, task) in CORPORA.items():
        path = args.data / file
        if not path.exists():
            print(f"{label}: {path} not found, skipped")
            continue
        base = _run_child("spacy", path, task, None, args.rows, args.tests)
        suite = _run_child("suite", path, task, args.num_proc, args.rows, args.tests)
        ratio = suite["seconds"] / base["seconds"]
        print(f"\n== {label}: {base['texts']} golds, num_proc={args.num_proc or 1}")
        print(f"  one spaCy pass (baseline) : {base['seconds']:8.2f} s   peak RSS "
              f"{base['peak_rss_mb']:7.0f} MB")
        print(f"  full suite ({suite['cells']:3d} cells)    : {suite['seconds']:8.2f} s   peak RSS "
              f"{suite['peak_rss_mb']:7.0f} MB   ({suite['rows_out']} rows out)")
        print(f"  ratio suite / spaCy pass  : {ratio:8.2f} x   (target <= {TARGET_RATIO:g}x"
              f"{' on WikiText' if task != 'open_ended' else ''})")
        for name, why in suite["skipped"].items():
            print(f"  skipped {name}: {why}")
        if task == "open_ended":
            verdicts.append(ratio <= TARGET_RATIO)
    if verdicts:
        print("\nTARGET " + ("MET" if all(verdicts) else "MISSED"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
