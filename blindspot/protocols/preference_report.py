"""The report folder of a preference run: results.json, report.md, a bar plot per set, report.html.

``results.json`` layout (plain JSON, no timestamps or absolute paths: equal inputs give equal
bytes; dict keys keep the run's order)::

    {
      "schema_version": 1,
      "protocol": "preference",
      "tool": {"name": "blindspot", "version": "0.1.0"},
      "config": {
        "mode": "ref-based" | "ref-free",
        "preference": "m(ref, hyp_para) > m(ref, hyp_adv_based)",   # what a hit is
        "fixed": false,                       # true: hyp_para/hyp_adv_based from *_fixed
        "columns": {"anchor": "ref", "paraphrase": "hyp_para", "adversarial": "hyp_adv_based"},
                                              # the file's columns read (hyp_para_fixed... when fixed)
        "error_types": null | ["add", ...],   # the types asked for (null: all present)
        "adequacy_types": [9 types], "fluency_types": ["typo", "jumble", "subject_verb_dis"],
        "combine_with": null | "<metric N>", "weight": null | w,
        "examples": 1,                        # failed pairs kept per error type and metric
        "metrics": [<metric spec>, ...]       # as blindspot.runner.metric_spec.MetricSpec.as_json
      },
      "datasets": {
        "<set name, e.g. the file name>": {
          "rows": 2400,                       # rows in the set
          "judged": 2400,                     # rows of the error types asked for
          "fingerprint": "<sha256 of the judged rows' columns read>",
          "error_types": {"add": 200, ...},   # rows judged per type, MENLI's order
          "metrics": {
            "<metric display name, e.g. bleu.bleu | 0.2*N+0.8*M for a combination>": {
              "metric": "bleu", "output": "bleu", "options": {...},   # as given
              "scorer_config": {...} | null,  # every scorer setting, defaults included
                                              # (rouge: rouge_types, use_stemmer, measure)
              "higher_is_better": true,       # false: negated before comparing (TER)
              "combination": null | {"other": N, "metric": M, "weight": w},
              "error": null | "message",      # the metric could not score: no figures
              "mean": 0.21,                   # unweighted mean of the per-type accuracies
              "adequacy": .., "fluency": ..,  # means over the adequacy / fluency types present
              "kendall_like": ..,             # (hits - misses) / (hits + misses), all pairs
              "error_types": 12, "n": 2400, "hits": .., "misses": .., "ties": .., "n_nan": ..,
              "per_type": {"add": {"n": 200, "hits": .., "misses": .., "ties": .., "n_nan": ..,
                                   "accuracy": .., "kendall_like": ..}, ...},
              "examples": {"add": [           # failed pairs, largest win of the attack first
                {"id": .., "anchor": "...", "paraphrase": "...", "adversarial": "...",
                 "para_score": .., "adv_score": ..}], ...}
            }}}}
    }

Accuracy is hits / n with strict ``>`` (ties and NaN pairs fail); figures that cannot be
computed (no pair, every pair tied) are null.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from matplotlib.figure import Figure
from rich.console import Console
from rich.table import Table

from blindspot.protocols.preference import ADEQUACY_TYPES, FLUENCY_TYPES
from blindspot.report import html, views
from blindspot.report import markdown as md
from blindspot.report.challenge_report import print_summary as challenge_summary
from blindspot.report.files import HTML_FILE, MARKDOWN_FILE, PLOT_FOLDER, ReportFiles, slugify
from blindspot.report.plots import render_png
from blindspot.report.terminal import print_signatures
from blindspot.report.views import MISSING, number, shorten

SUMMARY_ROWS = ("mean", "adequacy", "fluency", "kendall_like")
DECIMALS = 3


# -- tables (shared by markdown, HTML and the terminal) ------------------------------------------

def type_label(error_type: str) -> str:
    """An error type with its group: ``typo (fluency)``."""
    return f"{error_type} ({'fluency' if error_type in FLUENCY_TYPES else 'adequacy'})"


def accuracy_table(data: Mapping[str, Any]) -> tuple[list[str], list[list[str]]]:
    """(header, rows): error type x metric accuracies, then the summary rows."""
    metrics = data["metrics"]
    header = ["error type", *metrics]
    rows = []
    for error_type in data["error_types"]:
        rows.append([type_label(error_type), *(
            number(e["per_type"][error_type]["accuracy"], DECIMALS)
            if error_type in e["per_type"] else MISSING for e in metrics.values())])
    for key in SUMMARY_ROWS:
        rows.append([summary_label(key, data["error_types"]),
                     *(number(e[key], DECIMALS) for e in metrics.values())])
    return header, rows


def summary_label(key: str, error_types: Mapping[str, int]) -> str:
    """``adequacy (mean of 9 types)``: a summary row's label with the types behind it."""
    groups = {"mean": list(error_types),
              "adequacy": [t for t in error_types if t in ADEQUACY_TYPES],
              "fluency": [t for t in error_types if t in FLUENCY_TYPES]}
    if key not in groups:
        return "Kendall-like (all pairs, ties excluded)"
    count = len(groups[key])
    return f"{key} (mean of {count} type{'' if count == 1 else 's'})"


