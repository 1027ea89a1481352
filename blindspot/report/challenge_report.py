"""The report of a challenge-set run: per phenomenon, the benchmark's statistic beside ours."""

from __future__ import annotations

from typing import Any

from rich.table import Table

from blindspot.report import markdown as md
from blindspot.report import views
from blindspot.report.files import MARKDOWN_FILE, ReportFiles
from blindspot.report.terminal import print_signatures


def _cell(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def phenomenon_table(results: dict[str, Any], entry: dict[str, Any]) -> tuple[list[str],
                                                                               list[list[str]]]:
    """Header and rows: phenomenon, n, the benchmark's statistic, our accuracy and tau."""
    config = results["config"]
    statistic = config["statistic"]
    header = ["phenomenon", "n", f"{statistic} ({results['format'].upper()})", "accuracy",
              f"tau (ties {config['ties']})", "ties", "nan"]
    rows = [[name, str(f["n"]), _cell(f[statistic]), _cell(f["accuracy"]),
             _cell(f["kendall_like"]), str(f["ties"]), str(f["n_nan"])]
            for name, f in entry["per_phenomenon"].items()]
    for label, mean in [("mean", entry["mean"]),
                        *((f"mean ({config['group']} {g})", m)
                          for g, m in entry["by_group"].items())]:
        rows.append([f"**{label}**", f"{mean['phenomena']} phen.", _cell(mean[statistic]),
                     _cell(mean["accuracy"]), _cell(mean["kendall_like"]), "", ""])
    return header, rows


def render_markdown(results: dict[str, Any]) -> str:
    config = results["config"]
    lines = [f"# {results['format'].upper()} challenge set: preference protocol", "",
             f"- benchmark: {config['benchmark']}; its statistic `{config['statistic']}`: "
             f"{config['statistic_help']}",
             f"- ours: accuracy = hits / n (a tie is a miss); tau = Kendall-like, ties "
             f"{config['ties']} (`--protocol-option ties=excluded|discordant`)",
             f"- mode {config['mode']}: {config['preference']}", ""]
    for name, data in results["datasets"].items():
        skipped = sum(data["skipped"].values())
        lines += [f"## {name}", "", f"{data['rows']} items, {len(data['phenomena'])} phenomena"
                  + (f", {skipped} skipped (not correctly perturbed)" if skipped else ""), ""]
        for metric, entry in data["metrics"].items():
            lines += [f"### {metric}", ""]
            if entry["error"]:
                lines += [f"ERROR: {entry['error']}", ""]
                continue
            header, rows = phenomenon_table(results, entry)
            lines += ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
            lines += ["| " + " | ".join(row) + " |" for row in rows] + [""]
            lines += md.signature_lines(views.signatures({"metrics": {metric: entry}}))
    return "\n".join(lines)


def render_challenge_report(results: dict[str, Any]) -> ReportFiles:
    """The report folder: results.json and report.md."""
    return ReportFiles(results, {MARKDOWN_FILE: render_markdown(results)})


def print_summary(results: dict[str, Any], console: Any) -> None:
    """The terminal view: one table per set and metric."""
    for name, data in results["datasets"].items():
        for metric, entry in data["metrics"].items():
            if entry["error"]:
                console.print(f"{name}: {metric}: ERROR {entry['error']}", style="bold magenta")
                continue
            header, rows = phenomenon_table(results, entry)
            table = Table(title=f"{name}: {metric} ({results['format'].upper()})")
            for index, column in enumerate(header):
                table.add_column(column, justify="left" if index == 0 else "right")
            for row in rows:
                table.add_row(*(cell.strip("*") for cell in row))
            console.print(table)
            print_signatures({"metrics": {metric: entry}}, console)


__all__ = ["phenomenon_table", "print_summary", "render_challenge_report", "render_markdown"]
