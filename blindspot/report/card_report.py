"""A metric's report card and the leaderboard of cards: views of the ``card`` protocol's results.

:func:`render_card` is ``card.md`` (the metric, its signature, one line per test category, the
verdict matrix, the hygiene checks, the human agreement, the judge audits, the cost, the worst
examples, the provenance); :func:`category_counts` and :func:`summary_line` are the per-category
figures the card's summary, the terminal and the leaderboard all read. :func:`leaderboard` turns
cards into one :class:`BoardRow` per metric and signature (the figures of one task, or of all),
sorted; :func:`board_markdown` and :func:`board_csv` are the same table for a paper, and
:func:`hub_readme` the card as a Hub dataset repository's README. Layout of a card's results:
:mod:`blindspot.protocols.card`.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import yaml

from blindspot.perturbations.suites import CATEGORIES
from blindspot.report import markdown as md
from blindspot.report import views

#: the card's file beside results.json
CARD_FILE = "card.md"
#: the leaderboard's task filter that keeps every task
ALL_TASKS = "all"
#: check-up verdicts that judge something (info and skipped ones do not count)
JUDGED_CHECKS = ("pass", "warn", "fail")
#: the worst examples a card shows (one per failing test and task, the first failures first)
CARD_EXAMPLES = 5


# -- per category ---------------------------------------------------------------------------------

@dataclass
class CategoryCount:
    """The verdicts of one test category over a card's tasks: decided ones (pass, fail), fails
    within the noise, undecided and errors, and where each failing test failed."""

    category: str
    passed: int = 0
    failed: int = 0
    within_noise: int = 0
    undecided: int = 0
    errors: int = 0
    #: failing test -> the tasks it failed on, a task marked ``~`` where the fail is within noise
    fails: dict[str, list[str]] = field(default_factory=dict)

    @property
    def decided(self) -> int:
        return self.passed + self.failed

    @property
    def share(self) -> float | None:
        """The share of decided verdicts that pass (None when none was decided)."""
        return self.passed / self.decided if self.decided else None


def _category_order(names: Iterable[str]) -> list[str]:
    found = set(names)
    return [c for c in CATEGORIES if c in found] + sorted(found - set(CATEGORIES))


def category_counts(tasks: Mapping[str, Mapping[str, Any]], only: str | None = None
                    ) -> dict[str, CategoryCount]:
    """Per category (the blind-spots paper's first, then the others), the verdicts of every
    test on every task of a card (``only``: that task's alone)."""
    counts: dict[str, CategoryCount] = {}
    for task, entry in tasks.items():
        if only not in (None, ALL_TASKS, task):
            continue
        for test, result in entry.get("tests", {}).items():
            count = counts.setdefault(result["category"], CategoryCount(result["category"]))
            status = result["status"]
            if status == "pass":
                count.passed += 1
            elif status == "fail":
                count.failed += 1
                noise = bool(result.get("within_noise"))
                count.within_noise += noise
                count.fails.setdefault(test, []).append(task + (views.NOISE_MARK if noise else ""))
            elif status == "error":
                count.errors += 1
            else:
                count.undecided += 1
    return {name: counts[name] for name in _category_order(counts)}


def summary_line(count: CategoryCount) -> str:
    """``fluency: 8 of 10 passed; blind spots: truncation (summarization~), ...``."""
    line = f"{count.category}: {count.passed} of {count.decided} passed"
    if count.fails:
        line += "; blind spots: " + ", ".join(f"{test} ({', '.join(tasks)})"
                                               for test, tasks in count.fails.items())
    else:
        line += "; no blind spot"
    extra = [f"{n} {what}" for n, what in ((count.undecided, "undecided"),
                                          (count.errors, "in error")) if n]
    return line + (f" ({', '.join(extra)})" if extra else "")


def card_summary(tasks: Mapping[str, Mapping[str, Any]]) -> dict[str, str]:
    """The one-line summary of each category over every task (the card's ``summary``)."""
    return {name: summary_line(count) for name, count in category_counts(tasks).items()}


SUMMARY_NOTE = (f"`{views.NOISE_MARK}` after a task: the fail lies within the noise ("
                f"{views.FIRMER}).")


# -- card.md --------------------------------------------------------------------------------------

def _tau(level: Mapping[str, Any] | None) -> str:
    if not level or level.get("kendall") is None:
        return views.MISSING
    interval = level.get("kendall_ci")
    shown = f"{level['kendall']:.3f}"
    return shown + (f" [{interval[0]:.3f}, {interval[1]:.3f}]" if interval else "")


def _matrix(tasks: Mapping[str, Mapping[str, Any]]) -> list[str]:
    names = list(tasks)
    tests: dict[str, str] = {}
    for entry in tasks.values():
        for test, result in entry.get("tests", {}).items():
            tests.setdefault(test, result["category"])
    order = {c: i for i, c in enumerate(_category_order(tests.values()))}
    rows = [[test, category, *(views.verdict_cell(tasks[t].get("tests", {}).get(test),
                                                  tasks[t].get("error")).text for t in names)]
            for test, category in sorted(tests.items(), key=lambda item: order[item[1]])]
    if not rows:
        return ["No test was judged.", ""]
    return [*md.table(["test", "category", *names], rows), "", views.CELL_NOTE + ".", ""]


def _checkup(checkup: Mapping[str, Any] | None) -> list[str]:
    if checkup is None:
        return ["Not run.", ""]
    if checkup.get("error"):
        return [f"Not run: {md.escape(checkup['error'])}", ""]
    lines = [f"The first {checkup['rows']} rows of {md.escape(checkup['data'])} "
             f"({checkup['task']}).", "",
             *md.table(["check", "verdict", "summary"],
                       [[c["title"], c["verdict"], c["summary"]]
                        for c in checkup["checks"].values()]), ""]
    return lines


def _human(human: Mapping[str, Any] | None) -> list[str]:
    if human is None:
        return ["No human judgments were given (`blindspot card METRIC --human FILE`).", ""]
    if human.get("error"):
        return [f"Not computed: {md.escape(human['error'])}", ""]
    rows = [[criterion, _tau(levels.get("summary")), _tau(levels.get("system")),
             str(levels.get("summary", {}).get("n_documents", views.MISSING))]
            for criterion, levels in human["criteria"].items()]
    return [f"Kendall's tau-b with the human judgments of {md.escape(human['data'])} "
            f"({human['rows']} outputs: {human['documents']} documents x {human['systems']} "
            f"systems), with its 95 % bootstrap interval over documents ({human['bootstrap']} "
            "resamples). Summary level: the mean over documents of the correlation over that "
            "document's outputs; system level: the correlation of per-system means.", "",
            *md.table(["criterion", "summary-level tau [95% CI]", "system-level tau [95% CI]",
                       "documents"], rows), ""]


def _audits(audit: Mapping[str, Any] | None) -> list[str]:
    if audit is None:
        return ["Not an LLM judge: the judge audits do not apply.", ""]
    if audit.get("error"):
        return [f"Not run: {md.escape(audit['error'])}", ""]
    rows = [[name, {True: "pass", False: "FAIL"}.get(entry.get("passed"), "n/a"),
             entry.get("explanation") or ""] for name, entry in audit["audits"].items()]
    return [*md.table(["audit", "verdict", "explanation"], rows), ""]


def cost_text(cost: Mapping[str, Any]) -> str:
    """The cost in one phrase: seconds per 1000 texts scored, on what."""
    seconds = cost.get("seconds_per_1000_texts")
    if seconds is None:
        return f"not measured ({cost.get('why', 'no timing')})"
    return (f"{seconds:.3g} s per 1000 texts ({cost['texts']} texts of {cost['task']} in "
            f"batches of {cost['batch_size']}, uncached, on {cost['device']} with "
            f"{cost['cpus']} CPUs)")


def _cost(cost: Mapping[str, Any]) -> list[str]:
    lines = [f"- scoring: {md.escape(cost_text(cost))}"]
    for name, value in (cost.get("usage") or {}).items():
        lines.append(f"- {md.escape(name)}: {views.compact(value)}")
    return [*lines, ""]


def _examples(tasks: Mapping[str, Mapping[str, Any]]) -> list[str]:
    rows = [[test, task, *views.example_row(result["worst_examples"][0])]
            for task, entry in tasks.items() for test, result in entry.get("tests", {}).items()
            if result["status"] == "fail" and result.get("worst_examples")][:CARD_EXAMPLES]
    if not rows:
        return ["No test failed.", ""]
    return ["The row each failing test's noise lowered least (or raised most):", "",
            *md.table(["test", "task", *views.EXAMPLE_HEADER], rows), ""]


def render_card(results: Mapping[str, Any]) -> str:
    """``card.md`` of a card's results."""
    metric = results["metric"]
    tasks = results["tasks"]
    direction = "higher" if metric["higher_is_better"] else "lower"
    first = "the first " if results["config"].get("rows") else ""
    data = "; ".join(f"{first}{entry['rows']} rows of {entry['data']} ({task})"
                     for task, entry in tasks.items())
    lines = [f"# Report card: {md.escape(metric['name'])}", "",
             f"{md.escape(views.metric_setting(metric))}; {direction} is better; judged on "
             f"{md.escape(data)} with seeds {views.compact(results['config']['seeds'])}.", "",
             "## Signature", "", md.code(results["signature"] or views.MISSING), "",
             "## Summary", "", *(f"- {md.escape(line)}" for line in results["summary"].values()),
             "", SUMMARY_NOTE, ""]
    errors = [(task, entry["error"]) for task, entry in tasks.items() if entry.get("error")]
    if errors:
        lines += ["Errors:", "", *md.bullets(errors), ""]
    lines += ["## Verdict matrix", "", *_matrix(tasks),
              "## Hygiene checks (check-up)", "", *_checkup(results["checkup"]),
              "## Agreement with human judgments", "", *_human(results["human"]),
              "## Judge audits", "", *_audits(results["judge_audit"]),
              "## Cost", "", *_cost(results["cost"]),
              "## Worst examples", "", *_examples(tasks),
              "## Provenance", "",
              *md.bullets([("fingerprint", f"sha256:{results['fingerprint']}"),
                           ("written by", views.tool_line(results)),
                           ("settings", views.compact(results["config"]))]), ""]
    return "\n".join(lines)


# -- the leaderboard ------------------------------------------------------------------------------

@dataclass(frozen=True)
class BoardRow:
    """One metric and signature on the leaderboard: per category the share of decided verdicts
    that pass and the fails within the noise, the share of judged check-up checks that pass, the
    mean summary-level Kendall tau with the human judgments, the cost, and the card itself."""

    metric: str
    signature: str
    tasks: tuple[str, ...]
    categories: Mapping[str, CategoryCount]
    checkup: float | None
    human_tau: float | None
    cost: float | None
    card: Mapping[str, Any] = field(repr=False, compare=False)


def _checkup_share(checkup: Mapping[str, Any] | None) -> float | None:
    if not checkup or checkup.get("error"):
        return None
    judged = [c["verdict"] for c in checkup["checks"].values() if c["verdict"] in JUDGED_CHECKS]
    return judged.count("pass") / len(judged) if judged else None


def _human_tau(human: Mapping[str, Any] | None) -> float | None:
    if not human or human.get("error"):
        return None
    taus = [levels["summary"]["kendall"] for levels in human["criteria"].values()
            if levels.get("summary", {}).get("kendall") is not None]
    return sum(taus) / len(taus) if taus else None


def card_label(card: Mapping[str, Any]) -> str:
    """The metric's name, with the options its card was made with (``chrf.chrf
    (word_order=2)``: chrF++)."""
    given = card["config"].get("metric_options") or {}
    chosen = given.get(card["metric"]["metric"]) or {}
    options = ", ".join(f"{key}={views.compact(value)}" for key, value in sorted(chosen.items()))
    return card["metric"]["name"] + (f" ({options})" if options else "")


def board_row(card: Mapping[str, Any], task: str | None = None) -> BoardRow:
    """A card's row (the figures of ``task``, or of every task)."""
    tasks = tuple(t for t in card["tasks"] if task in (None, ALL_TASKS, t))
    return BoardRow(card_label(card), card["signature"] or views.MISSING, tasks,
                    category_counts(card["tasks"], task), _checkup_share(card["checkup"]),
                    _human_tau(card["human"]), card["cost"].get("seconds_per_1000_texts"), card)


#: what the leaderboard sorts by: the metric's name, a category, or one of these figures
SORT_FIGURES = ("metric", "check-up", "human tau", "cost")


def sort_choices(rows: Sequence[BoardRow]) -> list[str]:
    """The columns the rows can be sorted by: the metric, each category, the figures."""
    categories = _category_order(c for row in rows for c in row.categories)
    return [SORT_FIGURES[0], *categories, *SORT_FIGURES[1:]]


def _sort_key(row: BoardRow, by: str) -> Any:
    if by == "metric":
        return row.metric
    value = {"check-up": row.checkup, "human tau": row.human_tau, "cost": row.cost}.get(by)
    if by in row.categories:
        value = row.categories[by].share
    return value


def leaderboard(cards: Iterable[Mapping[str, Any]], task: str | None = None,
                sort: str | None = None, descending: bool | None = None,
                contains: str = "") -> list[BoardRow]:
    """One row per metric and signature (a repeated pair is shown once) of the cards that ran
    ``task`` (None or ``all``: every card, its figures over all its tasks), whose metric name
    contains ``contains``; sorted by ``sort`` (default: the first category), a missing figure
    last. Descending by default, except the metric's name and the cost (lower is better)."""
    rows: dict[tuple[str, str], BoardRow] = {}
    for card in cards:
        row = board_row(card, task)
        if row.tasks and contains.lower() in row.metric.lower():
            rows.setdefault((row.metric, row.signature), row)
    found = list(rows.values())
    by = sort or next((c for c in sort_choices(found) if c in CATEGORIES), "metric")
    if by not in sort_choices(found) and found:
        raise ValueError(f"cannot sort the leaderboard by {by!r}; sort by one of "
                         f"{', '.join(sort_choices(found))}")
    down = descending if descending is not None else by not in ("metric", "cost")
    present = [r for r in found if _sort_key(r, by) is not None]
    missing = [r for r in found if _sort_key(r, by) is None]
    present.sort(key=lambda r: r.metric)  # ties stay in name order, whichever way the rest go
    present.sort(key=lambda r: _sort_key(r, by), reverse=down)
    return present + sorted(missing, key=lambda r: r.metric)


def board_categories(rows: Sequence[BoardRow]) -> list[str]:
    """The categories of the rows, in report order."""
    return _category_order(c for row in rows for c in row.categories)


def _share(value: float | None) -> str:
    return views.MISSING if value is None else f"{value:.0%}"


def _number(value: float | None, digits: int = 3) -> str:
    return views.MISSING if value is None or math.isnan(value) else f"{value:.{digits}g}"


def board_header(rows: Sequence[BoardRow]) -> list[str]:
    """The leaderboard's columns: per category its pass share and its fails within noise."""
    categories = board_categories(rows)
    return ["metric", "tasks", *(name for c in categories
                                 for name in (c, f"{c} {views.NOISE_MARK}")),
            "check-up", "human tau", "s / 1000 texts", "signature"]


def board_cells(rows: Sequence[BoardRow]) -> list[list[str]]:
    """Each row's cells, formatted as the Space and the markdown table show them."""
    categories = board_categories(rows)
    out = []
    for row in rows:
        cells = [row.metric, ", ".join(row.tasks)]
        for name in categories:
            count = row.categories.get(name)
            cells += ([_share(count.share), str(count.within_noise)] if count
                      else [views.MISSING, views.MISSING])
        out.append([*cells, _share(row.checkup), _number(row.human_tau), _number(row.cost),
                    row.signature])
    return out


def board_markdown(rows: Sequence[BoardRow]) -> str:
    """The leaderboard as a markdown table, with what its columns mean."""
    return "\n".join([*md.table(board_header(rows), board_cells(rows)), "", BOARD_NOTE, ""])


BOARD_NOTE = (f"Per category: the share of verdicts that pass (tests x tasks), and "
              f"({views.NOISE_MARK}) how many fails lie within the noise. check-up: the share of "
              "judged checks that pass. human tau: the mean summary-level Kendall tau over the "
              "human criteria. s / 1000 texts: uncached scoring time.")


def board_csv(rows: Sequence[BoardRow]) -> str:
    """The leaderboard as CSV for a paper: shares as fractions, counts as integers, every
    figure unrounded."""
    categories = board_categories(rows)
    header = ["metric", "tasks", *(name for c in categories
                                   for name in (f"{c}_passed", f"{c}_decided",
                                                f"{c}_within_noise")),
              "checkup_share", "human_tau", "seconds_per_1000_texts", "signature"]
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(header)
    for row in rows:
        cells: list[Any] = [row.metric, ";".join(row.tasks)]
        for name in categories:
            count = row.categories.get(name)
            cells += ([count.passed, count.decided, count.within_noise] if count
                      else ["", "", ""])
        writer.writerow([*cells, *("" if v is None else v for v in
                                   (row.checkup, row.human_tau, row.cost)), row.signature])
    return buffer.getvalue()


# -- the Hub repository's README ------------------------------------------------------------------

def hub_readme(results: Mapping[str, Any]) -> str:
    """The card as a Hub dataset repository's README: front matter (its name and tags), then
    ``card.md``."""
    front = {"pretty_name": f"blindspot report card: {results['metric']['name']}",
             "tags": ["blindspot", "metric-card", "evaluation"]}
    return (f"---\n{yaml.safe_dump(front, sort_keys=False, allow_unicode=True)}---\n\n"
            + render_card(results))


__all__ = ["ALL_TASKS", "BOARD_NOTE", "CARD_FILE", "BoardRow", "CategoryCount", "board_cells",
           "board_csv", "board_header", "board_markdown", "board_row", "card_label", "card_summary",
           "category_counts", "cost_text", "hub_readme", "leaderboard", "render_card",
           "sort_choices", "summary_line"]
