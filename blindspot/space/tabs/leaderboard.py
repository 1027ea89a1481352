"""Leaderboard tab: metrics side by side by their report cards (``blindspot card``, issue 42).

One row per metric and signature: per test category the share of verdicts that pass and how many
fails lie within the noise, the check-up, the human agreement (Kendall tau) and the cost; sorted
by any of them, filtered by task or by a part of the metric's name; a row (or the card picker)
opens its card. The cards come from one of the sources the operator allows, declared here once
(:func:`card_sources`): the shipped cards (with those of the operator's folder,
``BLINDSPOT_SPACE_CARDS_DIR``), or a Hub dataset id listed in ``BLINDSPOT_SPACE_CARD_REPOS``.
A visitor picks among them; no path or URL a visitor types is ever opened.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import gradio as gr

from blindspot.demo import DEMO_TASKS
from blindspot.protocols.card import cards_in_folder, hub_cards, shipped_cards
from blindspot.report import card_report
from blindspot.space.tab import SpaceTab, register_tab

#: the operator's settings: Hub dataset ids of cards a visitor may pick (comma-separated), and a
#: folder of cards shown beside the shipped ones
REPOS_SETTING = "BLINDSPOT_SPACE_CARD_REPOS"
FOLDER_SETTING = "BLINDSPOT_SPACE_CARDS_DIR"
#: the source of the shipped cards (and the operator's folder)
SHIPPED = "shipped cards"
TASKS = (card_report.ALL_TASKS, *DEMO_TASKS)
ORDERS = ("descending", "ascending")
#: the table's height in pixels: every row of a few dozen cards at once, no inner scrolling
BOARD_HEIGHT = 3000


def card_sources(environ: Mapping[str, str] | None = None) -> list[str]:
    """The allow-list of card sources: the shipped cards, then the operator's Hub ids."""
    environ = os.environ if environ is None else environ
    repos = [r.strip() for r in environ.get(REPOS_SETTING, "").split(",") if r.strip()]
    return [SHIPPED, *repos]


def load_source(source: str, environ: Mapping[str, str] | None = None) -> list[dict[str, Any]]:
    """The cards of ``source``, which must be on the allow-list (a ValueError otherwise)."""
    environ = os.environ if environ is None else environ
    allowed = card_sources(environ)
    if source not in allowed:
        raise ValueError(f"{source!r} is not a card source of this Space; choose one of "
                         f"{', '.join(allowed)}")
    if source != SHIPPED:
        return hub_cards(source)
    folder = environ.get(FOLDER_SETTING)
    return [*(cards_in_folder(folder) if folder else []), *shipped_cards()]


@dataclass(frozen=True)
class BoardView:
    """What the tab shows of the chosen cards: the table and each row's card, in order."""

    header: list[str]
    cells: list[list[str]]
    cards: list[str]       #: each row's card.md
    labels: list[str]      #: each row's name in the card picker
    sort_choices: list[str]


def board_view(cards: Sequence[Mapping[str, Any]], task: str, sort: str | None, order: str,
               contains: str) -> BoardView:
    """The leaderboard of ``cards`` as the visitor chose it (each choice checked)."""
    if task not in TASKS:
        raise ValueError(f"task {task!r}: choose one of {', '.join(TASKS)}")
    if order not in ORDERS:
        raise ValueError(f"order {order!r}: choose {' or '.join(ORDERS)}")
    choices = card_report.sort_choices(card_report.leaderboard(cards, task))
    if sort not in choices:
        sort = None
    rows = card_report.leaderboard(cards, task, sort, order == ORDERS[0], contains or "")
    cells = card_report.board_cells(rows)
    return BoardView(card_report.board_header(rows), cells,
                     [card_report.render_card(row.card) for row in rows],
                     [f"{i + 1}. {row.metric}" for i, row in enumerate(rows)], choices)


#: the width of each kind of column, in pixels (the figures narrow, the signature wide)
WIDTHS = {"metric": 230, "tasks": 210, "signature": 720}
FIGURE_WIDTH = 95


def column_widths(header: Sequence[str]) -> list[str]:
    """Each column's width, so the figures' headers read on one or two lines."""
    return [f"{WIDTHS.get(name, FIGURE_WIDTH)}px" for name in header]


def build(context: Any) -> None:
    """The tab's components and events."""
    sources = card_sources()
    gr.Markdown("Metrics by their report cards (`blindspot card METRIC`): per test category the "
                "share of verdicts that pass and (~) the fails within the noise, the check-up, "
                "the agreement with human judgments and the cost. Pick a row to read its card.",
                elem_id="board-intro")
    with gr.Row():
        source = gr.Dropdown(sources, value=SHIPPED, label="Cards", elem_id="board-source")
        task = gr.Dropdown(list(TASKS), value=card_report.ALL_TASKS, label="Task",
                           elem_id="board-task")
        sort = gr.Dropdown([], label="Sort by", elem_id="board-sort")
        order = gr.Radio(list(ORDERS), value=ORDERS[0], label="Order", elem_id="board-order")
        contains = gr.Textbox(label="Metric contains", elem_id="board-filter")
    status = gr.Markdown(elem_id="board-status")
    table = gr.Dataframe(interactive=False, wrap=True, label="Leaderboard", max_height=BOARD_HEIGHT,
                         elem_id="board-table")
    picker = gr.Dropdown([], label="Open the card of", elem_id="board-pick")
    card = gr.Markdown(elem_id="board-card")
    loaded = gr.State([])
    shown = gr.State(None)

    def on_source(chosen: str) -> list[dict[str, Any]]:
        try:
            return load_source(chosen)
        except ValueError as error:
            raise gr.Error(str(error)) from None

    def on_view(cards: list[dict[str, Any]], task_in: str, sort_in: str | None, order_in: str,
                contains_in: str) -> tuple[Any, ...]:
        try:
            view = board_view(cards, task_in, sort_in, order_in, contains_in)
        except ValueError as error:
            raise gr.Error(str(error)) from None
        picked = sort_in if sort_in in view.sort_choices else view.sort_choices[1] \
            if len(view.sort_choices) > 1 else None
        return (f"{len(view.cells)} metric{'s' if len(view.cells) != 1 else ''} "
                f"({task_in}).", gr.update(value=view.cells, headers=view.header,
                                           column_widths=column_widths(view.header)),
                gr.update(choices=view.sort_choices, value=picked),
                gr.update(choices=view.labels, value=None), view, "")

    def open_row(view: BoardView | None, index: int) -> str:
        if view is None or not 0 <= index < len(view.cards):
            return ""
        return view.cards[index]

    def on_select(view: BoardView | None, event: gr.SelectData) -> str:
        return open_row(view, event.index[0])

    def on_pick(view: BoardView | None, label: str | None) -> str:
        if view is None or label not in view.labels:
            return ""
        return open_row(view, view.labels.index(label))

    inputs = [loaded, task, sort, order, contains]
    outputs = [status, table, sort, picker, shown, card]
    context.demo.load(on_source, source, loaded).then(on_view, inputs, outputs)
    source.change(on_source, source, loaded).then(on_view, inputs, outputs)
    for control in (task, sort, order):
        control.input(on_view, inputs, outputs)
    contains.submit(on_view, inputs, outputs)
    table.select(on_select, shown, card)
    picker.input(on_pick, [shown, picker], card)


TAB = register_tab(SpaceTab("leaderboard", "Leaderboard of metrics", build, 50))
