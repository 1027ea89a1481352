"""Benchmark: ROUGE on the meta-evaluator's CNN/DM workload, rouge-score against blindspot's scorer.

Data: the first ``--docs`` CNN/DM documents (SummEval's 100) with their 10 references each: the
gold summaries, then a few (test, level) cells of perturbed golds, seed 1 (truncation 0.1 / 0.3 /
0.5, token drop 0.1 / 0.3, local swap 0.15 / 0.6, noised punctuation 1.0: 9 sets of rows in all,
texts made with ``get_perturbation(test).apply``). Every row is scored against its document's 10
references, best reference per ROUGE type (``score_multi``), cell by cell, one scorer for the
whole run (as the runner does; no score cache).

Three implementations, in the same process, each starting cold:

* ``rouge-score``: ``RougeScorer(types, use_stemmer=True).score_multi`` as shipped, which
  re-tokenises and re-stems every text for every pair and fills a pure-Python LCS table;
* ``previous``: blindspot's scorer before the fast LCS: the same ``score_multi`` with the
  memoising tokenizer (tokens per text, stems per word), so only the LCS table is left;
* ``blindspot``: :class:`blindspot.scorers.rouge.Rouge` now (rapidfuzz LCS for rougeL and
  single-line rougeLsum).

Printed per ROUGE-type set (``rougeL`` alone, as the runner judges it, and the scorer's four
default types): seconds of each and the ratios against ours, and whether every precision,
recall and F-measure is identical to rouge-score's (it must be: the script exits 1 otherwise).
Under a minute on one CPU core with the defaults (rouge-score itself is most of it).

    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/rouge_speed.py [--docs 100] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Iterable, Sequence
from itertools import islice
from pathlib import Path
from typing import Any

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / \
    "cnndm_summeval100_summarization.jsonl"
CELLS = (("truncation", 0.1), ("truncation", 0.3), ("truncation", 0.5), ("token_drop", 0.1),
         ("token_drop", 0.3), ("local_swap", 0.15), ("local_swap", 0.6),
         ("noised_punctuation", 1.0))
TYPE_SETS = (("rougeL",), ("rouge1", "rouge2", "rougeL", "rougeLsum"))

Cell = list[tuple[str, list[str]]]


def load_cells(path: Path, docs: int) -> list[tuple[str, Cell]]:
    """(name, [(hypothesis, references)]) per cell: the golds first, then each perturbed set."""
    from blindspot.perturbations import get_perturbation

    with open(path, encoding="utf-8") as fh:
        rows = [json.loads(line) for line in islice(fh, docs)]
    cells: list[tuple[str, Cell]] = [("gold", [(r["gold"], r["references"]) for r in rows])]
    for test, level in CELLS:
        perturbation = get_perturbation(test)
        cells.append((f"{test}@{level}", [
            (perturbation.apply(r["gold"], level, seed=1, row_id=r["id"]).perturbed,
             r["references"]) for r in rows]))
    return cells


def _rouge_score(types: Sequence[str], cells: Sequence[tuple[str, Cell]]) -> list[Any]:
    from rouge_score import rouge_scorer

    scorer = rouge_scorer.RougeScorer(list(types), use_stemmer=True)
    return [scorer.score_multi(refs, hyp) for _, cell in cells for hyp, refs in cell]


def _previous(types: Sequence[str], cells: Sequence[tuple[str, Cell]]) -> list[Any]:
    from rouge_score import rouge_scorer

    from blindspot.scorers.rouge import _MemoTokenizer

    scorer = rouge_scorer.RougeScorer(list(types), use_stemmer=True,
                                      tokenizer=_MemoTokenizer(True))
    return [scorer.score_multi(refs, hyp) for _, cell in cells for hyp, refs in cell]


def _blindspot(types: Sequence[str], cells: Sequence[tuple[str, Cell]]) -> list[Any]:
    from blindspot.scoring.scorer import get_scorer

    scorer = get_scorer("rouge", rouge_types=list(types))
    return [scorer.best_scores(refs, hyp) for _, cell in cells for hyp, refs in cell]


IMPLEMENTATIONS = {"rouge-score": _rouge_score, "previous": _previous, "blindspot": _blindspot}


def _same(types: Sequence[str], got: Sequence[Any], expected: Sequence[Any]) -> bool:
    """Every precision, recall and F-measure equal (==, no tolerance)."""
    return len(got) == len(expected) and all(
        tuple(map(float, g[t])) == tuple(map(float, e[t]))
        for g, e in zip(got, expected, strict=True) for t in types)


def main(argv: Iterable[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--docs", type=int, default=100)
    parser.add_argument("--json", type=Path, default=None, help="write the timings here")
    args = parser.parse_args(list(argv) if argv is not None else None)
    if not args.data.is_file():
        parser.error(f"data file not found: {args.data}")

    start = time.perf_counter()
    cells = load_cells(args.data, args.docs)
    rows = sum(len(cell) for _, cell in cells)
    print(f"{args.docs} CNN/DM documents x 10 references; {len(cells)} cells (gold + "
          f"{len(CELLS)} perturbed), {rows} rows; perturbing took "
          f"{time.perf_counter() - start:.1f} s")

    report: dict[str, Any] = {"docs": args.docs, "cells": [name for name, _ in cells],
                              "rows": rows, "timings": {}}
    ok = True
    for types in TYPE_SETS:
        seconds, scores = {}, {}
        for name, run in IMPLEMENTATIONS.items():
            start = time.perf_counter()
            scores[name] = run(types, cells)
            seconds[name] = time.perf_counter() - start
        identical = {name: _same(types, scores[name], scores["rouge-score"])
                     for name in ("previous", "blindspot")}
        ok &= all(identical.values())
        ours = seconds["blindspot"]
        print(f"\n{'+'.join(types)}:")
        for name, secs in seconds.items():
            ratio = f"{secs / ours:7.1f}x ours" if name != "blindspot" else " " * 12
            same = "" if name == "rouge-score" else \
                f"  identical to rouge-score: {'yes' if identical[name] else 'NO'}"
            print(f"  {name:<12} {secs:8.2f} s {ratio}{same}")
        report["timings"]["+".join(types)] = {"seconds": seconds, "identical": identical}

    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    if not ok:
        print("\nSCORES DIFFER from rouge-score", file=sys.stderr)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
