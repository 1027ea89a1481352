"""The search's report folder: ``results.json``, ``report.md`` (section "Blind spots found by
search") and ``search.png`` (each metric's mean relative change on the perturbed texts).

results.json layout (strict JSON; no timings, no absolute paths)::

    {"schema_version": 1, "protocol": "search", "tool": {...},
     "config": {"metric": <spec>, "panel": [<spec>...], "noise_ratio": 0.1, "seed": 0,
                "task": .., "dataset": .., "rows": .., "columns": {...},
                "candidates": {"mlm": null | name, "embedding": "minilm", "k": 8, "note": ..}},
     "budget": {"max_calls": .., "max_seconds": .., "calls_used": .., "stopped_by": null |
                "max_calls" | "max_seconds"},
     "summary": {"examples": .., "reached": .., "statuses": {..}, "mean_noise_ratio": ..,
                 "mean_edits": .., "metrics": {"<name>": {"role": "target" | "panel",
                                                         "signature": "blindspot:..|..",
                                                         "gold": <mean %>,
                                                         "references": <mean %>}}},
     "patterns": [{"rank": 1, "pattern": "article_swap", "description": .., "count": ..,
                   "examples": .., "mean_score_change": .., "pairs": [{"edit": "a -> an",
                   "count": ..}]}],
     "examples": [{"id": .., "gold": .., "perturbed": .., "status": "reached" | "no_candidates" |
                   "budget" | "empty", "noise_ratio": .., "calls": .., "gold_score": ..,
                   "score": .., "relative_change": ..,
                   "trail": [{"step": 1, "op": "replace" | "delete", "position": <gold word>,
                              "old": .., "new": .., "source": "mlm" | "embedding" | ..,
                              "pattern": .., "score": .., "relative_change": ..,
                              "score_change": .., "noise_ratio": .., "text": ..}],
                   "metrics": {"<name>": {"gold": {"gold": .., "perturbed": ..,
                                                   "relative_change": ..},
                                          "references": {...}}}}],
     "generalisation": null | {"test": <registered name>, "rules": {...}, "rows": ..,
                               "seeds": [..], "generalises": true | false | null,
                               "metrics": {"<name>": {"status": .., "relative_change": ..,
                                                     "noise_ratio": ..,
                                                     "fraction_noised_ge_gold": ..}}}}

Scores are higher-is-better (TER negated); relative changes are in percent of the gold's score.
Summary means are over the examples whose search reached the target noise ratio.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from matplotlib.figure import Figure

from blindspot.report.files import MARKDOWN_FILE, ReportFiles
from blindspot.report.markdown import escape, signature_lines, table
from blindspot.report.plots import render_png
from blindspot.report.views import signatures

PLOT_FILE = "search.png"
TARGET_COLOR, PANEL_COLOR = "#d62728", "#1f77b4"


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value:+.2f}%"


def _edit(step: Mapping[str, Any]) -> str:
    new = "(deleted)" if step["new"] is None else step["new"]
    return f"{step['old']} → {new} [{step['pattern']}]"


def metric_table(results: Mapping[str, Any]) -> list[str]:
    """The mean relative change of every metric on the perturbed texts, target first."""
    rows = [[name, entry["role"], _pct(entry.get("gold")), _pct(entry.get("references"))]
            for name, entry in results["summary"]["metrics"].items()]
    return table(["metric", "role", "vs. gold", "vs. references"], rows)


def pattern_table(results: Mapping[str, Any], top: int = 10) -> list[str]:
    rows = [[str(p["rank"]), p["pattern"], str(p["count"]), str(p["examples"]),
             _pct(p["mean_score_change"]),
             ", ".join(f"{x['edit']} ×{x['count']}" for x in p["pairs"][:3])]
            for p in results["patterns"][:top]]
    return table(["rank", "pattern", "edits", "examples", "mean score change", "most frequent"],
                 rows)


def example_lines(results: Mapping[str, Any], top: int = 8) -> list[str]:
    """The perturbed examples the targeted metric penalised least."""
    changed = [e for e in results["examples"] if e["trail"] and e["relative_change"] is not None]
    changed.sort(key=lambda e: (-e["relative_change"], str(e["id"])))
    lines = []
    for example in changed[:top]:
        edits = "; ".join(_edit(s) for s in example["trail"])
        lines.append(f"- {escape(example['id'])} ({_pct(example['relative_change'])}): "
                     f"{escape(example['perturbed'])}  \n  edits: {escape(edits)}")
    return lines


def generalisation_lines(results: Mapping[str, Any]) -> list[str]:
    found = results.get("generalisation")
    if not found:
        return ["Not run (`--generalise` turns the top patterns into a perturbation and runs the "
                "rank protocol with it on the whole dataset)."]
    verdict = {True: "**yes**: the targeted metric fails the rank protocol on the rules",
               False: "**no**: the targeted metric penalises the rules on the whole dataset",
               None: "undecided"}[found["generalises"]]
    lines = [f"Rules `{found['test']}` from patterns {', '.join(found['rules']['patterns'])}, "
             f"rank protocol on all {found['rows']} rows (seeds {found['seeds']}).",
             f"Do the patterns generalise? {verdict}.", ""]
    rows = []
    for name, view in found["metrics"].items():
        share = view.get("fraction_noised_ge_gold")
        ratio = view.get("noise_ratio")
        rows.append([name, str(view["status"]), _pct(view.get("relative_change")),
                     "n/a" if ratio is None else f"{ratio:.3f}",
                     "n/a" if share is None else f"{share:.0%}"])
    return lines + table(["metric", "rank verdict", "relative change", "noise ratio",
                          "noised ≥ gold (all rows)"], rows)


def search_markdown(results: Mapping[str, Any]) -> str:
    """The section "Blind spots found by search" (also embeddable in other reports)."""
    config, summary, budget = results["config"], results["summary"], results["budget"]
    ratio = summary["mean_noise_ratio"]
    lines = [
        "## Blind spots found by search", "",
        f"Greedy search against **{config['metric']['name']}** on {config['rows']} golds of "
        f"`{config['dataset']}`, target noise ratio {config['noise_ratio']:g}, seed "
        f"{config['seed']}: {summary['reached']} of {summary['examples']} reached it "
        f"(mean noise ratio {'n/a' if ratio is None else f'{ratio:.3f}'}); statuses "
        f"{summary['statuses']}.",
        f"Budget: {budget['calls_used']} metric calls (max {budget['max_calls']}, max seconds "
        f"{budget['max_seconds']}); stopped by: {budget['stopped_by'] or 'nothing (finished)'}.",
        f"Candidates: masked LM {config['candidates']['mlm'] or '—'}, embedding neighbours "
        f"{config['candidates']['embedding'] or '—'}, k = {config['candidates']['k']}."
        + (f" Note: {config['candidates']['note']}." if config['candidates']['note'] else ""),
        "", "### Relative change on the perturbed texts (mean over reached examples)", "",
        *metric_table(results), "", *signature_lines(signatures(results["summary"])),
        f"![relative changes]({PLOT_FILE})", "",
        "### Edit patterns that fool the metric", "", *pattern_table(results), "",
        "### Examples the metric penalises least", "", *example_lines(results), "",
        "### Do the patterns generalise?", "", *generalisation_lines(results), ""]
    return "\n".join(lines)


def build_figure(results: Mapping[str, Any]) -> Figure:
    """Bars: each metric's mean relative change (vs. gold) on the perturbed texts."""
    metrics = results["summary"]["metrics"]
    names = list(metrics)
    values = [metrics[n].get("gold") or 0.0 for n in names]
    colors = [TARGET_COLOR if metrics[n]["role"] == "target" else PANEL_COLOR for n in names]
    figure = Figure(figsize=(1.2 * len(names) + 2.5, 3.4), dpi=100, layout="constrained")
    ax = figure.subplots()
    ax.bar(range(len(names)), values, color=colors)
    ax.set_xticks(range(len(names)), names, rotation=20, ha="right", fontsize=8)
    ax.axhline(0, color="#333333", linewidth=0.8)
    ax.set_ylabel("mean relative change (%)", fontsize=8)
    ax.set_title(f"search against {results['config']['metric']['name']} "
                 f"(noise ratio {results['config']['noise_ratio']:g}; red = target)", fontsize=9)
    return figure


def render_search_report(results: Mapping[str, Any],
                         folders: Mapping[str, ReportFiles] | None = None) -> ReportFiles:
    """The report folder: results.json, report.md, the plot and any nested report ``folders``
    (the generalisation's rank report)."""
    return ReportFiles(results, {
        MARKDOWN_FILE: "# blindspot search report\n\n" + search_markdown(results),
        PLOT_FILE: render_png(build_figure(results))}, folders or {})
