"""Faithfulness check: ROUGE-L of the gold and of every fluency / consistency test on CNN/DM.

The blind-spots paper (He et al., ACL 2023, App. I) reports, for summarization on its 100
SummEval CNN/DM documents, ROUGE-L of the gold hypotheses and of each noised set at each level,
with the noise ratio of that set. This script recomputes those figures from our catalogue so they
can be compared with the paper's released ones: truncation is deterministic and must match
exactly, the random tests within seed noise, and the noise ratios likewise.

What is computed (the paper's setting, ``rouge-score`` with stemming):

* per row, ROUGE-L F-measure of the hypothesis against the document's 10 references, best over
  the references (``RougeScorer.score_multi``);
* per (test, level, seed), the mean over documents; per (test, level), the mean and the
  population std over seeds, the mean noise ratio (mean over rows, then over seeds) and the
  relative change against the gold, ``(s - gold) / |gold| * 100``;
* per test, the monotonicity verdict of the rank protocol: the gold point (noise ratio 0) first,
  then the levels with noise ratio below 0.6 sorted by noise ratio; the test fails when any
  ``score[i] <= score[i+1] + 1e-5``.

The paper states that ROUGE-2 and ROUGE-L fail truncation and noised punctuation on
summarization and pass every other test; that expectation is printed beside our verdict.

    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/faithfulness_rouge.py \
        [--data PATH] [--tests fluency,consistency] [--mlm X] [--seeds 1,2,3,4,5] \
        [--json OUT] [--num-proc N]

BERT-diverge needs a masked LM; without ``--mlm`` it is skipped and the notice is printed.

Against the release, test by test: for the tests in :data:`RELEASE_FIGURES`, a second table puts
our noise ratio and ROUGE-L beside those of the blind-spots release's own noise functions
(github.com/cloudygoose/blindspot_nlg, ``sum_mt/sanity_transform.py`` and
``sum_mt/transform_utils.py``) on the same 100 documents and seeds 1-5, and says whether each
difference lies within seed noise: no larger than the wider of the two seed ranges (max - min
over seeds). The release's figures were measured once by running its functions unchanged from a
snapshot, in a scratch folder outside this repository, with spaCy ``en_core_web_sm`` for its
parses (the release used ``en_core_web_trf``) and NLTK's English Punkt tables for its sentence
splits, its random module seeded per seed as its ``batch_sanity_transform`` does, and the noise
ratio of :mod:`blindspot.noise` (its Eq. 1, halved for swaps as the release does).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Iterable, Mapping, Sequence
from itertools import pairwise
from pathlib import Path
from statistics import fmean, pstdev
from typing import Any

from rouge_score import rouge_scorer, tokenizers

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / \
    "cnndm_summeval100_summarization.jsonl"
#: only points below this noise ratio enter the monotonicity check (the paper's plots)
NOISE_CAP = 0.6
#: the reference implementation's tolerance: fail when score[i] <= score[i+1] + TOLERANCE
TOLERANCE = 1e-5
#: tests the paper says ROUGE-L fails on summarization (App. I); every other test passes there
PAPER_ROUGE_L_FAILS = frozenset({"truncation", "noised_punctuation"})

#: The release's own noise functions on the 100 CNN/DM documents, seeds 1-5 (see the module
#: docstring): (test, level) -> per-seed mean noise ratio and per-seed mean ROUGE-L.
RELEASE_FIGURES: dict[tuple[str, str], dict[str, tuple[float, ...]]] = {
    ("local_swap", "0.05"): {"noise": (0.0563, 0.0536, 0.0565, 0.0566, 0.0566),
                             "rouge_l": (0.2805, 0.2797, 0.2805, 0.2790, 0.2797)},
    ("local_swap", "0.15"): {"noise": (0.1201, 0.1170, 0.1167, 0.1186, 0.1142),
                             "rouge_l": (0.2730, 0.2723, 0.2730, 0.2720, 0.2730)},
    ("local_swap", "0.3"): {"noise": (0.1672, 0.1695, 0.1692, 0.1695, 0.1691),
                            "rouge_l": (0.2690, 0.2630, 0.2640, 0.2672, 0.2647)},
    ("local_swap", "0.6"): {"noise": (0.2229, 0.2231, 0.2210, 0.2181, 0.2235),
                            "rouge_l": (0.2560, 0.2581, 0.2558, 0.2558, 0.2582)},
    ("middle_swap", "1"): {"noise": (0.1462, 0.1467, 0.1413, 0.1467, 0.1441),
                           "rouge_l": (0.2746, 0.2801, 0.2753, 0.2759, 0.2773)},
    ("middle_swap", "2"): {"noise": (0.2584, 0.2603, 0.2551, 0.2567, 0.2532),
                           "rouge_l": (0.2685, 0.2649, 0.2673, 0.2679, 0.2661)},
    ("middle_swap", "3"): {"noise": (0.3217, 0.3246, 0.3236, 0.3221, 0.3246),
                           "rouge_l": (0.2585, 0.2599, 0.2569, 0.2607, 0.2587)},
    ("sentence_replacement", "1"): {"noise": (0.3508, 0.3338, 0.3401, 0.3550, 0.3333),
                                    "rouge_l": (0.2493, 0.2468, 0.2487, 0.2509, 0.2440)},
    ("sentence_replacement", "2"): {"noise": (0.6801, 0.6618, 0.6863, 0.6694, 0.6915),
                                    "rouge_l": (0.2006, 0.2015, 0.2008, 0.2024, 0.1905)},
    ("generic_named_entity", "0.5"): {"noise": (0.0959, 0.1050, 0.0920, 0.0983, 0.1102),
                                      "rouge_l": (0.2630, 0.2629, 0.2654, 0.2626, 0.2593)},
    ("generic_named_entity", "1"): {"noise": (0.2057, 0.2059, 0.2057, 0.2062, 0.2059),
                                    "rouge_l": (0.2357, 0.2361, 0.2361, 0.2357, 0.2359)},
}


class _MemoTokenizer(tokenizers.Tokenizer):
    """rouge-score's own tokenizer, remembering each text's tokens.

    ``score_multi`` re-tokenises (and Porter-stems) every reference for every hypothesis and
    the hypothesis once per reference; stemming is most of the cost. Remembering the tokens of
    a text gives exactly the same tokens, so exactly the same scores, several times faster.
    """

    def __init__(self, inner: tokenizers.Tokenizer) -> None:
        self._inner = inner
        self._tokens: dict[str, list[str]] = {}

    def tokenize(self, text: str) -> list[str]:
        tokens = self._tokens.get(text)
        if tokens is None:
            tokens = self._tokens[text] = self._inner.tokenize(text)
        return list(tokens)  # a copy: the caller may not mutate our cached list


def make_scorer() -> rouge_scorer.RougeScorer:
    """``RougeScorer(["rougeL"], use_stemmer=True)`` with its default tokenizer memoised."""
    return rouge_scorer.RougeScorer(
        ["rougeL"], use_stemmer=True,
        tokenizer=_MemoTokenizer(tokenizers.DefaultTokenizer(use_stemmer=True)))


class RougeLMemo:
    """ROUGE-L F-measure of a hypothesis, best over its document's references.

    Each distinct (document id, hypothesis text) is scored once: many perturbed rows equal the
    gold (a test that does not apply, a level that changes nothing), and every test shares them.
    """

    def __init__(self, references_by_id: Mapping[Any, Sequence[str]],
                 scorer: rouge_scorer.RougeScorer | None = None) -> None:
        self.references_by_id = references_by_id
        self.scorer = scorer or make_scorer()
        self._scores: dict[tuple[Any, str], float] = {}

    def __call__(self, doc_id: Any, text: str | None) -> float:
        key = (doc_id, text or "")
        score = self._scores.get(key)
        if score is None:
            references = self.references_by_id.get(doc_id)
            if not references:
                raise KeyError(f"no references for document {doc_id!r}")
            score = self._scores[key] = float(
                self.scorer.score_multi(list(references), key[1])["rougeL"].fmeasure)
        return score

    @property
    def distinct(self) -> int:
        """How many distinct (document, text) pairs were scored."""
        return len(self._scores)


def rouge_l_table(ds_suite: Any, references_by_id: Mapping[Any, Sequence[str]],
                  column: str = "gold", id_column: str = "id",
                  memo: RougeLMemo | None = None) -> list[dict[str, Any]]:
    """ROUGE-L figures of a suite: the gold point first, then one entry per (test, level).

    ``ds_suite`` is what ``run_suite`` returns (a Dataset, or anything with ``select_columns``
    and ``to_dict``); ``references_by_id`` maps a document id to its references. Entries keep the
    order in which the cells appear in the suite (the plan's order: test, then paper level).

    Each entry: ``test, level, seeds, rows, applied`` (fraction of rows changed),
    ``noise_ratio`` / ``noise_ratio_std`` (mean over rows, then mean / population std over
    seeds), ``rouge_l`` / ``rouge_l_std`` (mean over documents, then over seeds),
    ``rouge_l_per_seed``, ``noise_ratio_per_seed`` and ``relative_change_pct`` against the gold.
    """
    memo = memo or RougeLMemo(references_by_id)
    table = ds_suite.select_columns([id_column, column, "perturbed", "applied", "noise_ratio",
                                     "perturbation", "level", "seed"]).to_dict()
    gold_by_id: dict[Any, str] = {}
    cells: dict[tuple[str, str], dict[int, list[int]]] = {}
    for i, (doc_id, test, level, seed) in enumerate(zip(
            table[id_column], table["perturbation"], table["level"], table["seed"], strict=True)):
        gold_by_id.setdefault(doc_id, table[column][i])
        cells.setdefault((test, level), {}).setdefault(int(seed), []).append(i)

    gold = fmean(memo(doc_id, text) for doc_id, text in gold_by_id.items()) if gold_by_id \
        else float("nan")
    out: list[dict[str, Any]] = [{
        "test": "gold", "level": "-", "seeds": [], "rows": len(gold_by_id), "applied": 0.0,
        "noise_ratio": 0.0, "noise_ratio_std": 0.0, "rouge_l": gold, "rouge_l_std": 0.0,
        "rouge_l_per_seed": {}, "noise_ratio_per_seed": {}, "relative_change_pct": 0.0}]
    for (test, level), by_seed in cells.items():
        rouge_seed = {s: fmean(memo(table[id_column][i], table["perturbed"][i]) for i in rows)
                      for s, rows in by_seed.items()}
        noise_seed = {s: fmean(table["noise_ratio"][i] for i in rows)
                      for s, rows in by_seed.items()}
        every = [i for rows in by_seed.values() for i in rows]
        mean = fmean(rouge_seed.values())
        out.append({
            "test": test, "level": level, "seeds": sorted(by_seed),
            "rows": len(next(iter(by_seed.values()))),
            "applied": sum(bool(table["applied"][i]) for i in every) / len(every),
            "noise_ratio": fmean(noise_seed.values()),
            "noise_ratio_std": pstdev(noise_seed.values()),
            "rouge_l": mean, "rouge_l_std": pstdev(rouge_seed.values()),
            "rouge_l_per_seed": rouge_seed, "noise_ratio_per_seed": noise_seed,
            "relative_change_pct": (mean - gold) / abs(gold) * 100 if gold else float("nan"),
        })
    return out


def monotonicity(table: Sequence[Mapping[str, Any]], cap: float = NOISE_CAP,
                 tolerance: float = TOLERANCE) -> dict[str, dict[str, Any]]:
    """Per test, whether ROUGE-L strictly decreases with the noise ratio (the rank protocol).

    The gold point comes first; the test's levels with noise ratio below ``cap`` follow, sorted by
    noise ratio (ties keep the table order). ``passed`` is False as soon as
    ``score[i] <= score[i+1] + tolerance``; ``points`` lists the (level, noise ratio, score)
    checked, and ``violations`` the offending neighbours. A test with no level below the cap has
    ``passed=None``.
    """
    gold = next(row for row in table if row["test"] == "gold")
    by_test: dict[str, list[Mapping[str, Any]]] = {}
    for row in table:
        if row["test"] != "gold":
            by_test.setdefault(row["test"], []).append(row)
    verdicts: dict[str, dict[str, Any]] = {}
    for test, rows in by_test.items():
        below = sorted((r for r in rows if r["noise_ratio"] < cap), key=lambda r: r["noise_ratio"])
        points = [("gold", 0.0, gold["rouge_l"])] + [
            (r["level"], r["noise_ratio"], r["rouge_l"]) for r in below]
        violations = [(a[0], b[0]) for a, b in pairwise(points)
                      if a[2] <= b[2] + tolerance]
        verdicts[test] = {"passed": (not violations) if below else None,
                          "points": points, "violations": violations,
                          "paper": "fail" if test in PAPER_ROUGE_L_FAILS else "pass"}
    return verdicts


def _spread(values: Iterable[float]) -> float:
    """The seed range of a figure: max - min over seeds."""
    values = list(values)
    return max(values) - min(values) if values else 0.0


def release_comparison(table: Sequence[Mapping[str, Any]],
                       release: Mapping[tuple[str, str], Mapping[str, Sequence[float]]]
                       = RELEASE_FIGURES) -> list[dict[str, Any]]:
    """Per (test, level) with release figures: ours, the release's, and whether each of the noise
    ratio and ROUGE-L differs by no more than the wider seed range of the two."""
    out = []
    for row in table:
        figures = release.get((row["test"], row["level"]))
        if figures is None:
            continue
        entry: dict[str, Any] = {"test": row["test"], "level": row["level"]}
        for key, ours_mean, ours_seeds in (
                ("noise", row["noise_ratio"], row["noise_ratio_per_seed"].values()),
                ("rouge_l", row["rouge_l"], row["rouge_l_per_seed"].values())):
            theirs = figures[key]
            tolerance = max(_spread(ours_seeds), _spread(theirs))
            entry[key] = {"ours": ours_mean, "release": fmean(theirs),
                          "diff": ours_mean - fmean(theirs), "seed_range": tolerance,
                          "within_noise": abs(ours_mean - fmean(theirs)) <= tolerance}
        out.append(entry)
    return out


def format_release_comparison(rows: Sequence[Mapping[str, Any]]) -> str:
    """The per-test table against the release: noise ratio and ROUGE-L, ours vs theirs."""
    lines = [f"{'test':<22} {'level':>5}  {'noise ours':>10} {'release':>8} {'diff':>7} "
             f"{'range':>6}  {'ROUGE-L ours':>12} {'release':>8} {'diff':>7} {'range':>6}  "
             f"within seed noise", "-" * 118]
    for row in rows:
        noise, rouge = row["noise"], row["rouge_l"]
        verdict = "yes" if noise["within_noise"] and rouge["within_noise"] else (
            "NO (" + ", ".join(k for k, v in (("noise", noise), ("ROUGE-L", rouge))
                               if not v["within_noise"]) + ")")
        lines.append(f"{row['test']:<22} {row['level']:>5}  {noise['ours']:>10.4f} "
                     f"{noise['release']:>8.4f} {noise['diff']:>+7.4f} {noise['seed_range']:>6.4f}"
                     f"  {rouge['ours']:>12.4f} {rouge['release']:>8.4f} {rouge['diff']:>+7.4f} "
                     f"{rouge['seed_range']:>6.4f}  {verdict}")
    return "\n".join(lines)


def load_rows(path: Path) -> list[dict[str, Any]]:
    """The jsonl rows of the data file (read in place, never copied)."""
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def _verdict_word(passed: bool | None) -> str:
    return "n/a" if passed is None else ("pass" if passed else "FAIL")


def format_report(table: Sequence[Mapping[str, Any]],
                  verdicts: Mapping[str, Mapping[str, Any]]) -> str:
    """The printed table: one line per (test, level), each test closed by its verdict."""
    gold = table[0]
    lines = [f"{'test':<24} {'level':>6} {'noise':>7} {'ROUGE-L mean ± std':>20} {'rel %':>8}"
             f"  verdict (ours / paper)",
             "-" * 96,
             f"{'gold':<24} {'-':>6} {0.0:>7.3f} {gold['rouge_l']:>11.4f} ± {0.0:.4f} "
             f"{0.0:>8.2f}"]
    rows = list(table[1:])
    for index, row in enumerate(rows):
        last = index + 1 == len(rows) or rows[index + 1]["test"] != row["test"]
        verdict = ""
        if last:
            v = verdicts[row["test"]]
            ours = _verdict_word(v["passed"])
            paper = "FAIL" if v["paper"] == "fail" else "pass"
            agree = "agree" if (v["passed"] is not None and
                                (v["passed"] == (v["paper"] == "pass"))) else "DIFFER"
            verdict = f"  {ours} / {paper} ({agree})"
        lines.append(f"{row['test']:<24} {row['level']:>6} {row['noise_ratio']:>7.3f} "
                     f"{row['rouge_l']:>11.4f} ± {row['rouge_l_std']:.4f} "
                     f"{row['relative_change_pct']:>8.2f}{verdict}")
    return "\n".join(lines)


def _parse_seeds(text: str) -> list[int]:
    try:
        seeds = [int(s) for s in text.split(",") if s.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"seeds must be comma-separated integers, got {text!r}") from None
    if not seeds:
        raise argparse.ArgumentTypeError("give at least one seed")
    return seeds


def main(argv: Iterable[str] | None = None) -> int:
    """Run the fluency + consistency suite on the data, score it, print (and save) the figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA,
                        help="jsonl with id, gold and references (default: the shared CNN/DM file)")
    parser.add_argument("--tests", default="fluency,consistency",
                        help="suites and/or test names (default: fluency,consistency)")
    parser.add_argument("--mlm", default=None,
                        help="masked LM for BERT-diverge (folder or Hub id); skipped without it")
    parser.add_argument("--seeds", type=_parse_seeds, default=[1, 2, 3, 4, 5])
    parser.add_argument("--json", type=Path, default=None, help="write every figure here")
    parser.add_argument("--num-proc", type=int, default=None, help="processes for the suite")
    args = parser.parse_args(list(argv) if argv is not None else None)

    import datasets

    from blindspot.perturbations.dataset import run_suite

    if not args.data.is_file():
        parser.error(f"data file not found: {args.data}")
    rows = load_rows(args.data)
    missing = [k for k in ("id", "gold", "references") if k not in rows[0]]
    if missing:
        parser.error(f"{args.data} lacks field(s) {missing}; it needs id, gold and references")
    references_by_id = {r["id"]: r["references"] for r in rows}
    ds = datasets.Dataset.from_list([{"id": r["id"], "gold": r["gold"]} for r in rows])

    start = time.perf_counter()
    suite, plan = run_suite(ds, args.tests, "summarization", seeds=args.seeds,
                            column="gold", id_column="id", resources={"mlm": args.mlm},
                            num_proc=args.num_proc, progress=True)
    perturb_s = time.perf_counter() - start
    for name, why in plan.skipped.items():
        print(f"skipped {name}: {why}")

    start = time.perf_counter()
    memo = RougeLMemo(references_by_id)
    table = rouge_l_table(suite, references_by_id, memo=memo)
    verdicts = monotonicity(table)
    score_s = time.perf_counter() - start

    print(f"data: {args.data} ({len(rows)} docs); seeds {args.seeds}; {len(plan.items)} cells, "
          f"{suite.num_rows} rows, {memo.distinct} distinct texts scored; "
          f"perturb {perturb_s:.1f} s, ROUGE-L {score_s:.1f} s")
    print(f"ROUGE-L = rouge-score F, stemming, best of {len(rows[0]['references'])} references, "
          f"mean over docs then seeds (± population std over seeds); noise = mean noise ratio; "
          f"monotonic check on points with noise < {NOISE_CAP}, tolerance {TOLERANCE:g}")
    print(format_report(table, verdicts))
    ours_fail = sorted(t for t, v in verdicts.items() if v["passed"] is False)
    differ = sorted(t for t, v in verdicts.items()
                    if v["passed"] is None or v["passed"] != (v["paper"] == "pass"))
    print(f"\nROUGE-L fails here: {', '.join(ours_fail) or 'none'}; paper: "
          f"{', '.join(sorted(PAPER_ROUGE_L_FAILS))}; verdicts that differ from the paper: "
          f"{', '.join(differ) or 'none'}")

    against_release = release_comparison(table)
    if against_release:
        print("\nAgainst the release's own noise functions (same documents, seeds 1-5; within "
              "seed noise: |diff| <= the wider seed range, max - min over seeds, of the two):")
        print(format_release_comparison(against_release))

    if args.json:
        report = {
            "data": str(args.data), "docs": len(rows), "seeds": args.seeds,
            "noise_cap": NOISE_CAP, "tolerance": TOLERANCE, "skipped": plan.skipped,
            "gold_rouge_l": table[0]["rouge_l"], "cells": table[1:],
            "verdicts": {t: {**v, "points": [list(p) for p in v["points"]],
                             "violations": [list(p) for p in v["violations"]]}
                         for t, v in verdicts.items()},
            "paper_rouge_l_fails": sorted(PAPER_ROUGE_L_FAILS),
            "against_release": against_release,
        }
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
        print(f"figures written to {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
