"""The LLM judge against real OpenAI-compatible servers on 127.0.0.1, started once for the module
as docs/judges.md prints them (on free ports): llama.cpp's server (``llama-cpp-python``, from
``.venv-llama``: tests/llama_support.py) serving the SmolLM2-135M-Instruct GGUF, and
``transformers serve`` loading the SmolLM2 folder. No mock of their API: the docs' judge
examples run as printed against them, and the same rows' grades are compared in this process,
greedy through both servers, and weighted through llama.cpp's (``transformers serve`` returns no
log-probabilities, so weighted grades there are refused: tests/test_judge_faults.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from docs_blocks import Block, blocks
from llama_support import GGUF_NAME, gguf, llama_python
from space_support import _free_port as free_port

from blindspot.perturbations.perturbation import REGISTRY
from blindspot.scoring.engine import score_rows
from blindspot.scoring.scorer import get_scorer
from blindspot.scoring.signature import parse_signature

#: one worker runs the module (--dist loadgroup), so each server starts once
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("judge_servers")]

PAGE = "docs/judges.md"
ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "blindspot" / "demo" / "summarization.jsonl"
ROWS = [json.loads(line) for line in DEMO.read_text(encoding="utf-8").splitlines()][:3]
#: real rows for the weighted grades: three demo summaries and their first sentence alone
TEXTS = [r["gold"] for r in ROWS] + [r["gold"].split(". ")[0] + "." for r in ROWS]
#: how long a server may take to answer its first request on two busy cores
START_S = 300
#: one call's deadline here: a loaded machine queues the calls of a server that answers one at
#: a time (llama.cpp's), and the deadline counts the wait
TIMEOUT = 600
#: the template SmolLM2 answers with a digit even greedily (docs/judges.md)
TEMPLATE = "quality"
#: weighted grades through llama.cpp against SmolLM2 in this process, per row, in grade points.
#: Both run the same weights (the in-process model is the GGUF's, dequantised to float32), but
#: llama.cpp multiplies the 4-bit Q4_1 blocks as they are stored, with its activations quantised
#: to 8 bits, so the next-token probabilities of the grade digits move a little: measured on
#: these six texts (2026-12), 0.048 grade points at most on the 1-5 scale, the grades (the most
#: probable digit) the same. The tolerance is three times that.
WEIGHTED_TOLERANCE = 0.15


def _block(first_line: str, has: str) -> Block:
    """The block of the page that starts with ``first_line`` and holds ``has``."""
    found = [b for b in blocks(PAGE) if b.first_line == first_line and has in b.text]
    assert len(found) == 1, (first_line, has, found)
    return found[0]


def _environment(path_first: Path, folder: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHONPATH")}
    env.update(PATH=f"{path_first}{os.pathsep}{Path(sys.executable).parent}{os.pathsep}"
                    f"{env.get('PATH', '')}",
               HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", HF_DATASETS_OFFLINE="1",
               OMP_NUM_THREADS="2", BLINDSPOT_CACHE=str(folder / "cache"), COLUMNS="120")
    return env


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The page's folder, as a reader's: the files its blocks write and the GGUF beside them."""
    folder = tmp_path_factory.mktemp("judges-page")
    for block in blocks(PAGE):
        if "file" in block.settings:
            (folder / block.settings["file"]).write_text(block.text, encoding="utf-8")
    (folder / GGUF_NAME).symlink_to(gguf())
    return folder


