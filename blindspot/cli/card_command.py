"""``blindspot card``: a metric's report card, and the leaderboard of cards.

``blindspot card METRIC`` runs the ``card`` protocol (:mod:`blindspot.protocols.card`) through
:func:`blindspot.cli._protocol.run_job`, its settings the protocol's declared options
(:data:`blindspot.protocols.declarations.CARD`); the card goes to ``--out`` (default
``cards/<metric>``), then the leaderboard shows it beside the shipped cards, and ``--push
ORG/NAME`` publishes the folder as a Hub dataset repository, as ``build-dataset --push`` does.
``blindspot card --leaderboard DIR`` prints the leaderboard of the cards in DIR (a folder, or a
Hub dataset id) and the shipped ones, as a table, markdown or CSV.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer
from rich.table import Table

from blindspot.cli._declared import declared_options
from blindspot.cli._options import (
    HYPOTHESIS_COLUMN,
    ID_COLUMN,
    METRIC_OPTION,
    REFERENCES_COLUMN,
    SEEDS_TEXT,
    SOURCE_COLUMN,
    SPLIT,
    parse_options,
)
from blindspot.cli._protocol import console, run_job, seeds_option
from blindspot.cli.build_dataset_command import PUSH, PUSH_GIT, push_and_report
from blindspot.errors import message
from blindspot.exit_codes import ExitCode, fail
from blindspot.protocols.declarations import CARD
from blindspot.report.files import RESULTS_FILE, ReportFiles, slugify, write_folder

#: the folder cards go to without ``--out``: ``cards/<metric>``
CARDS_FOLDER = Path("cards")
#: how ``--leaderboard`` prints the table
FORMATS = ("table", "markdown", "csv")


@declared_options(CARD, "tasks", "rows", "checkup_rows", "max_words", "human",
                  "human_references", "human_documents", "bootstrap", "reports")
def card(
    metric: str | None = typer.Argument(None, help="the metric: a spec (rouge, "
                                        "bertscore@minilm), my_metric.py:function, "
                                        "./module_folder/ or org/hub_module"),
    data: str = typer.Option("demo", "--data", help="jsonl/csv/parquet file or Hub id (default: "
                             "the demo tasks the metric applies to)"),
    task: str | None = typer.Option(None, help="the task of --data (default summarization; "
                                    "on the demo: that demo task only); with --leaderboard: "
                                    "show this task's figures only"),
    tests: str = typer.Option("all", help="suites and/or test names, comma-separated"),
    seeds: str = typer.Option(SEEDS_TEXT, help="seeds of the random tests"),
    out: Path | None = typer.Option(None, "--out", help="the card's folder (default: "
                                    "cards/<metric>); it keeps the runs' state in .state"),
    option: list[str] = METRIC_OPTION,
    split: str = SPLIT,
    hypothesis_column: str | None = HYPOTHESIS_COLUMN,
    references_column: str | None = REFERENCES_COLUMN,
    source_column: str | None = SOURCE_COLUMN,
    id_column: str | None = ID_COLUMN,
    push: str | None = PUSH,
    push_git: str | None = PUSH_GIT,
    version: str = typer.Option("1.0.0", "--version", help="with --push: the card's version "
                                "(the tag v<version>)"),
    private: bool = typer.Option(False, "--private", help="with --push: create the repository "
                                 "as private"),
    leaderboard: str | None = typer.Option(None, "--leaderboard", metavar="DIR", help="print "
                                           "the leaderboard of the cards in DIR (a folder, or a "
                                           "Hub dataset id) instead of making a card"),
    shipped: bool = typer.Option(True, "--shipped/--no-shipped", help="the leaderboard shows "
                                 "the shipped cards too"),
    sort: str | None = typer.Option(None, help="leaderboard: sort by metric, a category, "
                                    "check-up, human tau or cost (default: the first category)"),
    board_format: str = typer.Option("table", "--format", help="leaderboard: table, markdown or "
                                     "csv"),
    options: dict[str, Any] | None = None,
) -> None:
    """A metric's report card (blind spots per category, check-up, human agreement, judge
    audits, cost, worst examples), or with --leaderboard the table of cards."""
    if board_format not in FORMATS:
        fail(f"--format {board_format!r}: choose one of {', '.join(FORMATS)}")
    if leaderboard is not None:
        if metric is not None:
            fail("give a METRIC to make its card, or --leaderboard DIR to compare cards, not both")
        _print_board(_cards(leaderboard, shipped), task, sort, board_format)
        raise typer.Exit(code=ExitCode.JUDGED)
    if push_git is not None and push is None:
        fail("--push-git needs --push ORG/NAME (the repository to commit into)")
    if metric is None and push is not None and out is not None:  # a card made before
        _push(out, _written(out), push, push_git, version, private)
        raise typer.Exit(code=ExitCode.JUDGED)
    if metric is None:
        fail("give the METRIC to make a card of (e.g. blindspot card rouge), --leaderboard DIR "
             "to compare cards, or --out DIR --push ORG/NAME to publish a card made before")
    options = dict(options or {})
    if data == "demo" and task is not None:  # --task on the demo: that demo task only
        options.setdefault("tasks", task)
    folder = out or CARDS_FOLDER / slugify(_metric_name(metric, option))
    columns = {"hypothesis": hypothesis_column, "references": references_column,
               "source": source_column, "id": id_column}
    try:
        run_job(CARD.name, folder, data=data, metrics=metric, task=task or "summarization",
                tests=tests, seeds=seeds_option(seeds), columns=columns, split=split,
                metric_options=parse_options(option), options=options)
    except typer.Exit as done:
        if done.exit_code not in (ExitCode.JUDGED, ExitCode.TESTS_IN_ERROR):
            raise
        _after_card(folder, shipped, board_format, push, push_git, version, private)
        raise


def _metric_name(metric: str, option: list[str]) -> str:
    """The metric's display name (the card's default folder)."""
    from blindspot.runner.metric_spec import resolve_metrics  # loads a user's metric file

    try:
        return resolve_metrics(metric, parse_options(option))[0].name
    except (ValueError, KeyError) as error:
        fail(str(error).strip("'\""))


def _cards(source: str, shipped: bool) -> list[dict[str, Any]]:
    """The cards of ``source`` and, with ``shipped``, the shipped ones."""
    from blindspot.protocols.card import load_cards, shipped_cards  # the protocol layer

    try:
        return [*load_cards(source), *(shipped_cards() if shipped else [])]
    except ValueError as error:
        fail(str(error))


def _print_board(cards: list[dict[str, Any]], task: str | None, sort: str | None,
                 board_format: str) -> None:
    from blindspot.report import card_report

    try:
        rows = card_report.leaderboard(cards, task, sort)
    except ValueError as error:
        fail(str(error))
    if board_format == "csv":
        typer.echo(card_report.board_csv(rows), nl=False)
    elif board_format == "markdown":
        typer.echo(card_report.board_markdown(rows), nl=False)
    else:
        table = Table(title=f"leaderboard of {len(rows)} metric cards"
                            + (f" ({task})" if task else ""))
        for column in card_report.board_header(rows)[:-1]:  # signatures: in the cards
            table.add_column(column, overflow="fold")
        for cells in card_report.board_cells(rows):
            table.add_row(*cells[:-1])
        console.print(table)
        console.print(card_report.BOARD_NOTE, markup=False, highlight=False)


def _written(folder: Path) -> dict[str, Any]:
    """The card in ``folder``; none there is one line and exit 1."""
    from blindspot.protocols.card import read_card

    path = folder / RESULTS_FILE
    try:
        found = read_card(path) if path.is_file() else None
    except ValueError as error:
        fail(str(error))
    if found is None:
        fail(f"{folder}: no card there (no results.json of `blindspot card`); make it with "
             f"`blindspot card METRIC --out {folder}`")
    return found


def _after_card(folder: Path, shipped: bool, board_format: str, push: str | None,
                push_git: str | None, version: str, private: bool) -> None:
    """The written card beside the shipped ones on the leaderboard, then its push."""
    from blindspot.protocols.card import shipped_cards

    written = _written(folder)
    try:
        others = shipped_cards() if shipped else []
    except ValueError as error:
        fail(str(error))
    _print_board([written, *others], None, None, board_format)
    if push is not None or push_git is not None:
        _push(folder, written, push, push_git, version, private)


def _push(folder: Path, written: dict[str, Any], push: str | None, push_git: str | None,
          version: str, private: bool) -> None:
    """Write the Hub repository's README and build record beside the card, then push the
    folder as ``build-dataset --push`` pushes a set."""
    from blindspot.datasets_scripts.build_adversarial import (  # datasets, huggingface_hub
        BUILD_FILE,
        CARD_FILE,
        check_version,
        full_version,
    )
    from blindspot.report.card_report import hub_readme

    try:
        record = {"title": "blindspot report card", "metric": written["metric"]["name"],
                  "version": check_version(version), "fingerprint": written["fingerprint"],
                  "full_version": full_version(version, written["fingerprint"])}
    except ValueError as error:
        fail(message(error))
    write_folder(ReportFiles(written, {CARD_FILE: hub_readme(written),
                                       BUILD_FILE: json.dumps(record, indent=2) + "\n"}), folder)
    push_and_report(folder, push, push_git, private)
