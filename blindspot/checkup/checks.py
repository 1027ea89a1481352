"""The check-up's checks, declared once in :data:`CHECKS`; each returns a :class:`CheckResult`.

* ``batch_order``: the rows scored 1, 8 and 64 at a time and in reversed order; per row the
  largest absolute difference from one-at-a-time, flagged above :data:`TOLERANCE`.
* ``determinism``: the rows scored in two fresh Python processes; any difference is flagged.
* ``truncation``: irrelevant words appended to the first row's hypothesis (then, for a metric
  that reads references, to its reference); the smallest number of appended words past which
  the score stops moving is found by doubling then bisection, and reported as the length (in
  words, and in the model's tokens when the scorer exposes its tokenizer) the metric is blind
  past. None found up to ``max_words``: "no limit found".
* ``normalisation``: each :data:`~blindspot.scoring.probe.NORMALISATION_VARIANTS` rewrite of the
  hypotheses (same text, other code points or spacing): the largest change of the score.
* ``references``: each reference list duplicated, and (two references or more, the next row's
  reference added when a row has one) reversed: a multi-reference score should not change.
* ``anchors``: the mean score of reference-as-hypothesis, gold, an unrelated gold, the copied
  source, an empty string, shuffled words and random characters, in the metric's own units, and
  each one's distance from the gold's mean, so a blind-spot verdict can be read against them.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from blindspot.checkup.child import MARKER
from blindspot.runner.entries import error_text
from blindspot.runner.scorers import scorer_for
from blindspot.scoring.anchors import sanity_anchors
from blindspot.scoring.probe import (
    NORMALISATION_VARIANTS,
    CheckRows,
    appended,
    direct_scores,
    filler,
)

#: A score difference above this is a difference (float rounding stays far below it).
TOLERANCE = 1e-6
BATCH_SIZES = (1, 8, 64)
#: How many rows the determinism check scores in each fresh process.
DETERMINISM_ROWS = 8


def fresh_scorer(spec: Any, idf_references: list[str] | None) -> Any:
    """A new scorer of ``spec`` (models are shared per process; per-scorer caches are not)."""
    return scorer_for(spec, idf_references)


@dataclass
class CheckContext:
    """What every check reads: the metric, the rows and the check-up's settings."""

    spec: Any
    metric_text: str | None  #: the spec as text, for the fresh processes (None: an object)
    metric_options: dict[str, dict[str, Any]]
    rows: CheckRows
    idf: list[str] | None
    seed: int = 0
    max_words: int = 2048

    def scorer(self) -> Any:
        return fresh_scorer(self.spec, self.idf)

    def scores(self, rows: CheckRows, batch_size: int = 8, scorer: Any = None) -> list[float]:
        return direct_scores(scorer or self.scorer(), self.spec, rows, batch_size)


@dataclass
class CheckResult:
    """One check's verdict (pass | warn | fail | info | skipped | error), a one-line summary and
    its figures."""

    name: str
    title: str
    verdict: str
    summary: str
    figures: dict[str, Any] = field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        return asdict(self)


def _max_diff(a: Sequence[float], b: Sequence[float]) -> list[float]:
    return [abs(x - y) for x, y in zip(a, b, strict=True)]


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


# -- batch and order ----------------------------------------------------------------------------


def check_batch_order(ctx: CheckContext) -> CheckResult:
    base = ctx.scores(ctx.rows, batch_size=1)
    configs = {f"batch_{b}": ctx.scores(ctx.rows, batch_size=b) for b in BATCH_SIZES[1:]}
    configs["reversed_batch_8"] = ctx.scores(ctx.rows.reversed(), batch_size=8)[::-1]
    per_config = {name: max(_max_diff(base, scores)) for name, scores in configs.items()}
    per_row = [max(abs(base[i] - s[i]) for s in configs.values()) for i in range(len(base))]
    flagged = [i for i, d in enumerate(per_row) if d > TOLERANCE]
    worst = max(per_row)
    verdict = "fail" if flagged else "pass"
    summary = (f"{len(flagged)} of {len(per_row)} rows change with the batch size or order "
               f"(largest absolute difference {worst:.3g})" if flagged else
               f"no row changes by more than {TOLERANCE:g} (largest absolute difference "
               f"{worst:.3g})")
    return CheckResult("batch_order", "Batch and order invariance", verdict, summary,
                       {"baseline": "batch_1", "max_abs_diff": per_config,
                        "per_row_max_abs_diff": per_row, "rows_over_tolerance": flagged,
                        "tolerance": TOLERANCE})


