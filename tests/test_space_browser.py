"""The Space end to end in a real headless Chromium (Debian's, driven by Playwright).

One app process per module (``python -m blindspot.cli space`` on a free loopback port, with a
tiny adversarial dataset built from the demo), one browser. The page is loaded, a text perturbed,
a small stress test run on the demo data (verdict table, plot image, downloads), the matrix
compared, a malformed upload refused with a readable error, a built dataset browsed and a run
stopped; a second browser session sees none of the first one's runs. An adversarial search runs
on three demo rows and the preference protocol on a 24-row slice of the shipped MENLI set.
Screenshots go to ``artifacts/screenshots/``. ``make test`` installs chromium when it is missing:
these tests are never skipped.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlparse

import pytest
from space_support import build_tiny_dataset, served_space

#: one xdist group: its module fixtures (the Space, Chromium and the demo run)
#: are set up once, not once per worker
pytestmark = pytest.mark.xdist_group("space_browser")

CHROMIUM = os.environ.get("BLINDSPOT_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
SHOTS = Path(__file__).resolve().parents[1] / "artifacts" / "screenshots"
RUN_TIMEOUT_MS = 180_000
TEXT = ("The council approved the new budget on Tuesday. It will fund 12 more teachers. "
        "Mayor Helen Okafor said the plan was fair.")


#: every host the first session's page sent a request to
HOSTS: set[str] = set()
#: what the Space prints in its terminal (stdout and stderr), and what the demo run's status
#: line showed: (seconds after Run, text) for each change
SPACE: dict[str, Path] = {}
STATUS: list[tuple[float, str]] = []
#: records every text of the run's status line with the page's clock
OBSERVE_STATUS = """() => { window.seen = []; const status = document.querySelector('#run-status');
  new MutationObserver(() => window.seen.push([performance.now(), status.innerText]))
    .observe(status, {subtree: true, childList: true, characterData: true}); }"""
#: how soon after Run the page shows the run started (the benchmark measures ~0.2 s:
#: benchmarks/space_speed.py); the bound leaves room for a loaded CI machine
RUNNING_WITHIN_S = 2.0


@pytest.fixture(scope="module")
def space_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The app served by the real command on a free loopback port, for this module."""
    root = tmp_path_factory.mktemp("space")
    build_tiny_dataset(root / "datasets" / "tiny")
    SPACE["log"] = root / "space.log"
    with served_space(["--datasets-dir", str(root / "datasets")], root,
                      SPACE["log"]) as url:
        yield url


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    if not Path(CHROMIUM).is_file():
        pytest.fail(f"{CHROMIUM} is missing: `make browser` (as root) installs Debian's chromium")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


def _open_page(context, url: str) -> object:
    tab = context.new_page()
    tab.goto(url)
    tab.wait_for_selector("#perturb-button", timeout=60_000)
    return tab


@pytest.fixture(scope="module")
def page(browser, space_url: str) -> Iterator[object]:
    """One browser session on the Space, kept across the tests of this module (each test opens
    the tab it needs and leaves its inputs as it found them)."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.on("request", lambda request: HOSTS.add(urlparse(request.url).netloc))
    yield _open_page(context, space_url)
    context.close()


@pytest.fixture
def fresh_page(browser, space_url: str) -> Iterator[object]:
    """A new browser session (its own gradio session) for one test."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    yield _open_page(context, space_url)
    context.close()


@pytest.fixture(scope="module")
def demo_run(page) -> object:
    """The small stress test (demo summarization, rouge, truncation, seed 1) run in ``page``."""
    from playwright.sync_api import expect

    _open_tab(page, "Stress-test a metric")
    page.locator("#run-status").wait_for(state="attached")  # a tab's panel renders after its click
    page.evaluate(OBSERVE_STATUS)
    clicked = page.evaluate("performance.now()")
    page.click("#run-button")
    expect(page.locator("#run-status")).to_contain_text("finished", timeout=RUN_TIMEOUT_MS)
    STATUS.extend(((at - clicked) / 1000, text) for at, text in page.evaluate("window.seen"))
    return page


def _shot(page, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)


def _open_tab(page, title: str) -> None:
    page.get_by_role("tab", name=title).click()


def _pick(page, elem_id: str, option: str) -> None:
    """Choose ``option`` in the gradio dropdown ``elem_id``."""
    page.locator(f"#{elem_id} input").click()
    page.get_by_role("option", name=option, exact=True).click()


