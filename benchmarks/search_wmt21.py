"""The issue-8 check figures: adversarial search on WMT21 de-en golds against BERTScore (MiniLM)
and against chrF (blind-spots paper, Appendix J and its Figure 10).

For each targeted metric: a greedy search on the first ``--rows`` golds to noise ratio
``--noise-ratio`` (embedding-neighbour candidates from MiniLM's input embeddings; no masked LM
with its head exists offline unless ``--mlm`` names one), then

* the mean relative change of the target and of every panel metric on the perturbed texts, both
  against the gold (the search's objective) and against the WMT references (what the rank
  protocol sees); the search worked when the target drops far less than the panel;
* the top edit patterns;
* whether the top patterns generalise: they become a rule-based perturbation, run through the
  rank protocol on the *whole* dataset (``--seeds``), target and panel.

    HF_HUB_OFFLINE=1 OMP_NUM_THREADS=2 .venv/bin/python benchmarks/search_wmt21.py \
        [--data ../shared/data/wmt21_de_en_translation.jsonl] [--rows 30] [--noise-ratio 0.1] \
        [--metrics bertscore.f1@minilm,chrf] [--seeds 1,2,3] [--mlm X] [--out out/search-wmt21]

Each metric's report folder (results.json, report.md, search.png, generalisation/) is written
under ``--out``. Timings are printed for information only.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import blindspot.report.search_report  # noqa: F401
import blindspot.runner.pipeline  # noqa: F401  (everything imported up front: a long run is
import blindspot.search.generalise  # noqa: F401  not broken by edits to the sources meanwhile)
from blindspot.search import run_search

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / \
    "wmt21_de_en_translation.jsonl"


def _pct(value: float | None) -> str:
    return "    n/a" if value is None else f"{value:+7.2f}%"


def print_figures(results: dict, seconds: float) -> None:
    summary, found = results["summary"], results["generalisation"]
    print(f"\n=== target {results['config']['metric']['name']}: {summary['reached']}/"
          f"{summary['examples']} golds reached noise ratio {results['config']['noise_ratio']:g} "
          f"(mean {summary['mean_noise_ratio']:.3f}, {summary['mean_edits']:.2f} edits), "
          f"{results['budget']['calls_used']} metric calls, {seconds:.0f} s")
    print(f"{'metric':28} {'role':7} {'vs gold':>9} {'vs refs':>9}")
    for name, entry in summary["metrics"].items():
        print(f"{name:28} {entry['role']:7} {_pct(entry.get('gold'))} "
              f"{_pct(entry.get('references'))}")
    print("top patterns:")
    for p in results["patterns"][:6]:
        pairs = ", ".join(f"{x['edit']} x{x['count']}" for x in p["pairs"][:3])
        print(f"  {p['rank']}. {p['pattern']:22} {p['count']:3} edits in {p['examples']:2} golds, "
              f"mean step change {_pct(p['mean_score_change'])}  ({pairs})")
    if found:
        print(f"generalisation: rules {found['test']} ({', '.join(found['rules']['patterns'])}) "
              f"on all {found['rows']} rows, seeds {found['seeds']}; "
              f"generalises = {found['generalises']}")
        for name, view in found["metrics"].items():
            share = view.get("fraction_noised_ge_gold")
            print(f"  {name:28} {view['status']:9} rel. change {_pct(view.get('relative_change'))}"
                  f"  noise ratio {view.get('noise_ratio') or 0:.3f}  noised>=gold "
                  f"{'n/a' if share is None else f'{share:.0%}'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default=str(DEFAULT_DATA))
    parser.add_argument("--rows", type=int, default=30)
    parser.add_argument("--noise-ratio", type=float, default=0.1)
    parser.add_argument("--metrics", default="bertscore.f1@minilm,chrf")
    parser.add_argument("--seeds", default="1,2,3")
    parser.add_argument("--mlm", default=None)
    parser.add_argument("--max-calls", type=int, default=None)
    parser.add_argument("--out", default="out/search-wmt21")
    args = parser.parse_args()
    seeds = [int(s) for s in args.seeds.split(",")]
    for metric in args.metrics.split(","):
        started = time.perf_counter()
        results = run_search(args.data, metric, noise_ratio=args.noise_ratio, limit=args.rows,
                             mlm=args.mlm, task="translation", generalise=True,
                             generalise_seeds=seeds, max_calls=args.max_calls,
                             out=Path(args.out) / metric.replace("@", "-"))
        print_figures(results, time.perf_counter() - started)


if __name__ == "__main__":
    main()