# -- determinism ---------------------------------------------------------------------------------


def fresh_process_scores(ctx: CheckContext, rows: CheckRows) -> list[float]:
    """The rows scored in a new Python process (the metric resolved there from its text)."""
    job = {"metric": ctx.metric_text, "metric_options": ctx.metric_options, "idf": ctx.idf,
           "hypotheses": rows.hypotheses, "references": rows.references,
           "sources": rows.sources, "batch_size": 8}
    done = subprocess.run([sys.executable, "-m", "blindspot.checkup.child"],
                          input=json.dumps(job), capture_output=True, text=True, check=False)
    lines = [line for line in done.stdout.splitlines() if line.startswith(MARKER)]
    if done.returncode != 0 or not lines:
        raise RuntimeError(f"the fresh process failed (exit {done.returncode}): "
                           f"{done.stderr.strip()[-400:]}")
    return [float(v) for v in json.loads(lines[-1][len(MARKER):])]


def check_determinism(ctx: CheckContext) -> CheckResult:
    title = "Determinism across processes"
    if ctx.metric_text is None:
        return CheckResult("determinism", title, "skipped", "the metric is a Python object, "
                           "which a fresh process cannot load; name it by a spec or a file")
    rows = ctx.rows.first(DETERMINISM_ROWS)
    first, second = fresh_process_scores(ctx, rows), fresh_process_scores(ctx, rows)
    here = ctx.scores(rows, batch_size=8)
    between = max(_max_diff(first, second))
    to_here = max(_max_diff(first, here))
    identical = first == second
    verdict = "pass" if between <= TOLERANCE else "fail"
    summary = ("two fresh processes give " + ("identical scores" if identical else
               f"scores differing by up to {between:.3g}") + f" on {len(rows)} rows")
    return CheckResult("determinism", title, verdict, summary,
                       {"rows": len(rows), "identical": identical, "max_abs_diff": between,
                        "max_abs_diff_vs_this_process": to_here})


# -- truncation ----------------------------------------------------------------------------------


#: The truncation check's "the score did not move": equal to this relative precision. Relative,
#: because a score that only shrinks towards 0 (BLEU's brevity penalty under a very long
#: reference) still moves; a cut input gives the same score to float precision.
SAME_SCORE = 1e-9


def _moved(a: float, b: float) -> bool:
    return abs(a - b) > SAME_SCORE * max(abs(a), abs(b))


@dataclass
class BlindPoint:
    """Where appending stops moving the score: ``appended_words`` (None: not up to the
    largest length tried), the score calls made, and the lengths tried."""

    appended_words: int | None
    tried: dict[int, float]


def find_blind_point(score_at: Callable[[int], float], max_words: int,
                     start: int = 16) -> BlindPoint:
    """The smallest number of appended words past which ``score_at`` no longer moves: doubling
    until two lengths agree, then bisection between the last two (the score is assumed to move
    with every appended word until the input is cut, and never after)."""
    tried: dict[int, float] = {}

    def at(words: int) -> float:
        if words not in tried:
            tried[words] = score_at(words)
        return tried[words]

    previous, words = 0, start
    while True:
        if 2 * words > max_words:
            return BlindPoint(None, tried)
        if not _moved(at(words), at(2 * words)):
            break
        previous, words = words, 2 * words
    settled = at(2 * words)
    low, high = previous, words
    if not _moved(at(low), settled):
        return BlindPoint(low, tried)
    while high - low > 1:
        middle = (low + high) // 2
        if _moved(at(middle), settled):
            low = middle
        else:
            high = middle
    return BlindPoint(high, tried)