def test_page_loads_with_every_tab(page) -> None:
    from playwright.sync_api import expect

    expect(page).to_have_title("blindspot")
    for title in ("Perturb", "Stress-test a metric", "Adversarial search", "Compare metrics",
                  "Browse adversarial datasets"):
        expect(page.get_by_role("tab", name=title)).to_be_visible()
    _shot(page, "01-loaded")


def test_perturb_shows_the_library_result_and_its_diff(page) -> None:
    from playwright.sync_api import expect

    from blindspot.perturbations import get_perturbation

    expected = get_perturbation("truncation").apply(TEXT, 0.3, 1)
    _open_tab(page, "Perturb")
    page.locator("#perturb-text textarea").fill(TEXT)
    level = page.locator("#perturb-level input")
    level.fill("0.3")
    level.press("Enter")
    page.click("#perturb-button")
    expect(page.locator("#noise-ratio")).to_contain_text(
        f"noise ratio {expected.noise_ratio:.4f}", timeout=60_000)
    expect(page.locator("#perturbed-text textarea")).to_have_value(expected.perturbed)
    expect(page.locator("#perturbed-diff")).to_contain_text("Okafor said the plan was fair.")
    _shot(page, "02-perturb")
    page.click("#every-test-button")
    table = page.locator("#all-tests")
    expect(table).to_contain_text("negation", timeout=120_000)
    expect(table).to_contain_text("skipped: needs mlm")
    assert table.locator("del").count() > 0
    _shot(page, "03-every-test")


def test_small_stress_test_on_the_demo_shows_verdicts_and_plot(demo_run, tmp_path: Path) -> None:
    from playwright.sync_api import expect

    from blindspot.protocols.rank import run_blindspot
    from blindspot.report.views import verdict_cell

    page = demo_run
    direct = run_blindspot("demo", ["rouge"], task="summarization", tests=["truncation"],
                           seeds=[1], out=tmp_path / "direct", progress=False)
    result = direct["datasets"]["demo-summarization"]["metrics"]["rouge.rougeL"]["tests"]
    expected = verdict_cell(result["truncation"]).text
    _open_tab(page, "Stress-test a metric")
    expect(page.locator("#run-status")).to_contain_text("run 1: demo summarization · rouge")
    row = page.locator("#verdicts tr", has_text="truncation")
    expect(row).to_contain_text(expected)
    image = page.locator("#plots img").first
    expect(image).to_be_visible()
    page.wait_for_function("img => img.complete && img.naturalWidth > 100", arg=image.element_handle())
    for name in ("results.json", "report.md", "report.html"):
        expect(page.locator(f"#report-files a[href$='/{name}']")).to_have_count(1)
    _shot(page, "04-stress-test")


def test_the_run_shows_it_started_at_once_with_the_progress_the_cli_shows(demo_run) -> None:
    """Within a moment of Run the status line says the run started; then it shows the command
    line's bars as they move: perturbing and scoring, their counts and the cell being scored."""
    shown = [(at, " ".join(text.split())) for at, text in STATUS if text.strip()]
    assert shown and shown[0][0] < RUNNING_WITHIN_S, shown[:3]
    texts = " / ".join(text for _, text in shown)
    assert re.search(r"perturbing \d+/5 cells", texts), texts
    assert re.search(r"scoring \d+/6 cells: rouge\.rougeL (gold|truncation)", texts), texts


def test_the_options_list_shows_each_option_with_its_help(page) -> None:
    """Each visitor-safe option of the protocol is a bullet with its name and what it takes
    (it was an empty bullet above a box of code)."""
    from playwright.sync_api import expect

    from blindspot.protocols.declarations import RANK

    _open_tab(page, "Stress-test a metric")
    items = page.locator("#protocol-hint li")
    safe = [spec for spec in RANK.options if spec.visitor_safe and not spec.file]
    expect(items).to_have_count(len(safe))
    for item, spec in zip(items.all(), safe, strict=True):
        assert item.locator("code").inner_text() == spec.name
        assert item.inner_text().startswith(f"{spec.name}: {spec.help}")
        box = item.bounding_box()
        assert box is not None and box["height"] < 60  # one line or two, not a box below
    _shot(page, "04b-options")


