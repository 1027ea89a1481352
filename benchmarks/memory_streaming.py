"""Benchmark: peak memory of a streamed run at 10k vs. 100k rows (target: within 1.3x).

The rows are WikiText-derived (the 1000 WikiText golds and references, cycled; each gold gets
its row number appended so every row is a distinct text to perturb and score). Each size runs
the main job streamed, ``run_blindspot(..., chunk_size=N, out=...)`` (what ``blindspot run
--chunk-size N`` runs: results.json with per-sample statistics and worst examples, and the
report), in its own process (truncation at one level, chrF by default, a fresh score cache) and
reports that process's peak RSS, and also its RSS once the libraries are imported, so the growth
due to the rows themselves is visible; the disk the run state (``<out>/.state``: scores, the
perturbed suites it keeps) holds once the run is done; and the load average at the start and
end of each run (the machine may be shared: a figure means little without it).

``--levels 0.1,0.2,...`` runs more cells per chunk (truncation is deterministic: one cell per
level), to see how memory grows with the cells of a chunk.

    python benchmarks/memory_streaming.py [--sizes 10000,100000] [--chunk-size 2000] [--levels 0.3]

Measured on 2 shared cores (2026-11-26, load averages 5-17): 10k / 100k rows, one cell, peak
RSS 311 / 312 MB (1.005x), run state 0.6 / 7.0 MB. With every chunk's suite held in memory and
kept on disk (the one-pipeline merge, 3eb1b1f) it was 307 / 315 MB and 8 / 80 MB: one cell hides
it. One chunk of 2000 / 4000 rows with 24 cells (``--levels 0.02,...,0.48``, rep_ngram, load
~1): 457 / 662 MB then (about 4.3 KB per row and cell: some 2.4 GB for the default open-ended
suite's 285 cells at --chunk-size 2000), 292 / 310 MB now, 273 / 287 MB before one-pipeline.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

from _child import run_child

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "wikitext103_open_ended.jsonl"
TARGET = 1.3


def _rss_mb() -> float:
    with open("/proc/self/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def _folder_mb(folder: Path) -> float:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) / 2**20


def _load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def write_rows(path: Path, count: int) -> None:
    """``count`` WikiText-derived rows, written line by line (never held in memory)."""
    with open(DATA, encoding="utf-8") as fh:
        base = [json.loads(line) for line in fh]
    with open(path, "w", encoding="utf-8") as out:
        for i in range(count):
            row = base[i % len(base)]
            out.write(json.dumps({"id": f"row-{i}", "gold": f"{row['gold']} ({i})",
                                  "references": row["reference"]}) + "\n")


def _child(path: str, out: str, metric: str, levels: list[float], chunk_size: int) -> None:
    # every library the run imports, before the baseline RSS is read (the perturbation
    # catalogue alone is over 300 MB: torch, transformers, the word lists)
    import blindspot.perturbations  # noqa: F401
    import blindspot.report.writer  # noqa: F401
    import blindspot.runner.stream  # noqa: F401
    import blindspot.scorers  # noqa: F401
    from blindspot.protocols.rank import run_blindspot

    imported = _rss_mb()
    load_before = _load()
    start = time.perf_counter()
    results = run_blindspot(path, metric, out=out, task="open_ended", tests="truncation",
                            seeds=[1], levels={"truncation": levels}, chunk_size=chunk_size,
                            progress=False)
    (dataset,) = results["datasets"].values()
    print(json.dumps({"seconds": time.perf_counter() - start, "rows": dataset["rows"],
                      "rss_after_imports_mb": imported,
                      "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                      "state_mb": _folder_mb(Path(out) / ".state"),
                      "load": f"{load_before} -> {_load()}"}))


def _measure(size: int, args: argparse.Namespace) -> dict:
    work = Path(tempfile.mkdtemp(prefix=f"bench-stream-{size}-"))
    try:
        write_rows(work / "rows.jsonl", size)
        return run_child(__file__, ["--child", str(work / "rows.jsonl"), "--out",
                                    str(work / "out"), "--metric", args.metric, "--levels",
                                    args.levels, "--chunk-size", str(args.chunk_size)],
                         BLINDSPOT_CACHE=str(work / "cache"))
    finally:  # the rows file and the run state of 100k rows are hundreds of MB
        shutil.rmtree(work, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--chunk-size", type=int, default=2000)
    parser.add_argument("--metric", default="chrf")
    parser.add_argument("--levels", default="0.3", help="truncation levels, comma-separated")
    parser.add_argument("--child")
    parser.add_argument("--out")
    args = parser.parse_args()
    if args.child:
        _child(args.child, args.out, args.metric,
               [float(x) for x in args.levels.split(",")], args.chunk_size)
        return 0
    small, large = (int(s) for s in args.sizes.split(","))
    figures = {size: _measure(size, args) for size in (small, large)}
    print(f"blindspot run --chunk-size {args.chunk_size}: truncation @ {args.levels}, "
          f"{args.metric}, results.json + report")
    for size, fig in figures.items():
        print(f"  {size:>7} rows: {fig['seconds']:7.1f} s   peak RSS {fig['peak_rss_mb']:7.0f} MB"
              f"   (after imports {fig['rss_after_imports_mb']:.0f} MB, rows add "
              f"{fig['peak_rss_mb'] - fig['rss_after_imports_mb']:.0f} MB)   run state "
              f"{fig['state_mb']:.1f} MB   load {fig['load']}")
    ratio = figures[large]["peak_rss_mb"] / figures[small]["peak_rss_mb"]
    print(f"  peak RSS ratio {large}/{small} rows: {ratio:.3f}x   (target <= {TARGET}x)")
    print("TARGET " + ("MET" if ratio <= TARGET else "MISSED"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