def _token_count(scorer: Any, text: str) -> int | None:
    """Tokens of ``text`` by the scorer's tokenizer, when the scorer exposes one."""
    tokenizer = getattr(scorer, "tokenizer", None)
    if not callable(tokenizer):
        return None
    return len(tokenizer()(text, add_special_tokens=False)["input_ids"])


def _probe_side(ctx: CheckContext, side: str) -> dict[str, Any]:
    """Append filler to the first row's hypothesis (``side`` hypothesis) or reference."""
    scorer = ctx.scorer()
    rows = ctx.rows.first(1)
    extra = filler(ctx.max_words, ctx.seed).split(" ")
    if side == "hypothesis":
        original = rows.hypotheses[0]
    elif rows.references is not None:  # check_truncation probes a reference only when there are
        original = rows.references[0][0]
    else:
        raise ValueError("no reference to append filler to")

    def text_at(words: int) -> str:
        return appended(original, " ".join(extra[:words]))

    def score_at(words: int) -> float:
        probe = rows.with_hypotheses([text_at(words)]) if side == "hypothesis" else \
            rows.with_references([[text_at(words)]])
        return ctx.scores(probe, batch_size=1, scorer=scorer)[0]

    found = find_blind_point(score_at, ctx.max_words)
    entry: dict[str, Any] = {"side": side, "calls": len(found.tried),
                             "max_words_tried": max(found.tried)}
    if found.appended_words is None:
        return {**entry, "blind_past_words": None, "blind_past_tokens": None}
    visible = text_at(found.appended_words)
    return {**entry, "appended_words": found.appended_words,
            "blind_past_words": len(visible.split()),
            "blind_past_tokens": _token_count(scorer, visible)}


def check_truncation(ctx: CheckContext) -> CheckResult:
    sides = ["hypothesis"] + (["reference"] if ctx.rows.references and
                              ctx.scorer().uses_references != "none" else [])
    found = {side: _probe_side(ctx, side) for side in sides}
    blind = {s: f for s, f in found.items() if f["blind_past_words"] is not None}
    if not blind:
        return CheckResult("truncation", "Long-input truncation", "pass",
                           f"no limit found up to {ctx.max_words} appended words: the score "
                           f"moves with every appended word", {"sides": found})
    parts = [f"{side} past {f['blind_past_tokens']} tokens ({f['blind_past_words']} words)"
             if f["blind_past_tokens"] is not None else
             f"{side} past {f['blind_past_words']} words" for side, f in blind.items()]
    return CheckResult("truncation", "Long-input truncation", "warn",
                       "the metric is blind to the " + "; the ".join(parts) + ": text beyond is cut "
                       "and does not change the score", {"sides": found})


# -- normalisation ------------------------------------------------------------------------------


def check_normalisation(ctx: CheckContext) -> CheckResult:
    base = ctx.scores(ctx.rows)
    figures: dict[str, Any] = {}
    for variant in NORMALISATION_VARIANTS:
        rewritten = [variant.rewrite(h) for h in ctx.rows.hypotheses]
        changed = [i for i, (a, b) in enumerate(zip(rewritten, ctx.rows.hypotheses, strict=True)) if a != b]
        if not changed:
            figures[variant.name] = {"description": variant.description, "rows_rewritten": 0,
                                     "max_abs_change": None, "mean_abs_change": None}
            continue
        scores = ctx.scores(ctx.rows.with_hypotheses(rewritten))
        diffs = [abs(scores[i] - base[i]) for i in changed]
        figures[variant.name] = {"description": variant.description,
                                 "rows_rewritten": len(changed), "max_abs_change": max(diffs),
                                 "mean_abs_change": _mean(diffs)}
    moved = [n for n, f in figures.items() if (f["max_abs_change"] or 0) > TOLERANCE]
    summary = ("the score moves under " + ", ".join(
        f"{n} (up to {figures[n]['max_abs_change']:.3g})" for n in moved) if moved else
               "no rewrite moves the score")
    return CheckResult("normalisation", "Normalisation invariance", "fail" if moved else "pass",
                       summary, {"variants": figures, "tolerance": TOLERANCE})


# -- references ----------------------------------------------------------------------------------