def test_compare_shows_the_session_run_and_uploaded_results(demo_run, tmp_path: Path) -> None:
    from playwright.sync_api import expect

    from blindspot.protocols.rank import run_blindspot
    from blindspot.report.views import verdict_cell

    page = demo_run
    earlier = run_blindspot("demo", ["chrf"], task="summarization", tests=["truncation"],
                            seeds=[1], out=tmp_path / "earlier", progress=False)
    chrf = earlier["datasets"]["demo-summarization"]["metrics"]["chrf.chrf"]["tests"]["truncation"]
    bad = tmp_path / "bad.json"
    bad.write_text("{not json", encoding="utf-8")
    _open_tab(page, "Compare metrics")
    expect(page.locator("#compare-runs")).to_contain_text("run 1: demo summarization")
    page.locator("#compare-uploads input[type=file]").set_input_files(
        [str(tmp_path / "earlier" / "results.json"), str(bad)])
    page.click("#compare-button")
    matrix = page.locator("#matrix")
    expect(matrix).to_contain_text("rouge.rougeL · run 1: demo summarization · rouge",
                                   timeout=30_000)
    expect(matrix).to_contain_text("chrf.chrf · results.json")
    expect(matrix.locator("tr", has_text="truncation")).to_contain_text(
        verdict_cell(chrf).text)
    expect(matrix).to_contain_text("blind spots")
    expect(page.locator("#compare-errors")).to_contain_text("bad.json is not valid JSON")
    expect(page.locator("#matrix-csv a[href$='/matrix.csv']")).to_have_count(1)
    _shot(page, "05-compare")


def _upload(page, path: Path, accepted: bool = True) -> object:
    """Upload ``path`` as gold data; the upload status element.

    The box is emptied first when it still holds a file (a test that failed before clearing it
    leaves one). An ``accepted`` file is set again until the box takes it (its drop zone goes):
    right after the previous file was cleared the box may still be re-rendering and drop a file
    set on its old input (CI saw the empty drop zone for 60 s)."""
    from playwright.sync_api import expect

    _open_tab(page, "Stress-test a metric")
    page.locator("#data-kind").get_by_text("upload", exact=True).click()
    box = page.locator("#data-upload")
    drop_zone = box.get_by_text("Drop File Here")
    clear = box.locator("button[aria-label='Clear']").first
    for attempt in range(3 if accepted else 1):
        expect(drop_zone.or_(clear)).to_be_visible(timeout=30_000)
        if not drop_zone.is_visible():
            clear.click()
            expect(drop_zone).to_be_visible(timeout=30_000)
        box.locator("input[type=file]").set_input_files(str(path))
        if not accepted:
            break
        try:
            expect(drop_zone).to_be_hidden(timeout=20_000)
            break
        except AssertionError:
            if attempt == 2:
                raise
    return page.locator("#upload-status")


def _clear_upload(page) -> None:
    from playwright.sync_api import expect

    page.locator("#data-upload button[aria-label='Clear']").first.click()
    expect(page.locator("#data-upload").get_by_text("Drop File Here")).to_be_visible(timeout=30_000)
    page.locator("#data-kind").get_by_text("demo", exact=True).click()


@pytest.mark.parametrize("name, content, message", [
    ("latin.csv", b"gold,id\n" + "caf\xe9,1\n".encode("latin-1"), "is not UTF-8 text"),
    ("broken.csv", b'gold,id\n"never closed,1\nnext,2\n', "broken.csv: could not be read as csv"),
    ("empty.jsonl", b"", "empty.jsonl is empty"),
    ("columns.jsonl", b'{"text_a": "A cat.", "target": "The cat."}\n',
     "no hypothesis column (the text to perturb); its columns are ['text_a', 'target']"),
    ("big.csv", None, "big.csv is 20.0 MB; uploads must be smaller than 20.0 MB on this Space"),
    ("script.csv", b"#!/bin/sh\nrm -rf /\n", "script.csv is a script, not a data file"),
])
def test_malformed_upload_shows_a_readable_error(page, tmp_path: Path, name: str,
                                                 content: bytes | None, message: str) -> None:
    from playwright.sync_api import expect

    from blindspot.space.uploads import MAX_UPLOAD_BYTES

    path = tmp_path / name
    if content is None:  # a file at the default 20 MB limit
        with path.open("wb") as handle:
            handle.write(b"gold,id\n" + b"x" * (MAX_UPLOAD_BYTES - 8))
    else:
        path.write_bytes(content)
    status = _upload(page, path)
    expect(status).to_contain_text("Error:", timeout=60_000)
    expect(status).to_contain_text(message)
    _shot(page, f"06-upload-error-{Path(name).stem}")
    _clear_upload(page)


