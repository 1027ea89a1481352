"""Local engine vs Ray engine on CNN/DM rows with ROUGE-L and BERTScore (MiniLM): are the two
``results.json`` byte-identical? Prints both run times and the verdict.

    ./.venv/bin/python benchmarks/ray_vs_local.py --rows 16 [--address auto]

Each engine gets its own fresh cache folder, so each computes everything itself.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from itertools import islice
from pathlib import Path

DATA = (Path(__file__).resolve().parents[2] / "shared" / "data"
        / "cnndm_summeval100_summarization.jsonl")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=16)
    parser.add_argument("--metrics", default="rouge,bertscore@minilm")
    parser.add_argument("--tests", default="truncation,sentence_switching,negation")
    parser.add_argument("--seeds", default="1,2")
    parser.add_argument("--address", default=None, help="a Ray cluster (default: start one)")
    args = parser.parse_args()
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    from blindspot.protocols.rank import run_blindspot

    work = Path(tempfile.mkdtemp(prefix="blindspot-ray-vs-local-"))
    gold = work / "gold.jsonl"
    with open(DATA, encoding="utf-8") as src, open(gold, "w", encoding="utf-8") as dst:
        for line in islice(src, args.rows):
            row = json.loads(line)
            dst.write(json.dumps({k: row[k] for k in ("id", "gold", "references")}) + "\n")
    seeds = [int(s) for s in args.seeds.split(",")]
    outputs, times = {}, {}
    for engine in ("local", "ray"):
        os.environ["BLINDSPOT_CACHE"] = str(work / f"cache-{engine}")
        extra = {"engine": engine, "address": args.address} if engine == "ray" else {}
        start = time.perf_counter()
        run_blindspot(str(gold), args.metrics, task="summarization", tests=args.tests,
                      seeds=seeds, out=work / engine, progress=False, **extra)
        times[engine] = time.perf_counter() - start
        outputs[engine] = (work / engine / "results.json").read_bytes()
    same = outputs["local"] == outputs["ray"]
    print(f"rows={args.rows} metrics={args.metrics} tests={args.tests} seeds={seeds}")
    for engine in ("local", "ray"):
        print(f"  {engine:5s} engine: {times[engine]:7.1f} s  results.json "
              f"{len(outputs[engine])} bytes")
    print(f"results.json identical: {same}  (folder: {work})")
    raise SystemExit(0 if same else 1)


if __name__ == "__main__":
    main()