def rows_line(data: Mapping[str, Any]) -> str:
    """``2400 rows`` or ``2400 rows, 400 judged``."""
    judged = data.get("judged", data["rows"])
    return f"{data['rows']} rows" + (f", {judged} judged" if judged != data["rows"] else "")


def count_lines(data: Mapping[str, Any]) -> list[str]:
    """One line per metric: pairs, hits, misses, ties, NaN pairs, or its error."""
    lines = []
    for name, entry in data["metrics"].items():
        if entry["error"]:
            lines.append(f"{name}: ERROR {entry['error']}")
        else:
            settings = ", ".join(f"{k}={v}" for k, v in (entry["scorer_config"] or {}).items())
            lines.append(f"{name}: {entry['n']} pairs, {entry['hits']} hits, {entry['misses']} "
                         f"misses, {entry['ties']} ties, {entry['n_nan']} with a NaN score"
                         + (f" (scorer settings: {settings})" if settings else ""))
    return lines


EXAMPLE_HEADER = ("error type", "id", "paraphrase score", "adversarial score", "paraphrase",
                  "adversarial")


def example_rows(entry: Mapping[str, Any]) -> list[list[str]]:
    """One row per kept failed pair of a metric: its scores and both candidates (shortened)."""
    return [[error_type, str(e["id"]), number(e["para_score"]), number(e["adv_score"]),
             shorten(e["paraphrase"]), shorten(e["adversarial"])]
            for error_type, examples in entry.get("examples", {}).items() for e in examples]


def config_lines(results: Mapping[str, Any]) -> list[str]:
    """The run's settings as sentences."""
    config = results["config"]
    lines = [f"mode: {config['mode']}: a hit is {config['preference']} (strict: ties fail)",
             f"texts: {'*_fixed columns' if config['fixed'] else 'original columns'}",
             f"error types: {', '.join(config['error_types'] or ['all present'])}"]
    if config["combine_with"]:
        w = config["weight"]
        lines.append(f"combination: {w:g} * minmax({config['combine_with']}) + {1 - w:g} * "
                     f"minmax(M), min-max over each set's paraphrase and adversarial scores")
    return lines


# -- markdown -------------------------------------------------------------------------------------

def render_markdown(results: Mapping[str, Any], plots: Mapping[str, str]) -> str:
    """report.md: settings, then per set the accuracy table, counts and plot."""
    parts = ["# Preference accuracy report (MENLI protocol)", "",
             *(f"- {line}" for line in config_lines(results)), ""]
    for name, data in results["datasets"].items():
        parts += [f"## {name} ({rows_line(data)})", "", "Accuracy (hits / pairs):", "",
                  *md.table(*accuracy_table(data)), "",
                  *md.signature_lines(views.signatures(data)),
                  *(f"- {x}" for x in count_lines(data)), ""]
        if name in plots:
            parts += [f"![{name}]({plots[name]})", ""]
        for metric, entry in data["metrics"].items():
            rows = example_rows(entry)
            if rows:
                parts += [f"### {metric}: failed pairs (the attack won by most)", "",
                          *md.table(EXAMPLE_HEADER, rows), ""]
    return "\n".join(parts)


# -- plot -----------------------------------------------------------------------------------------

