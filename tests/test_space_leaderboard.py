"""The Space's leaderboard tab in a real headless Chromium (Debian's, driven by Playwright, as
tests/test_space_browser.py): a user's function metric, given a card by one command, is on the
board beside the shipped cards; the board sorts, filters by task and by name, and a row opens its
card. What a visitor picks is checked against the tab's allow-list (no path or URL a visitor
types is opened)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from space_support import served_space
from test_space_browser import CHROMIUM, CHROMIUM_ARGS, _open_tab, _pick, _shot
from typer.testing import CliRunner

from blindspot.cli import app
from blindspot.protocols.card import cards_in_folder, shipped_cards
from blindspot.report.card_report import leaderboard
from blindspot.space.tabs.leaderboard import FOLDER_SETTING, REPOS_SETTING, SHIPPED, load_source

#: one xdist group: its module fixtures (the cards folder and the served board)
#: are set up once, not once per worker
pytestmark = pytest.mark.xdist_group("space_leaderboard")

TAB = "Leaderboard of metrics"
METRIC = ("from statistics import fmean\n\n\n"
          "def length_ratio(predictions, references):\n"
          "    return [len(p.split()) / fmean(len(r.split()) for r in refs)\n"
          "            for p, refs in zip(predictions, references)]\n")


@pytest.fixture(scope="module")
def cards(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding the card of a user's function metric, made by one command."""
    root = tmp_path_factory.mktemp("leaderboard")
    (root / "my_metric.py").write_text(METRIC, encoding="utf-8")
    here = Path.cwd()
    os.chdir(root)
    try:
        result = CliRunner().invoke(app, [
            "card", "my_metric.py:length_ratio", "--tasks", "summarization", "--rows", "3",
            "--tests", "truncation", "--seeds", "1", "--checkup-rows", "2", "--max-words", "32",
            "--no-shipped"])
    finally:
        os.chdir(here)
    assert result.exit_code == 0, result.output[-3000:]
    return root / "cards"


@pytest.fixture(scope="module")
def page(cards: Path) -> Iterator[object]:
    """The Space served by the real command, the operator's folder of cards set, in a browser."""
    if not Path(CHROMIUM).is_file():
        pytest.fail(f"{CHROMIUM} is missing: `make browser` (as root) installs Debian's chromium")
    from playwright.sync_api import sync_playwright

    root = cards.parent
    with served_space([], root, root / "space.log", env={FOLDER_SETTING: str(cards)}) as url, \
            sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        context = browser.new_context(viewport={"width": 1400, "height": 900})
        tab = context.new_page()
        tab.goto(url)
        tab.wait_for_selector("#perturb-button", timeout=60_000)
        _open_tab(tab, TAB)
        yield tab
        browser.close()


def _rows(page) -> object:
    """The table's rows (gradio's dataframe draws each as a ``virtual-row``)."""
    return page.locator("#board-table .virtual-row")


def _first_cells(page) -> list[str]:
    """The metric (first) cell of every row shown."""
    return [text.strip() for text in
            page.locator("#board-table .virtual-row [data-col='0']").all_inner_texts()]


def test_the_users_metric_is_on_the_board_beside_the_shipped_cards(page, cards: Path) -> None:
    from playwright.sync_api import expect

    shipped = shipped_cards()
    expected = leaderboard([*cards_in_folder(cards), *shipped])
    expect(page.locator("#board-status")).to_contain_text(f"{len(expected)} metrics (all)",
                                                          timeout=60_000)
    assert len(shipped) >= 20 and "length_ratio" in _first_cells(page)
    assert _first_cells(page) == [row.metric for row in expected]
    _shot(page, "20-leaderboard")


def test_the_board_sorts_and_filters(page, cards: Path) -> None:
    from playwright.sync_api import expect

    every = [*cards_in_folder(cards), *shipped_cards()]
    _pick(page, "board-sort", "metric")
    page.locator("#board-order").get_by_text("ascending", exact=True).click()
    names = [row.metric for row in leaderboard(every, None, "metric", False)]
    expect(page.locator("#board-table [data-testid='cell-0-0']")).to_have_text(names[0],
                                                                               timeout=30_000)
    assert _first_cells(page) == names == sorted(names)
    _pick(page, "board-task", "open_ended")
    expected = [row.metric for row in leaderboard(every, "open_ended", "metric", False)]
    expect(page.locator("#board-status")).to_contain_text(f"{len(expected)} metrics "
                                                          "(open_ended)", timeout=30_000)
    assert _first_cells(page) == expected and "rouge.rougeL" not in expected
    _pick(page, "board-task", "all")
    search = page.locator("#board-filter textarea, #board-filter input").first
    search.fill("rouge")
    search.press("Enter")
    expect(_rows(page)).to_have_count(sum("rouge" in name for name in names), timeout=30_000)
    assert all("rouge" in name for name in _first_cells(page))
    _shot(page, "21-leaderboard-sorted-filtered")
    search.fill("")
    search.press("Enter")
    expect(_rows(page)).to_have_count(len(names), timeout=30_000)  # the whole board again


def test_a_row_opens_its_card(page) -> None:
    from playwright.sync_api import expect

    expect(_rows(page).first).to_be_visible(timeout=30_000)
    name = _first_cells(page)[0]
    page.locator("#board-table [data-testid='cell-0-0']").click()
    card = page.locator("#board-card")
    expect(card).to_contain_text(f"Report card: {name.split(' (')[0]}", timeout=30_000)
    for section in ("Summary", "Verdict matrix", "Hygiene checks", "Cost"):
        expect(card).to_contain_text(section)
    _shot(page, "22-leaderboard-card")


def test_a_visitor_picks_only_the_operators_sources(tmp_path: Path) -> None:
    environ = {REPOS_SETTING: "org/cards", FOLDER_SETTING: str(tmp_path)}
    assert len(load_source(SHIPPED, environ)) == len(shipped_cards())
    for chosen in ("evil/repo", str(tmp_path), "http://127.0.0.1:1/x", "../../etc"):
        with pytest.raises(ValueError, match="is not a card source of this Space"):
            load_source(chosen, environ)