def test_a_program_uploaded_as_data_is_refused_on_the_page(page, tmp_path: Path) -> None:
    """The data box takes data types only: gradio refuses a ``.py`` before our code sees it, and
    the visitor is told so on the page (over HTTP: tests/test_space_security.py)."""
    from playwright.sync_api import expect

    path = tmp_path / "evil.py"
    path.write_bytes(b"import os\nos.system('id')\n")
    status = _upload(page, path, accepted=False)
    expect(page.get_by_text("Invalid file type").first).to_be_visible(timeout=30_000)
    expect(status).not_to_contain_text("Read evil.py")
    _shot(page, "06-upload-error-evil")
    page.locator("#data-kind").get_by_text("demo", exact=True).click()


def test_csv_with_quoted_line_breaks_is_read_row_by_row(page, tmp_path: Path) -> None:
    from playwright.sync_api import expect

    path = tmp_path / "multi.csv"
    path.write_text('id,gold,reference\n1,"First line.\nSecond line, with a comma.",ref one\n'
                    '2,Plain text.,"ref\ntwo"\n', encoding="utf-8")
    status = _upload(page, path)
    expect(status).to_contain_text("Read multi.csv: 2 rows, columns ['id', 'gold', "
                                   "'reference']", timeout=30_000)
    expect(status).not_to_contain_text("Error")
    _clear_upload(page)


def test_browse_shows_gold_and_noised_rows(page) -> None:
    from playwright.sync_api import expect

    _open_tab(page, "Browse adversarial datasets")
    _pick(page, "browse-dataset", "tiny")
    expect(page.locator("#browse-summary")).to_contain_text("tiny-demo")
    expect(page.locator("#browse-configs")).to_contain_text("truncation-0.5")
    _pick(page, "browse-config", "truncation-0.5")
    rows = page.locator("#browse-rows")
    expect(rows).to_contain_text("demo-summarization-001")
    assert rows.locator("del").count() >= 3
    _shot(page, "07-browse")


def test_stop_ends_a_long_run_and_the_app_keeps_serving(fresh_page) -> None:
    from playwright.sync_api import expect

    page = fresh_page
    _open_tab(page, "Stress-test a metric")
    _pick(page, "stress-tests", "fluency")
    page.locator("#stress-seeds textarea, #stress-seeds input").first.fill("1,2,3,4,5")
    page.click("#run-button")
    # gr.Progress shows the run's own tqdm bars (perturbing, then scoring) while it runs
    expect(page.locator("#run-status, #verdict-table").get_by_text(
        re.compile(r"perturbing|scoring")).first).to_be_visible(timeout=60_000)
    page.click("#stop-button")
    expect(page.locator("#run-status")).to_contain_text("Stopped.", timeout=30_000)
    _shot(page, "08-stopped")
    _open_tab(page, "Perturb")
    page.click("#perturb-button")
    expect(page.locator("#noise-ratio")).to_contain_text("noise ratio", timeout=60_000)


def test_another_session_sees_none_of_the_first_sessions_runs(demo_run, fresh_page) -> None:
    from playwright.sync_api import expect

    other = fresh_page
    _open_tab(other, "Compare metrics")
    expect(other.locator("#compare-runs")).not_to_contain_text("run 1")
    other.click("#compare-button")
    expect(other.locator("#compare-errors")).to_contain_text("Nothing to compare yet")


def test_runs_of_two_sessions_are_queued_and_both_finish(browser, space_url: str) -> None:
    from playwright.sync_api import expect

    contexts = [browser.new_context(viewport={"width": 1280, "height": 900}) for _ in range(2)]
    try:
        pages = []
        for context in contexts:
            tab = _open_page(context, space_url)
            _open_tab(tab, "Stress-test a metric")
            pages.append(tab)
        for tab in pages:  # one run at a time: the second waits in the queue
            tab.click("#run-button")
        for k, tab in enumerate(pages):
            expect(tab.locator("#run-status")).to_contain_text("run 1: demo summarization",
                                                               timeout=RUN_TIMEOUT_MS)
            expect(tab.locator("#verdicts")).to_contain_text("truncation")
            _shot(tab, f"09-queued-session-{k + 1}")
    finally:
        for context in contexts:
            context.close()


def _fill(page, elem_id: str, value: str) -> None:
    """Type ``value`` into the gradio number/text field ``elem_id`` and leave it."""
    field = page.locator(f"#{elem_id} input, #{elem_id} textarea").first
    field.fill(value)
    field.press("Tab")