def _serve(block: Block, port: int, printed: int, folder: Path, path_first: Path
           ) -> Iterator[str]:
    """Start the block's server on ``port`` (the page prints ``printed``), yield its base URL
    once ``/v1/models`` answers, stop it after the module."""
    command = block.command().replace(f"--port {printed}", f"--port {port}")
    log = folder / f"server-{printed}.log"
    with log.open("w") as handle:
        server = subprocess.Popen(["bash", "-c", "exec " + command.strip()], cwd=folder,
                                  env=_environment(path_first, folder), stdout=handle,
                                  stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + START_S
        while True:
            if server.poll() is not None:
                pytest.fail(f"{block.first_line} exited {server.returncode}:\n"
                            f"{log.read_text()[-3000:]}")
            try:
                with urllib.request.urlopen(f"{url}/models", timeout=5):
                    break
            except OSError:
                if time.monotonic() > deadline:
                    pytest.fail(f"{block.first_line} did not answer in {START_S} s:\n"
                                f"{log.read_text()[-3000:]}")
                time.sleep(1)
        yield url
    finally:
        server.terminate()  # both servers stop on SIGTERM
        server.wait(timeout=60)


@pytest.fixture(scope="module")
def llama(page: Path) -> Iterator[str]:
    """llama.cpp's server as the page starts it (``python`` is the side environment's)."""
    block = _block("python -m llama_cpp.server --model SmolLM2-135M-Instruct.Q4_1.gguf "
                   "--model_alias smollm2 \\", "8080")
    yield from _serve(block, free_port(), 8080, page, llama_python().parent)


@pytest.fixture(scope="module")
def served(page: Path) -> Iterator[str]:
    """``transformers serve`` as the page starts it."""
    block = _block("transformers serve --host 127.0.0.1 --port 8000", "8000")
    yield from _serve(block, free_port(), 8000, page, Path(sys.executable).parent)


def _example(page: Path, url: str, printed: int, out: str) -> dict:
    """Run the page's judge example against the server it names (``printed``: its port there),
    as printed but for the port; the results of its one metric."""
    block = _block("blindspot run --metrics llm_judge@smollm2 --option "
                   "llm_judge.template=quality \\", f":{printed}/v1")
    command = block.command().replace(f"http://127.0.0.1:{printed}/v1", url)
    done = subprocess.run(["bash", "-euo", "pipefail", "-c", command], cwd=page,
                          env=_environment(Path(sys.executable).parent, page),
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, f"{block.where}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    data = json.loads((page / out / "results.json").read_text(encoding="utf-8"))["datasets"]
    return next(iter(next(iter(data.values()))["metrics"].values()))


def test_the_docs_judge_examples_run_as_printed_against_the_servers_they_start(
        page: Path, llama: str, served: str) -> None:
    for url, printed, out, mode in ((llama, 8080, "served", "weighted"),
                                    (served, 8000, "served-greedy", "greedy")):
        entry = _example(page, url, printed, out)
        assert entry.get("error") is None and entry["tests"]["judge_verbosity"]["status"] in (
            "pass", "fail"), entry
        assert entry["usage"]["calls"] > 0 and entry["usage"]["cached"] == 0
        opts = parse_signature(entry["signature"])["opts"]
        assert f'server="{url}"' in opts and f"mode={mode}" in opts


def test_the_docs_audit_gate_runs_as_printed_and_shows_the_judges_server(page: Path,
                                                                          llama: str) -> None:
    block = _block("blindspot judge-audit --data two.jsonl --rows 2 --audits position "
                   "--template quality \\", ":8080/v1")
    command = block.command().replace("http://127.0.0.1:8080/v1", llama)
    done = subprocess.run(["bash", "-uo", "pipefail", "-c", command], cwd=page,
                          env=_environment(Path(sys.executable).parent, page),
                          capture_output=True, text=True, timeout=900)
    saved = json.loads((page / "audit-gate" / "results.json").read_text(encoding="utf-8"))
    failed = [name for name, entry in saved["audits"].items() if not entry["passed"]]
    assert done.returncode == (3 if failed else 0), done.stdout + done.stderr  # --fail-on fail
    assert f"judge      llm_judge@smollm2 on {llama} (mode weighted)" in done.stdout
    assert saved["judge"]["url"] == llama and list(saved["audits"]) == ["position"]


def _grades(texts: list[str], **options) -> dict[str, list[float]]:
    return score_rows(get_scorer("llm_judge", model="smollm2", template=TEMPLATE,
                                 timeout=TIMEOUT, **options), texts, cache=None)


def _padded(page: Path) -> list[str]:
    """The page's two rows and their copies padded by judge_verbosity's first level: texts
    SmolLM2 answers greedily with "Quality: <digit>" (on some demo summaries it replies
    "Quality: 9." or "3.5", off the scale: a reply with no grade)."""
    golds = [json.loads(line)["gold"] for line in (page / "two.jsonl").read_text(
        encoding="utf-8").splitlines()]
    test = REGISTRY.get("judge_verbosity")(task="summarization")
    level = test.paper_levels("summarization")[0]
    return golds + test.apply_rows(golds, [0, 1], level, 1)["perturbed"]


def test_greedy_grades_in_process_and_through_both_servers(page: Path, llama: str,
                                                           served: str) -> None:
    texts = _padded(page)
    local = _grades(texts, mode="greedy")
    # transformers serve runs the same float32 folder with the same generation: the same
    # grades, row for row, with the judge's default 4 calls at once (its first, the identity
    # probe, alone: the model is loaded before the others arrive)
    through_serve = _grades(texts, mode="greedy", backend="openai", url=served)
    assert through_serve["grade"] == local["grade"]
    # llama.cpp computes with the 4-bit weights: a greedy grade may differ by one where the two
    # most probable digits are close (one call at a time: it queues the others)
    through_llama = _grades(texts, mode="greedy", backend="openai", url=llama, concurrency=1)
    assert all(abs(a - b) <= 1 for a, b in zip(through_llama["grade"], local["grade"],
                                               strict=True))
    assert all(1 <= g <= 5 for g in local["grade"] + through_llama["grade"])


def test_weighted_grades_through_llama_cpp_agree_with_the_in_process_ones(llama: str) -> None:
    local = _grades(TEXTS, mode="weighted")
    remote = _grades(TEXTS, mode="weighted", backend="openai", url=llama, concurrency=1)
    differences = [abs(a - b) for a, b in zip(remote["score"], local["score"], strict=True)]
    assert max(differences) <= WEIGHTED_TOLERANCE, (remote["score"], local["score"])
    assert remote["grade"] == local["grade"]
    assert len(set(local["score"])) > 1  # the rows are told apart: the comparison means something
