"""Benchmark: the same stress test in the Space's page and from the command line (issue 40's target:
the page within 1.5x the command line), and where the page's time goes.

In one run, on this machine:

* the command line: ``blindspot run --data demo --task summarization --metrics rouge --tests
  truncation --seeds 1`` as a fresh process (the baseline, imports included);
* the page: ``blindspot space`` served on loopback, Debian's Chromium (Playwright) clicks "Run
  stress test" on the same choices and waits for "finished"; the time to the first visible status
  and the status texts the page showed (queue, start, the run's progress bars);
* the run's own parts, from the worker's events in the Space's workspace (in this process): from
  Run to the worker's ``start`` (a new worker's imports, or a spare's hand-over), the protocol's
  work until ``done``, from ``done`` to the process's exit, and the page's rendering of the
  report; once with a new worker per run (the Space before issue 40) and once with the spare it
  keeps now.

    python benchmarks/space_speed.py [--chromium /usr/bin/chromium] [--runs 2] [--cli-runs 2]
        [--think 20]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from playwright.sync_api import expect, sync_playwright

from blindspot.space.limits import DEFAULT_LIMITS
from blindspot.space.session import Workspace
from blindspot.space.tabs.stress import make_request, report_outputs, result_views

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))  # the Space served as its tests serve it
from space_support import served_space  # noqa: E402

TARGET = 1.5
CLI = [str(Path(sys.executable).parent / "blindspot"), "run", "--data", "demo", "--task",
       "summarization", "--metrics", "rouge", "--tests", "truncation", "--seeds", "1"]
#: records every text the status line shows, with the page's clock
OBSERVE = """() => { window.seen = []; const status = document.querySelector('#run-status');
  new MutationObserver(() => window.seen.push([performance.now(), status.innerText]))
    .observe(status, {subtree: true, childList: true, characterData: true}); }"""


def _cli(folder: Path) -> float:
    start = time.perf_counter()
    subprocess.run([*CLI, "--out", str(folder)], check=True, capture_output=True, cwd=folder.parent)
    return time.perf_counter() - start


def _page(chromium: str, folder: Path, runs: int, think: float
          ) -> list[tuple[float, float, list[str]]]:
    """(seconds from Run to "finished", to the first status text, the texts shown) per run."""
    found = []
    with served_space([], folder, folder / "space.log") as url, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium,
                                             args=["--headless", "--no-sandbox", "--disable-gpu"])
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto(url)
        page.wait_for_selector("#perturb-button", timeout=180_000)
        page.get_by_role("tab", name="Stress-test a metric").click()
        for number in range(1, runs + 1):
            time.sleep(think)  # the spare worker imports while a visitor picks the settings
            page.evaluate(OBSERVE)
            clicked, start = page.evaluate("performance.now()"), time.perf_counter()
            page.click("#run-button")
            expect(page.locator("#run-status")).to_contain_text(f"run {number}:",
                                                                timeout=600_000)
            total = time.perf_counter() - start
            seen = page.evaluate("window.seen")
            first = next(((at - clicked) / 1000 for at, text in seen if text.strip()), total)
            texts = list(dict.fromkeys(" ".join(text.split()[1:]) for _, text in seen))
            found.append((total, first, [t for t in texts if t]))
        browser.close()
    return found


def _parts(folder: Path, spare: bool, think: float) -> dict[str, float]:
    """One run through the Space's workspace: the seconds of each part."""
    workspace = Workspace(folder, spare=spare)
    if spare:
        time.sleep(think)  # as in the page: the spare is ready before the visitor presses Run
    out = workspace.new_run_folder("bench")
    request = {**make_request("rank", "demo", "summarization", None, ["rouge"], ["truncation"],
                              [1], None, {}, DEFAULT_LIMITS), "out": str(out)}
    marks: dict[str, float] = {}
    start = time.perf_counter()
    job = workspace.start("bench", request, out)
    assert job is not None
    for event in job.events():
        marks.setdefault(event["event"], time.perf_counter() - start)
    ended = time.perf_counter() - start
    rendered = time.perf_counter()
    results, _, _ = report_outputs(out)
    result_views(results, out)
    workspace.close()
    return {"to start": marks["start"], "work": marks["done"] - marks["start"],
            "exit": ended - marks["done"], "render": time.perf_counter() - rendered,
            "all": time.perf_counter() - start}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chromium", default=os.environ.get("BLINDSPOT_CHROMIUM",
                                                            "/usr/bin/chromium"))
    parser.add_argument("--runs", type=int, default=2, help="page runs")
    parser.add_argument("--cli-runs", type=int, default=2,
                        help="command-line runs before the page (and, above 1, one after it)")
    parser.add_argument("--think", type=float, default=20.0,
                        help="seconds a visitor takes to choose a run's settings, while the "
                             "Space's spare worker imports (below that, Run waits for it)")
    args = parser.parse_args()
    os.environ.update(GRADIO_ANALYTICS_ENABLED="False", HF_HUB_DISABLE_TELEMETRY="1",
                      HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1")
    print(f"load average before: {os.getloadavg()[0]:.2f} (cores: {os.cpu_count()})")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        cli = [_cli(root / f"cli-{n}") for n in range(args.cli_runs)]
        print(f"command line (fresh process): {statistics.median(cli):.1f} s "
              f"(runs: {', '.join(f'{s:.1f}' for s in cli)})")
        for name, spare in (("a new worker per run (before)", False), ("the spare worker", True)):
            parts = _parts(root / f"workspace-{spare}", spare, args.think)
            print(f"workspace, {name}: " + ", ".join(f"{k} {v:.1f} s" for k, v in parts.items()))
        (root / "space").mkdir()
        for number, (total, first, texts) in enumerate(_page(args.chromium, root / "space",
                                                             args.runs, args.think), 1):
            ratio = total / statistics.median(cli)
            print(f"page run {number}: {total:.1f} s from Run to finished ({ratio:.2f}x the "
                  f"command line; target <= {TARGET}x), first status after {first:.2f} s")
            print("  status texts: " + " / ".join(texts[:12]))
        if args.cli_runs > 1:
            cli.append(_cli(root / "cli-after"))
            print(f"command line again: {cli[-1]:.1f} s")
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
