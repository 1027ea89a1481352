"""Plain-text views of a run's results, shared by the markdown and HTML renderers.

Each function turns one part of the results (the summary of a dataset, a test's points, its
worst examples...) into rows of already formatted strings, with fixed decimals, so both reports
say the same thing and only differ in markup and escaping.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from blindspot.judging import RULES

MISSING = "—"
SYMBOLS = {"pass": "✓", "fail": "✗"}
#: a fail whose deciding comparison lies within the noise (``within_noise``): its cell status
#: (a CSS class) and the mark after ✗
WITHIN_NOISE = "fail_within_noise"
NOISE_MARK = "~"
#: how to get a firmer verdict, said wherever a within-noise fail is shown
FIRMER = ("more rows (a larger --data) or more seeds (--seeds, for the random tests) could "
          "change it")
EXAMPLE_CHARS = 200

RUN_HEADER = ("setting", "value")
#: what a summary cell's number is, wherever a summary table is shown without the full legend
CELL_NOTE = ("each cell: the verdict and the relative change of the rule's headline point, in % "
             "of the gold score (Δ: the absolute change, where the gold score is 0)")
POINT_HEADER = ("level", "noise ratio", "score", "relative change (% of gold)", "n", "judged")
EXAMPLE_HEADER = ("id", "level", "seed", "gold score", "perturbed score", "difference",
                  "gold", "perturbed")


@dataclass(frozen=True)
class Cell:
    """One summary cell: its status (a CSS class in HTML), its text and, for a verdict, the
    sentence that explains it (a tooltip in HTML)."""

    status: str
    text: str
    note: str = ""


@dataclass(frozen=True)
class SummaryRow:
    """One test of a dataset's summary table: name, category and one cell per metric."""

    test: str
    category: str
    cells: tuple[Cell, ...]


# --- numbers -------------------------------------------------------------------------------

def number(value: float | None, decimals: int = 4) -> str:
    """``value`` with a fixed number of decimals, or a dash when it is missing."""
    return MISSING if value is None else f"{value:.{decimals}f}"


def plus_minus(mean: float | None, std: float | None, decimals: int = 4) -> str:
    """``mean ± std`` (only the mean when the std is missing)."""
    if mean is None or std is None:
        return number(mean, decimals)
    return f"{mean:.{decimals}f} ± {std:.{decimals}f}"


def percent(value: float | None) -> str:
    """A relative change already in percent, signed, one decimal: ``-12.3%``."""
    return MISSING if value is None else f"{value:+.1f}%"


def change(relative: float | None, absolute: float | None) -> str:
    """A change against gold: in percent (``-12.3%``), or absolute (``Δ+0.0123``) where the
    gold score is 0 and a percentage means nothing."""
    if relative is None and absolute is not None:
        return f"Δ{absolute:+.4g}"
    return percent(relative)


def fraction(value: float | None) -> str:
    """A fraction in [0, 1] as a percentage with one decimal: ``12.5%``."""
    return MISSING if value is None else f"{100 * value:.1f}%"


def p_value(value: float | None) -> str:
    """A p-value: four decimals, or scientific notation below 0.0001."""
    if value is None:
        return MISSING
    return f"{value:.4f}" if value >= 1e-4 else f"{value:.1e}"


def compact(value: Any) -> str:
    """A short, stable text for a config value (lists joined, floats with ``g``)."""
    if value is None:
        return MISSING
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, (list, tuple)):
        return ", ".join(compact(v) for v in value)
    if isinstance(value, dict):
        return json.dumps(value, sort_keys=True, ensure_ascii=False)
    return str(value)


def shorten(text: Any, width: int = EXAMPLE_CHARS) -> str:
    """``text`` on one line (whitespace collapsed), cut to ``width`` characters with ``…``."""
    flat = " ".join(str(text).split())
    return flat if len(flat) <= width else flat[: width - 1].rstrip() + "…"