def check_references(ctx: CheckContext) -> CheckResult:
    title = "Reference handling"
    refs = ctx.rows.references
    if not refs or ctx.scorer().uses_references == "none":
        return CheckResult("references", title, "skipped", "the metric reads no reference")
    n = len(refs)
    several = [r if len(r) > 1 else [*r, refs[(i + 1) % n][0]] for i, r in enumerate(refs)]
    base = ctx.scores(ctx.rows.with_references(several))
    cases = {"duplicated": ctx.rows.with_references([r + r for r in several]),
             "reversed": ctx.rows.with_references([r[::-1] for r in several])}
    figures: dict[str, Any] = {}
    for name, rows in cases.items():
        try:
            figures[name] = {"max_abs_change": max(_max_diff(base, ctx.scores(rows)))}
        except Exception as error:  # a metric that takes one reference only says so here
            figures[name] = {"max_abs_change": None, "error": error_text(error)}
    moved = [n for n, f in figures.items() if (f["max_abs_change"] or 0) > TOLERANCE]
    errors = [n for n, f in figures.items() if f.get("error")]
    verdict = "fail" if moved else ("error" if errors else "pass")
    summary = ("the score changes when the references are " + " or ".join(
        f"{n} (up to {figures[n]['max_abs_change']:.3g})" for n in moved) if moved else
               "errors: " + "; ".join(figures[n]["error"] for n in errors) if errors else
               "duplicating or reversing the references leaves the score unchanged")
    return CheckResult("references", title, verdict, summary,
                       {"references_per_row": _mean([len(r) for r in several]), **figures})


# -- anchors -------------------------------------------------------------------------------------


def anchor_figures(ctx: CheckContext) -> dict[str, Any]:
    """Each anchor's mean score over the rows and its distance from the gold's mean."""
    rows = ctx.rows
    means = sanity_anchors(ctx.scorer(), ctx.spec, rows.hypotheses, rows.references,
                           rows.sources, rows=len(rows), seed=ctx.seed) or {}
    gold = means.get("gold")
    return {name: {"mean": mean, "minus_gold": None if mean is None or gold is None else
                   mean - gold} for name, mean in means.items()}


def check_anchors(ctx: CheckContext) -> CheckResult:
    means = anchor_figures(ctx)
    shown = ", ".join(f"{n} {e['mean']:.4g}" for n, e in means.items() if e["mean"] is not None)
    return CheckResult("anchors", "Sanity anchors (score units)", "info", shown,
                       {"anchors": means, "higher_is_better": ctx.spec.higher_is_better})


Table = tuple[list[str], list[list[Any]]]


def anchors_table(figures: dict[str, Any]) -> Table:
    return (["anchor", "mean score", "minus gold"],
            [[name, e["mean"], e["minus_gold"]] for name, e in figures["anchors"].items()])


def normalisation_table(figures: dict[str, Any]) -> Table:
    return (["rewrite", "rows rewritten", "max abs change", "mean abs change"],
            [[f"{name} ({f['description']})", f["rows_rewritten"], f["max_abs_change"],
              f["mean_abs_change"]] for name, f in figures["variants"].items()])


@dataclass(frozen=True)
class Check:
    """A check: its function and, where a table says it best, how its figures become one
    (the other checks' figures are listed as they are)."""

    name: str
    run: Callable[[CheckContext], CheckResult]
    table: Callable[[dict[str, Any]], Table] | None = None


CHECKS = (Check("batch_order", check_batch_order), Check("determinism", check_determinism),
          Check("truncation", check_truncation),
          Check("normalisation", check_normalisation, normalisation_table),
          Check("references", check_references), Check("anchors", check_anchors, anchors_table))


def run_check(check: Check, ctx: CheckContext) -> CheckResult:
    """The check's result; a check that raises ends in ``error`` and the others still run."""
    try:
        return check.run(ctx)
    except Exception as error:
        return CheckResult(check.name, check.name, "error", error_text(error))


__all__ = ["CHECKS", "TOLERANCE", "BlindPoint", "Check", "CheckContext", "CheckResult",
           "anchor_figures", "find_blind_point", "fresh_scorer", "run_check"]