def test_search_on_the_demo_shows_examples_patterns_and_plot(page) -> None:
    from playwright.sync_api import expect

    from blindspot.search.protocol import run_search

    direct = run_search("demo", "chrf", panel=["bleu", "rouge"], task="translation", limit=3,
                        max_calls=5000, max_seconds=600, progress=False)
    _open_tab(page, "Adversarial search")
    _fill(page, "search-rows", "3")
    _fill(page, "search-seconds", "600")
    page.click("#search-button")
    expect(page.locator("#search-status")).to_contain_text("finished", timeout=RUN_TIMEOUT_MS)
    table = page.locator("#search-examples")
    expect(table.locator("tr")).to_have_count(1 + 3)
    for example in direct["examples"]:
        row = table.locator("tr", has_text=example["id"])
        change = example["metrics"]["chrf.chrf"]["gold"]["relative_change"]
        expect(row).to_contain_text(f"{example['status']} (")
        expect(row).to_contain_text("n/a" if change is None else f"{change:+.1f}%")
    if any(e["trail"] for e in direct["examples"]):
        assert table.locator("del").count() > 0
    expect(page.locator("#search-summary")).to_contain_text(
        f"{direct['budget']['calls_used']} metric calls")
    if direct["patterns"]:
        expect(page.locator("#search-patterns")).to_contain_text(direct["patterns"][0]["pattern"])
    image = page.locator("#search-plot img").first
    expect(image).to_be_visible()
    page.wait_for_function("img => img.complete && img.naturalWidth > 100",
                           arg=image.element_handle())
    for name in ("results.json", "report.md"):
        expect(page.locator(f"#search-files a[href$='/{name}']")).to_have_count(1)
    _shot(page, "10-search")


@pytest.mark.shared_data
def test_preference_on_a_menli_upload_shows_its_table_and_plot(fresh_page,
                                                              tmp_path: Path) -> None:
    from playwright.sync_api import expect
    from space_support import write_menli_slice

    from blindspot.protocols.preference_run import run_preference

    page = fresh_page
    data = write_menli_slice(tmp_path / "menli.csv")
    direct = run_preference(str(data), ["bleu"], progress=False)
    entry = direct["datasets"]["menli.csv"]["metrics"]["bleu.bleu"]
    _open_tab(page, "Stress-test a metric")
    _pick(page, "stress-protocol", "preference")
    expect(page.locator("#protocol-hint")).to_contain_text("MENLI-style CSV")
    expect(page.locator("#stress-tests")).to_be_hidden()
    status = _upload(page, data)
    expect(status).to_contain_text("Read menli.csv: 24 rows", timeout=60_000)
    expect(status).not_to_contain_text("Error")
    metrics = page.locator("#stress-metrics")
    metrics.get_by_label("rouge", exact=True).uncheck()
    metrics.get_by_label("bleu", exact=True).check()
    page.click("#run-button")
    expect(page.locator("#run-status")).to_contain_text("(preference protocol) finished",
                                                        timeout=RUN_TIMEOUT_MS)
    report = page.locator("#protocol-report")
    expect(report.locator("tr", has_text="mean (mean of 12 types)")).to_contain_text(
        f"{entry['mean']:.3f}")
    expect(report).to_contain_text(f"{entry['hits']} hits")
    image = page.locator("#plots img").first
    expect(image).to_be_visible()
    page.wait_for_function("img => img.complete && img.naturalWidth > 100",
                           arg=image.element_handle())
    for name in ("results.json", "report.md", "report.html"):
        expect(page.locator(f"#report-files a[href$='/{name}']")).to_have_count(1)
    _shot(page, "11-preference")
    page.locator("#plots").screenshot(path=str(SHOTS / "11-preference-plot.png"))


def test_the_page_only_talks_to_the_app(demo_run, space_url: str) -> None:
    """No request of the first session left the loopback app (no analytics, CDN or fonts)."""
    assert HOSTS == {urlparse(space_url).netloc}


def test_the_spaces_terminal_shows_its_address_and_nothing_else(demo_run) -> None:
    """After the runs, uploads and searches above, the Space's terminal holds its one line: no
    library warning (gradio's StarletteDeprecationWarning was printed on every queued event)."""
    lines = [line for line in SPACE["log"].read_text(encoding="utf-8").splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("the Space is served on http://127.0.0.1:"), \
        lines[:20]
