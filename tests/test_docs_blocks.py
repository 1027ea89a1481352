"""Every code block of README.md and docs/*.md runs as printed (tests/docs_blocks.py: how, and
the marker a block that cannot run here carries), and the pages keep to the quick tour's rules.

One test per page, so the pages run side by side under ``-n``; within a page, its blocks run in
order in one fresh folder outside the checkout.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from docs_blocks import NOT_RUN, PAGES, ROOT, TIMEOUT, Block, blocks, run_block

BIN = Path(sys.executable).parent
ADDRESS = re.compile(r"http://127\.0\.0\.1:\d+")
#: a typed timing ("about 4 s", "takes 7.3 s"): timings come from benchmarks/first_five_minutes.py
TYPED_TIMING = re.compile(r"\b(?:about|takes|took|in)\s+\d+(?:\.\d+)?\s*(?:s|seconds|min)\b")
TIMINGS_PAGE = "docs/first-five-minutes.md"
TIMINGS_HEADER = "<!-- written by benchmarks/first_five_minutes.py --write-docs: do not edit -->"


def _environment() -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("PYTHONPATH")}
    env.update(PATH=f"{BIN}{os.pathsep}{env.get('PATH', '')}", COLUMNS="100",
               HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1", TRANSFORMERS_OFFLINE="1",
               GRADIO_ANALYTICS_ENABLED="False", HF_HUB_DISABLE_TELEMETRY="1")
    return env


def _serve(block: Block, folder: Path, env: dict[str, str]) -> None:
    """Start the block's server, wait until its address answers, stop it."""
    with subprocess.Popen(["bash", "-c", "exec " + block.command().strip()], cwd=folder, env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) as server:
        assert server.stdout is not None
        deadline, seen = time.monotonic() + float(block.settings.get("timeout", TIMEOUT)), []
        try:
            for line in server.stdout:
                seen.append(line)
                if found := ADDRESS.search(line):
                    with urllib.request.urlopen(found.group(0), timeout=60) as answer:
                        assert answer.status == 200
                    return
                assert time.monotonic() < deadline, f"{block.where}: no address in {seen}"
            raise AssertionError(f"{block.where}: the server ended: {''.join(seen)[-2000:]}")
        finally:
            server.terminate()
            server.wait(timeout=30)


@pytest.mark.parametrize("page", PAGES)
def test_every_block_of_the_page_runs_as_printed(page: str, tmp_path: Path) -> None:
    env = _environment()
    ran, printed = 0, None
    for block in blocks(page):
        if "output" in block.settings:
            assert printed is not None, f"{block.where}: an output block follows no block that ran"
            assert printed.splitlines() == block.text.splitlines(), (
                f"{block.where}: the block before it printed\n{printed}")
        printed = None
        if "file" in block.settings:
            (tmp_path / block.settings["file"]).write_text(block.text, encoding="utf-8")
        elif "skip" in block.settings:
            assert (page, block.first_line) in NOT_RUN, (
                f"{block.where}: a skipped block must be one of docs_blocks.NOT_RUN (what runs "
                f"it instead); run it, or mark what it needs with needs=... replace=...")
        elif block.runs() and "serve" in block.settings:
            _serve(block, tmp_path, env)
            ran += 1
        elif block.runs():
            printed = run_block(block, tmp_path, env, BIN / "python")
            ran += 1
    assert ran == sum(b.runs() for b in blocks(page))


@pytest.mark.quick
def test_every_skipped_block_is_still_on_its_page() -> None:
    skipped = {(page, b.first_line) for page in PAGES for b in blocks(page) if "skip" in b.settings}
    assert skipped == set(NOT_RUN)


@pytest.mark.quick
def test_the_readme_is_a_quick_tour() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    lines = text.splitlines()
    assert len(lines) <= 300  # installing, a first run, three ways in, your metric and data
    assert "make demo" in text and "make test" in text
    assert "../shared" not in text


@pytest.mark.quick
@pytest.mark.parametrize("page", PAGES)
def test_pages_name_no_developer_folder_and_keep_lines_short(page: str) -> None:
    text = (ROOT / page).read_text(encoding="utf-8")
    long = [n for n, line in enumerate(text.splitlines(), 1)
            if len(line) > 110 and not line.startswith(("|", "<!--", "![", "{"))]
    assert not long, f"{page}: lines over 110 characters: {long}"
    for block in blocks(page):
        assert "../shared" not in block.text, f"{block.where} names ../shared"


@pytest.mark.quick
@pytest.mark.parametrize("page", PAGES)
def test_timings_are_quoted_from_the_benchmark_not_typed(page: str) -> None:
    text = (ROOT / page).read_text(encoding="utf-8")
    if page == TIMINGS_PAGE:
        assert text.startswith(TIMINGS_HEADER)
        return
    prose = re.sub(r"```.*?```", "", text, flags=re.S)
    assert not TYPED_TIMING.findall(prose), (
        f"{page}: timings typed by hand: {TYPED_TIMING.findall(prose)}; quote "
        f"{TIMINGS_PAGE} (benchmarks/first_five_minutes.py --write-docs)")


#: ```make TARGET``` quoted in prose or a comment, or a code block's line that runs ``make TARGET``
MAKE_TARGET = re.compile(r"`make ([a-z][\w-]*)[^`]*`|^make ([a-z][\w-]*)", re.M)


@pytest.mark.quick
def test_every_make_target_the_pages_and_requirements_name_exists() -> None:
    """A page or a requirements file that names ``make X`` names a target of the Makefile
    (requirements/hub-server.txt named `make hub-server`, which never existed)."""
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    targets = set(re.findall(r"^([a-z][\w-]*):", makefile, flags=re.M))
    named = {(str(path.relative_to(ROOT)), next(t for t in found if t))
             for path in [*(ROOT / page for page in PAGES), *(ROOT / "requirements").glob("*.txt")]
             for found in MAKE_TARGET.findall(path.read_text(encoding="utf-8"))}
    assert named and {target for _, target in named} & targets
    missing = sorted((page, target) for page, target in named if target not in targets)
    assert not missing, f"make targets named but not in the Makefile: {missing}"