def build_figure(name: str, data: Mapping[str, Any]) -> Figure:
    """Grouped bars: per error type, one bar per metric (its accuracy); a line at 0.5."""
    types = list(data["error_types"])
    metrics = {m: e for m, e in data["metrics"].items() if not e["error"]}
    figure = Figure(figsize=(max(6.0, 0.8 * len(types) + 2), 4.0), dpi=100,
                    layout="constrained")
    ax = figure.add_subplot()
    width = 0.8 / max(1, len(metrics))
    for k, (metric, entry) in enumerate(metrics.items()):
        values = [entry["per_type"].get(t, {}).get("accuracy") or 0.0 for t in types]
        ax.bar([i + (k - (len(metrics) - 1) / 2) * width for i in range(len(types))], values,
               width=width, label=metric)
    ax.axhline(0.5, color="#999999", linestyle=":", linewidth=1)
    ax.set_xticks(range(len(types)), types, rotation=45, ha="right", fontsize=8)
    ax.set_ylim(0, 1)
    ax.set_ylabel("preference accuracy")
    ax.set_title(f"{name}: accuracy per error type ({len(ADEQUACY_TYPES)} adequacy, "
                 f"{len(FLUENCY_TYPES)} fluency types)", fontsize=10)
    if metrics:
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return figure


def plot_names(results: Mapping[str, Any]) -> dict[str, str]:
    """Set name -> its plot's path in the report folder (``plots/<n>-<set>.png``)."""
    return {name: f"{PLOT_FOLDER}/{index + 1:02d}-{slugify(name)}.png"
            for index, name in enumerate(results["datasets"])}


# -- html -----------------------------------------------------------------------------------------

def render_html(results: Mapping[str, Any], images: Mapping[str, bytes]) -> str:
    """One self-contained page: the same tables, the plots (set name -> PNG) embedded."""
    sections = []
    for name, data in results["datasets"].items():
        image = (f'<p><img alt="{html.esc(name)}" src="{html.data_uri(images[name])}"></p>'
                 if name in images else "")
        examples = "".join(
            f"<details><summary>{html.esc(metric)}: failed pairs</summary>"
            f"{html.table(EXAMPLE_HEADER, example_rows(entry))}</details>"
            for metric, entry in data["metrics"].items() if example_rows(entry))
        sections.append(f"<section><h2>{html.esc(name)} ({html.esc(rows_line(data))})</h2>"
                        f"{html.table(*accuracy_table(data))}"
                        f"{html.signature_list(views.signatures(data))}"
                        f"{html.lines_list(count_lines(data))}{image}{examples}</section>")
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>Preference accuracy report</title><style>{html.STYLE}</style></head><body>"
            "<h1>Preference accuracy report (MENLI protocol)</h1>"
            f"{html.lines_list(config_lines(results))}{''.join(sections)}</body></html>\n")


def render_preference_report(results: dict[str, Any]) -> ReportFiles:
    """The report folder: results.json, report.md, report.html and one bar plot per set."""
    names = plot_names(results)
    images = {name: render_png(build_figure(name, data))
              for name, data in results["datasets"].items()}
    return ReportFiles(results, {MARKDOWN_FILE: render_markdown(results, names),
                                 HTML_FILE: render_html(results, images),
                                 **{names[name]: png for name, png in images.items()}})


def print_summary(results: dict[str, Any], console: Any = None) -> None:
    """The terminal view: per set, the accuracy table and the counts."""
    console = console or Console()
    if results.get("format", "menli") != "menli":
        challenge_summary(results, console)
        return
    for line in config_lines(results):
        console.print(line)
    for name, data in results["datasets"].items():
        header, rows = accuracy_table(data)
        table = Table(title=f"{name} ({rows_line(data)}): preference accuracy")
        for index, column in enumerate(header):
            table.add_column(column, justify="left" if index == 0 else "right")
        for row in rows:
            table.add_row(*row)
        console.print(table)
        print_signatures(data, console)
        for line in count_lines(data):
            console.print(line, style="bold magenta" if ": ERROR" in line else None)


__all__ = ["accuracy_table", "build_figure", "plot_names", "print_summary", "render_html",
           "render_markdown", "render_preference_report"]