# --- run and dataset -----------------------------------------------------------------------

def metric_setting(spec: Mapping[str, Any]) -> str:
    """One metric of the run in words: its name, options, direction and foreign module."""
    name = spec.get("name") or ".".join(str(spec[k]) for k in ("metric", "output")
                                         if spec.get(k)) or MISSING
    parts = [f"{key}={compact(value)}" for key, value in sorted((spec.get("options") or
                                                                 {}).items())]
    if spec.get("higher_is_better") is False:
        parts.append("lower is better")
    if spec.get("module"):
        parts.append(f"module {spec['module']}")
    return f"{name} ({', '.join(parts)})" if parts else str(name)


def config_items(results: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The run's settings as ``(setting, value)`` rows, one per metric."""
    config = results.get("config", {})
    levels = config.get("levels") or {}
    rows = [("task", compact(config.get("task"))) if config.get("task") else None,
            ("tests", compact(config.get("tests"))),
            ("seeds", compact(config.get("seeds"))),
            ("levels", "; ".join(f"{test}: {compact(values)}" for test, values in
                                 levels.items())) if levels else None,
            ("noise cap", compact(config.get("noise_cap"))),
            ("tolerance", compact(config.get("tolerance"))),
            ("worst examples", compact(config.get("worst_examples")))]
    metrics = config.get("metrics", [])
    rows += [(f"metric {number}" if len(metrics) > 1 else "metric", metric_setting(spec))
             for number, spec in enumerate(metrics, start=1)]
    return [row for row in rows if row is not None]


def tool_line(results: Mapping[str, Any]) -> str:
    """Which tool and schema wrote the results."""
    tool = results.get("tool", {})
    return (f"{tool.get('name', 'blindspot')} {tool.get('version', MISSING)}, "
            f"results schema {results.get('schema_version', MISSING)}")


def dataset_items(data: Mapping[str, Any]) -> list[tuple[str, str]]:
    """A dataset's task, size, fingerprint and column mapping as ``(label, value)`` pairs."""
    columns = ", ".join(f"{role}={name}" for role, name in data.get("columns", {}).items())
    return [("task", compact(data.get("task"))), ("rows", compact(data.get("rows"))),
            ("fingerprint", compact(data.get("fingerprint"))), ("columns", columns or MISSING)]


def run_rules(results: Mapping[str, Any]) -> list[str]:
    """The verdict rules the run's tests were judged by, in first-seen order."""
    rules: dict[str, None] = {}
    for data in results.get("datasets", {}).values():
        for entry in data.get("metrics", {}).values():
            rules.update(dict.fromkeys(r["rule"] for r in entry.get("tests", {}).values()
                                       if r.get("rule") in RULES))
    return list(rules)


@dataclass(frozen=True)
class LegendItem:
    """One entry of a legend, with the entries that belong under it."""

    text: str
    details: tuple[str, ...] = ()


def legend(results: Mapping[str, Any]) -> list[LegendItem]:
    """What the summary cells mean: the rules the run used (under "pass"), with its tolerance
    and noise cap."""
    config = results.get("config", {})
    cap, tolerance = compact(config.get("noise_cap")), compact(config.get("tolerance"))
    rules = tuple(f"{rule}: {RULES[rule].description}." for rule in run_rules(results))
    items = [f"✓ pass: the test's verdict rule holds (tolerance {tolerance}, noise cap {cap})"
             + ("; the rules of this run:" if rules else "."),
             "✗ fail: the rule does not hold; the details name the deciding step.",
             f"✗{NOISE_MARK} fail within noise: the deciding step lies inside the seeds' spread "
             f"or its bootstrap interval over rows contains 0; {FIRMER}.",
             "The percentage is the relative change (in % of the gold score) of the point the "
             "rule shows: the noisiest judged point of a curve, the deciding level of a "
             "comparison with gold; Δ: the absolute change, where the gold score is 0.",
             "error: the metric failed or returned NaN on the test's rows.",
             "n/a (why): undecided, the test could not be judged; the word says why, the details more.",
             f"{MISSING}: the metric did not run this test."]
    return [LegendItem(items[0], rules), *(LegendItem(text) for text in items[1:])]


# --- summary -------------------------------------------------------------------------------

def dataset_tests(data: Mapping[str, Any]) -> list[str]:
    """Every test that some metric of the dataset ran, in file order."""
    tests: dict[str, None] = {}
    for entry in data.get("metrics", {}).values():
        tests.update(dict.fromkeys(entry.get("tests", {})))
    return list(tests)


def test_category(data: Mapping[str, Any], test: str) -> str:
    """The category of ``test`` as the first metric that ran it records it."""
    for entry in data.get("metrics", {}).values():
        result = entry.get("tests", {}).get(test)
        if result is not None:
            return str(result.get("category") or MISSING)
    return MISSING


#: The one word after ``n/a`` that says why a test or an expectation was not decided, found by a
#: phrase of its reason (``judging.judge_curve``'s and ``expectations``' reasons); first match wins.
UNDECIDED_WHY: tuple[tuple[str, str], ...] = (
    ("NaN", "no score"), ("noise ratio below the cap", "capped"), ("no row", "no rows"),
    ("to compare with", "missing"), ("metric failed", "error"), ("no score drop", "no rows"))


def undecided_cell(reason: str | None) -> Cell:
    """``n/a (word)``: not decided, and in a word why (the whole reason is the cell's note)."""
    word = next((w for phrase, w in UNDECIDED_WHY if reason and phrase in reason), None)
    return Cell("undecided", f"n/a ({word})" if word else "n/a", reason or "")


def verdict_cell(result: Mapping[str, Any] | None, metric_error: str | None = None) -> Cell:
    """One summary cell: ``✓ -12.3%``, ``✗ +0.8%``, ``✗~ +0.1%`` (a fail within noise),
    ``error``, ``n/a (why)`` (undecided, with the reason in a word)."""
    if result is None:
        return Cell("error", "error") if metric_error else Cell("missing", MISSING)
    status = result.get("status")
    if status in SYMBOLS:
        shown = change(result.get("relative_change"), result.get("absolute_change"))
        suffix = "" if shown == MISSING else " " + shown
        note = verdict_line(result)
        if status == "fail" and result.get("within_noise"):
            return Cell(WITHIN_NOISE, SYMBOLS[status] + NOISE_MARK + suffix, note)
        return Cell(status, SYMBOLS[status] + suffix, note)
    if status == "error":
        return Cell("error", "error")
    return undecided_cell(result.get("reason"))


def summary_rows(data: Mapping[str, Any]) -> list[SummaryRow]:
    """One row per test of the dataset, one cell per metric (Table 1 of the blind-spots paper)."""
    metrics = data.get("metrics", {})
    return [SummaryRow(test, test_category(data, test),
                       tuple(verdict_cell(entry.get("tests", {}).get(test), entry.get("error"))
                             for entry in metrics.values()))
            for test in dataset_tests(data)]


#: the line above the signatures under a summary table
SIGNATURES_NOTE = "Signatures (what produced each metric's numbers, docs/signature.md):"


def signatures(data: Mapping[str, Any]) -> list[tuple[str, str]]:
    """``(metric, signature)`` for every metric of a dataset that has one (results.json's
    ``signature``, :mod:`blindspot.scoring.signature`)."""
    return [(name, str(entry["signature"])) for name, entry in data.get("metrics", {}).items()
            if entry.get("signature")]


def metric_errors(data: Mapping[str, Any]) -> list[tuple[str, str]]:
    """``(metric, message)`` for every metric that could not run at all."""
    return [(name, str(entry["error"])) for name, entry in data.get("metrics", {}).items()
            if entry.get("error")]


def metric_flags(data: Mapping[str, Any]) -> list[tuple[str, str]]:
    """``(metric, flag)`` for every flag a metric carries (``uninformative: ...``)."""
    return [(name, str(flag)) for name, entry in data.get("metrics", {}).items()
            for flag in entry.get("flags") or ()]


def usage_lines(data: Mapping[str, Any]) -> list[tuple[str, str]]:
    """``(metric, what scoring cost)`` for every metric that reports its usage (an LLM
    judge): the calls this run made, the inputs read from the score cache, the tokens."""
    found = []
    for name, entry in data.get("metrics", {}).items():
        usage = entry.get("usage")
        if not usage:
            continue
        parts = [f"{number(usage.get('calls'), 0)} calls made",
                 f"{number(usage.get('cached'), 0)} read from the score cache"]
        parts += [f"{number(usage.get(k), 0)} {k.replace('_', ' ')}"
                  for k in ("prompt_tokens", "completion_tokens") if k in usage]
        found.append((name, ", ".join(parts)))
    return found


def problem_sections(data: Mapping[str, Any]) -> list[tuple[str, list[tuple[str, str]]]]:
    """The sections a report shows after a dataset's tables, each ``(title, (name, why)
    pairs)`` and only when it has any: the tests the plan skipped, the metrics that could not
    run, the metrics flagged (an uninformative judge) and what scoring cost (a judge's calls)."""
    sections = [("Skipped tests", skipped_tests(data)), ("Metric errors", metric_errors(data)),
                ("Flags", metric_flags(data)), ("Usage", usage_lines(data))]
    return [(title, pairs) for title, pairs in sections if pairs]


def skipped_tests(data: Mapping[str, Any]) -> list[tuple[str, str]]:
    """``(test, reason)`` for every test the plan left out."""
    return [(test, str(reason)) for test, reason in data.get("skipped_tests", {}).items()]


# --- details of one test and metric --------------------------------------------------------

def test_entries(data: Mapping[str, Any], test: str) -> list[tuple[str, Mapping[str, Any]]]:
    """``(metric, metric entry)`` for every metric that ran ``test``, in file order."""
    return [(name, entry) for name, entry in data.get("metrics", {}).items()
            if test in entry.get("tests", {})]


def verdict_line(result: Mapping[str, Any]) -> str:
    """One sentence with the verdict and, where there is one, why."""
    status = result.get("status", MISSING)
    if status in SYMBOLS:
        rule = result.get("rule", MISSING)
        why = result.get("explanation") or (f"relative change "
                                            f"{percent(result.get('relative_change'))}")
        line = f"{status} ({SYMBOLS[status]}, rule {rule}): {why}"
        noise = {True: f"; within the noise: {FIRMER}",
                 False: "; beyond the noise (significant)"}
        within = result.get("within_noise")  # null where no fail was judged
        return line + (noise[within] if isinstance(within, bool) else "")
    if status == "error":
        return f"error: {result.get('error') or 'no message'}"
    return f"undecided: {result.get('reason') or 'no reason given'}"


def direction_note(entry: Mapping[str, Any]) -> str | None:
    """A note for metrics where lower is better (their scores were negated before judging)."""
    if entry.get("higher_is_better", True):
        return None
    return "lower is better for this metric: its scores were negated before judging"


def point_row(point: Mapping[str, Any], gold: float | None = None) -> list[str]:
    """One curve point: level, noise ratio ± std, score ± std, relative change (absolute
    against ``gold`` where the gold score is 0), n, judged."""
    judged = "yes" if point.get("judged", True) else "no (over the noise cap)"
    n = point.get("n")
    mean = point.get("score_mean")
    absolute = mean - gold if gold == 0 and mean is not None else None
    return [str(point.get("level", MISSING)),
            plus_minus(point.get("noise_ratio"), point.get("noise_ratio_std"), 3),
            plus_minus(mean, point.get("score_std")),
            change(point.get("relative_change"), absolute),
            MISSING if n is None else str(n), judged]


def point_rows(points: list[Mapping[str, Any]]) -> list[list[str]]:
    """Every point of a test (gold first) as :func:`point_row` writes it."""
    gold = points[0].get("score_mean") if points else None
    return [point_row(p, gold) for p in points]


def per_sample_line(entry: Mapping[str, Any]) -> str:
    """The per-sample view of one level in a sentence."""
    n = entry.get("n")
    return (f"level {entry.get('level', MISSING)}: "
            f"{fraction(entry.get('fraction_noised_ge_gold'))} of rows not lowered "
            f"(n={MISSING if n is None else n}), mean drop {number(entry.get('mean_difference'))}, "
            f"Wilcoxon p = {p_value(entry.get('wilcoxon_p'))}, 95% CI of the mean drop "
            f"[{number(entry.get('ci_low'))}, {number(entry.get('ci_high'))}]")


def example_row(example: Mapping[str, Any]) -> list[str]:
    """One worst example, texts on one line and shortened."""
    return [compact(example.get("id")), str(example.get("level", MISSING)),
            compact(example.get("seed")), number(example.get("gold_score")),
            number(example.get("perturbed_score")), number(example.get("difference")),
            shorten(example.get("gold", "")), shorten(example.get("perturbed", ""))]


# --- expectations of the examination paper -------------------------------------------------

EXPECTATIONS_TITLE = "Expectations of the examination paper"
EXPECTATION_HEADER = ("expectation", "tests")


def expectation_cell(check: Mapping[str, Any] | None) -> Cell:
    """``✓``, ``✗``, ``n/a (why)`` (undecided) or a dash (not checked for this metric)."""
    if check is None:
        return Cell("missing", MISSING)
    passed = check.get("passed")
    if passed is None:
        return undecided_cell(check.get("reason"))
    return Cell("pass", SYMBOLS["pass"]) if passed else Cell("fail", SYMBOLS["fail"])


def _expectation_key(check: Mapping[str, Any]) -> tuple[str, str]:
    return str(check.get("expectation")), ", ".join(check.get("tests", []))


def expectation_rows(data: Mapping[str, Any]) -> list[SummaryRow]:
    """One row per expectation checked on the dataset, one cell per metric (empty: none)."""
    metrics = data.get("metrics", {})
    keyed = {name: {_expectation_key(c): c for c in entry.get("expectations", [])}
             for name, entry in metrics.items()}
    keys = list(dict.fromkeys(k for checks in keyed.values() for k in checks))
    return [SummaryRow(name, tests, tuple(expectation_cell(keyed[m].get((name, tests)))
                                          for m in metrics))
            for name, tests in keys]


def expectation_value(value: Any) -> str:
    return number(value) if isinstance(value, float) else compact(value)


def expectation_lines(data: Mapping[str, Any]) -> list[str]:
    """One line per metric and check: the verdict, the numbers compared and why undecided."""
    lines = []
    for metric, entry in data.get("metrics", {}).items():
        for check in entry.get("expectations", []):
            name, tests = _expectation_key(check)
            values = ", ".join(f"{k} {expectation_value(v)}"
                               for k, v in check.get("values", {}).items())
            why = f" ({check['reason']})" if check.get("reason") else ""
            lines.append(f"{metric}, {name} ({tests}): {expectation_cell(check).text}{why}; "
                         f"{values}")
    return lines


def expectations_legend() -> list[str]:
    """What the three expectations check (blindspot.expectations)."""
    return ["decreasing_with_intensity: the score strictly falls at every intensity step, gold "
            "first, all levels (no noise cap).",
            "negation_drops_sharply: negating lowers the score at least as much as deleting a "
            "quarter of the words (word_drop at its mildest level).",
            "det_drop_hurts_least: dropping determiners lowers the score less than dropping "
            "nouns, verbs or adjectives.",
            "Drops are gold minus impaired scores over the rows the impairment changed; "
            "n/a: undecided (the line below says why)."]
