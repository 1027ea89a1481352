"""Benchmark: BERTScore on the meta-evaluator's workload, many perturbed variants of the same
documents against the same references, before and after the embedding cache.

Data: the first ``--docs`` CNN/DM documents (SummEval's 100) with their 10 references each: the
gold summaries, then every (test, level, seed) cell of a few perturbation tests
(``blindspot.perturbations.run_suite``: token drop, stopword removal, sentence switching and
truncation at one or two levels each, seeds 1 and 2: 11 cells in all). Each cell is scored as
the runner scores it: one scorer for the whole run, one :func:`score_rows` call per cell (no
score cache), every row against its document's 10 references (averaged). The meta-evaluator's
full CNN/DM run is the same workload with 100 documents and ~250 cells, so its cost is close to
cells x the "later cells" time.

Two implementations, in the same process, on the same loaded MiniLM encoder (layer 6):

* ``previous``: the scorer before the cache, which called ``bert_score.utils.bert_cos_score_idf``
  per ``score_batch``, so bert_score encoded every reference of every cell again;
* ``cached``: :class:`blindspot.scorers.bertscore.BertScore` now, which encodes each distinct
  text once (its references in the first cell, then only each cell's new hypotheses) and matches
  with bert_score's ``greedy_cos_idf``.

Printed: wall and CPU seconds of each, the ratio, how many texts each ran through the encoder
(counted by a forward hook), and the largest difference between their scores (must be < 1e-6).
With ``--repeats``, rounds alternate the order (previous, cached, cached, previous, ...). Model
loading and a first warm-up call are not timed. About a minute on 2 CPU cores (``--repeats 2``:
two).

    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/bertscore_multiref_speed.py [--docs 20]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import time
from collections.abc import Sequence
from itertools import islice
from pathlib import Path
from statistics import median
from typing import Any

DATA = (Path(__file__).resolve().parents[2] / "shared" / "data"
        / "cnndm_summeval100_summarization.jsonl")
#: two levels of each test (of the paper's), so the previous implementation stays within the time
#: budget; deterministic tests (truncation) run once, the others with both seeds
LEVELS = {"token_drop": (0.1, 0.3), "stopword_removal": (0.3,), "sentence_switching": (1,),
          "truncation": (0.2, 0.4)}
SEEDS = (1, 2)
LAYER = 6
BATCH_SIZE = 64
TOLERANCE = 1e-6


def previous_scorer_class() -> type:
    """The scorer as it was before the embedding cache: bert_cos_score_idf per batch."""
    from blindspot.scorers.bertscore import BertScore

    class PreviousBertScore(BertScore):
        def pair_scores(self, hypotheses: Sequence[str], references: Sequence[str]) -> Any:
            import torch
            from bert_score.utils import bert_cos_score_idf

            model = self.model()
            preds = bert_cos_score_idf(model, list(references), list(hypotheses),
                                       self.tokenizer(), self.idf_dict(),
                                       batch_size=self.batch_size, device=self.device).cpu()
            if self._baseline is not None:
                baseline = torch.tensor(self._baseline, dtype=torch.float32)
                preds = (preds - baseline) / (1 - baseline)
            return preds

    return PreviousBertScore


def cells(data: Path, docs: int, levels: dict[str, Sequence[Any]], seeds: Sequence[int]
          ) -> tuple[list[list[str]], list[list[str]]]:
    """(hypotheses of each cell, the references of each document): the golds first, then every
    (test, level, seed) cell of the suite, in plan order."""
    import datasets

    from blindspot.perturbations.dataset import run_suite

    with open(data, encoding="utf-8") as fh:
        rows = [json.loads(line) for line in islice(fh, docs)]
    ds = datasets.Dataset.from_list([{"id": r["id"], "gold": r["gold"]} for r in rows])
    suite, _ = run_suite(ds, list(levels), "summarization", list(seeds), levels=levels,
                         progress=False)
    table = suite.select_columns(["perturbed", "perturbation", "level", "seed"]).to_list()
    grouped: dict[tuple, list[str]] = {}
    for row in table:
        grouped.setdefault((row["perturbation"], str(row["level"]), row["seed"]),
                           []).append(row["perturbed"])
    return [[r["gold"] for r in rows], *grouped.values()], [r["references"] for r in rows]


def _cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def measure(scorer: Any, hypotheses: list[list[str]], references: list[list[str]]) -> dict:
    """Score every cell as the runner does; seconds, encoder texts and the scores."""
    from blindspot.scoring.engine import score_rows

    encoded = [0]
    hook = scorer.model().register_forward_hook(
        lambda module, args, output: encoded.__setitem__(0, encoded[0] + int(args[0].shape[0])))
    try:
        wall, cpu = time.perf_counter(), _cpu_seconds()
        scores, ends = [], []
        for cell in hypotheses:
            scores.append(score_rows(scorer, cell, references, cache=None))
            ends.append(time.perf_counter())
        took = {"seconds": ends[-1] - wall, "cpu_seconds": _cpu_seconds() - cpu,
                "first_cell": ends[0] - wall,
                "later_cell": (ends[-1] - ends[0]) / max(1, len(ends) - 1)}
    finally:
        hook.remove()
    return {**took, "encoded": encoded[0], "scores": scores}


def largest_difference(a: list[dict], b: list[dict]) -> float:
    return max(abs(x - y) for ca, cb in zip(a, b, strict=True) for key in ca
               for x, y in zip(ca[key], cb[key], strict=True))


def run(data: Path, docs: int, levels: dict[str, Sequence[Any]], seeds: Sequence[int],
        repeats: int, idf: bool) -> None:
    from blindspot.scorers.bertscore import BertScore
    from blindspot.scoring.scorer import get_scorer

    hypotheses, references = cells(data, docs, levels, seeds)
    rows = sum(len(c) for c in hypotheses)
    refs = sum(len(r) for r in references)
    corpus = [r for rs in references for r in rs]
    options = dict(model_type="minilm", num_layers=LAYER, batch_size=BATCH_SIZE, idf=idf,
                   idf_references=corpus if idf else None)
    # load the model and run it once, untimed (torch's first forward pays for its set-up)
    get_scorer("bertscore", **options).pair_scores(hypotheses[0][:2], references[0][:2])
    kinds = {"previous": previous_scorer_class(), "cached": BertScore}
    print(f"BERTScore, MiniLM layer {LAYER}, model batch {BATCH_SIZE}, idf {idf}: {docs} CNN/DM "
          f"documents with {refs} references x {len(hypotheses)} cells (golds + "
          f"{', '.join(f'{t} {list(v)}' for t, v in levels.items())}; seeds "
          f"{', '.join(map(str, seeds))}) = {rows} rows, {rows * refs // docs} pairs; "
          f"{os.cpu_count()} CPUs, {_threads()} torch threads")
    results: dict[str, list[dict]] = {"previous": [], "cached": []}
    for round_ in range(repeats):
        order = ("previous", "cached") if round_ % 2 == 0 else ("cached", "previous")
        for kind in order:  # a fresh scorer each time: the cached one starts empty
            result = measure(kinds[kind](**options), hypotheses, references)
            results[kind].append(result)
            print(f"{kind:<9} #{round_ + 1}  {result['seconds']:8.2f} s wall "
                  f"{result['cpu_seconds']:8.2f} s CPU  {result['encoded']:6d} texts encoded  "
                  f"first cell {result['first_cell']:6.2f} s, later cells "
                  f"{result['later_cell']:6.2f} s each", flush=True)
    before = median(r["seconds"] for r in results["previous"])
    after = median(r["seconds"] for r in results["cached"])
    cpu = (median(r["cpu_seconds"] for r in results["previous"])
           / median(r["cpu_seconds"] for r in results["cached"]))
    diff = max(largest_difference(p["scores"], c["scores"])
               for p in results["previous"] for c in results["cached"])
    print(f"median previous {before:.2f} s, median cached {after:.2f} s: speed-up "
          f"{before / after:.2f}x wall, {cpu:.2f}x CPU")
    later = (median(r["later_cell"] for r in results["previous"])
             / median(r["later_cell"] for r in results["cached"]))
    print(f"per cell after the first (each further (test, level, seed) cell of a run): "
          f"{later:.2f}x faster")
    print(f"texts encoded: previous {results['previous'][0]['encoded']}, cached "
          f"{results['cached'][0]['encoded']}")
    print(f"largest score difference cached vs previous: {diff:.2e} (must be < {TOLERANCE:g}): "
          f"{'ok' if diff < TOLERANCE else 'DIFFERENT'}")


def _threads() -> int:
    import torch

    return torch.get_num_threads()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--docs", type=int, default=20)
    parser.add_argument("--levels", type=json.loads, default=LEVELS,
                        help='JSON {test: [levels]}, default %(default)s')
    parser.add_argument("--seeds", type=int, nargs="+", default=list(SEEDS))
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--idf", action="store_true", help="weight by idf of the references")
    args = parser.parse_args()
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    run(args.data, args.docs, args.levels, args.seeds, args.repeats, args.idf)


if __name__ == "__main__":
    main()
