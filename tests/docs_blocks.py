"""The code blocks of README.md and docs/*.md, and how tests/test_docs_blocks.py runs them.

Every fenced block in ``bash`` or ``python`` runs as printed, in page order, in one fresh folder
per page (the user's own folder: no checkout), so a block can use the files an earlier block of
its page wrote. ``bash`` blocks run with the environment's ``bin`` first on ``PATH`` (as after
``source .venv/bin/activate``), ``python`` blocks as a script in that folder. Other languages
(``text`` for output, ``yaml``, ``json``...) are shown, not run.

A block that cannot run as printed here says why, and what runs instead, in one marker: an HTML
comment (invisible on GitHub) on the line just before its fence::

    <!-- docs-test: KEY="VALUE" KEY ... -->

``file="NAME"``
    the block is a file's content (``my_metric.py``, ``my_data.jsonl``): written to NAME in the
    page's folder, for later blocks, not run.
``needs="network"`` / ``needs="gpu"`` with ``replace="OLD => NEW"``
    the block needs the network (a Hub id) or a GPU; it runs with each OLD replaced by its local
    equivalent NEW (a file an earlier block wrote, a tiny or offline model, ``cpu``). Several
    replacements are separated by `` ;; ``. ``needs`` without ``replace`` is refused.
``serve``
    the block starts a server: it runs in the background until it prints an
    ``http://127.0.0.1:PORT`` address that answers, then it is stopped.
``skip="REASON"``
    not run at all: only for the blocks :data:`NOT_RUN` lists (installing into the user's
    environment, the whole test suite), each with what runs it instead. A skip elsewhere fails.
``timeout="SECONDS"``
    a longer limit than :data:`TIMEOUT`.
``output``
    on a ``text`` block right after a block that runs: what that block prints, checked as
    printed (its standard output, line for line).
"""

from __future__ import annotations

import re
import shlex
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: the pages whose blocks run: the README and every page of docs/
PAGES = ["README.md", *sorted(str(p.relative_to(ROOT)) for p in (ROOT / "docs").glob("*.md"))]
RUN_LANGUAGES = {"bash": "bash", "sh": "bash", "shell": "bash", "python": "python"}
NEEDS = {"network", "gpu"}
KEYS = {"file", "needs", "output", "replace", "serve", "skip", "timeout"}
TIMEOUT = 600
MARKER = re.compile(r"^<!--\s*docs-test:(.*?)-->\s*$")
FENCE = re.compile(r"^(`{3,})\s*([\w+-]*)\s*$")

HUB_ROUND_TRIP = "tests/test_hub_roundtrip.py: a Hub server (olah) on loopback"
GPU_PATHS = ("tests/test_gpu_device_path.py: precisions keyed apart, token budgets and the "
             "out-of-memory split on tiny models")
JUDGE_RUNS = ("tests/test_judge_api.py: blindspot run with llm_judge and --judge-url against a judge "
              "server on loopback; tests/test_judge_models.py: SmolLM2 in-process")
JUDGE_SERVERS = ("tests/test_judge_servers.py: llama.cpp's server and transformers serve started "
                 "as printed, and the judge examples run as printed against them (on free ports)")
#: The blocks that are never run, by page and first line, and what runs them instead.
NOT_RUN = {
    ("README.md", 'pip install ".[models,judges,space]"  # the package, the model metrics, LLM '
                  "judges, the Space"): "tests/test_packaging.py: the built wheel in a fresh venv",
    ("README.md", "make demo   # builds .venv (first time only) with every extra from exact pins, "
                  "then runs the demo"): ".ci/run: make test, which builds .venv first",
    ("docs/development.md", "make check  # ruff (lint), mypy (types), then the tests marked `quick`: "
                            "seconds, no model load"): ".ci/run: make lint, make types, make test",
    # docs/hub.md: pushing to and loading from a Hub; the same commands, with --push-git into
    # the repositories a Hub server (olah) serves on 127.0.0.1, run in the round-trip test
    ("docs/hub.md", "huggingface-cli login            # or: export HF_TOKEN=hf_...  (a token with "
                    "write access)"): HUB_ROUND_TRIP,
    ("docs/hub.md", "blindspot build-dataset --data demo --task summarization --tests truncation "
                    "--seeds 2 \\"): HUB_ROUND_TRIP,
    ("docs/hub.md", "from datasets import load_dataset"): HUB_ROUND_TRIP,
    ("docs/hub.md", "blindspot publish --org your-org"): HUB_ROUND_TRIP,
    ("docs/hub.md", "python -m olah.server --config olah.toml &          # in its own environment "
                    "(see below)"): HUB_ROUND_TRIP,
    # docs/judges.md: SmolLM2 judging all 30 demo rows takes many minutes on 2 cores; the same
    # paths run on a few rows
    ("docs/judges.md", "blindspot run --metrics llm_judge@smollm2,rouge --task summarization "
                       "--data demo \\"): JUDGE_RUNS,
    ("docs/judges.md", "CMAKE_ARGS=\"-DGGML_NATIVE=OFF\" pip install "
                       "'llama-cpp-python[server]==0.3.36'"):
        "make llama-server: tests/llama_support.py builds it into .venv-llama",
    ("docs/judges.md", "python -m llama_cpp.server --model SmolLM2-135M-Instruct.Q4_1.gguf "
                       "--model_alias smollm2 \\"): JUDGE_SERVERS,
    ("docs/judges.md", "transformers serve --host 127.0.0.1 --port 8000"): JUDGE_SERVERS,
    ("docs/judges.md", "blindspot run --metrics llm_judge@smollm2 --option "
                       "llm_judge.template=quality \\"): JUDGE_SERVERS,
    ("docs/judges.md", "blindspot judge-audit --data two.jsonl --rows 2 --audits position "
                       "--template quality \\"): JUDGE_SERVERS,
    ("docs/judges.md", "blindspot run --metrics llm_judge@smollm2 --option "
                       "llm_judge.template=my_rubric.toml \\"): JUDGE_RUNS,
    ("docs/reliability.md", "python -m pytest tests/test_faults.py -q"): ".ci/run: make test",
    # docs/gpu.md: the precision evidence (GPT-PPL on SmolLM2 over every demo test, minutes on 2
    # cores) and the GPU benchmark
    ("docs/gpu.md", "blindspot run --data demo --task translation --metrics "
                    "gpt_ppl@smollm2,bertscore@minilm \\"): GPU_PATHS,
    ("docs/gpu.md", "blindspot run --data demo --metrics gpt_ppl@smollm2 --option "
                    "gpt_ppl.precision=auto \\"): GPU_PATHS,
    ("docs/gpu.md", "python benchmarks/gpu_scoring.py --baseline-n 1000"):
        "benchmarks/gpu_scoring.py on the GPU machine (docs/gpu.md's table)",
    ("docs/gpu.md", "python benchmarks/gpu_scoring.py --only comet --baseline-n 1000"):
        "benchmarks/gpu_scoring.py on a GPU machine with unbabel-comet",
    ("docs/scale-out.md", "# head node: 6379 for drivers on the cluster, 10001 for Ray Client "
                          "drivers from elsewhere"): "tests/test_ray_cluster.py: a head on loopback, "
                                                     "joined as HOST:PORT and ray://",
}


@dataclass
class Block:
    """One fenced block: its page, line, language, text and marker settings."""

    page: str
    line: int
    language: str
    text: str
    settings: dict[str, str] = field(default_factory=dict)

    @property
    def first_line(self) -> str:
        return next((line for line in self.text.splitlines() if line.strip()), "")

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"

    def runs(self) -> bool:
        return self.language in RUN_LANGUAGES and "file" not in self.settings \
            and "skip" not in self.settings

    def command(self) -> str:
        """The text to run: as printed, with the marker's local equivalents put in."""
        text = self.text
        for pair in filter(None, self.settings.get("replace", "").split(" ;; ")):
            old, new = (part.strip() for part in pair.split("=>"))
            if old not in text:
                raise ValueError(f"{self.where}: replace: {old!r} is not in the block")
            text = text.replace(old, new)
        return text


def parse_marker(text: str, where: str) -> dict[str, str]:
    """``KEY="VALUE" KEY`` pairs of a marker, checked against the keys this module defines."""
    settings = {}
    for word in shlex.split(text):
        key, _, value = word.partition("=")
        if key not in KEYS:
            raise ValueError(f"{where}: unknown docs-test key {key!r}; known: {sorted(KEYS)}")
        settings[key] = value
    if "needs" in settings:
        if settings["needs"] not in NEEDS:
            raise ValueError(f"{where}: needs={settings['needs']!r}; known: {sorted(NEEDS)}")
        if not settings.get("replace"):
            raise ValueError(f"{where}: a block that needs {settings['needs']} says what runs "
                             f"instead: replace=\"OLD => NEW\"")
    return settings


def blocks(page: str) -> list[Block]:
    """Every fenced block of a page, in order, with the marker just above it (if any)."""
    found: list[Block] = []
    lines = (ROOT / page).read_text(encoding="utf-8").splitlines()
    index = 0
    while index < len(lines):
        opened = FENCE.match(lines[index])
        if not opened:
            index += 1
            continue
        fence, language = opened.groups()
        end = next((i for i in range(index + 1, len(lines)) if lines[i].strip() == fence),
                   len(lines))
        previous = lines[index - 1] if index else ""
        marker = MARKER.match(previous)
        where = f"{page}:{index + 1}"
        settings = parse_marker(marker.group(1), where) if marker else {}
        found.append(Block(page, index + 1, language.lower(), "\n".join(lines[index + 1:end])
                           + "\n", settings))
        index = end + 1
    return found


def run_block(block: Block, folder: Path, env: dict[str, str], python: Path,
              command: str | None = None) -> str:
    """Run ``block`` (its :meth:`Block.command`, or ``command``) in ``folder`` as a user would:
    a ``bash`` block with ``env`` (whose ``PATH`` names the environment), a ``python`` block as a
    script there with ``python``; its standard output. A non-zero exit fails with both streams."""
    timeout = float(block.settings.get("timeout", TIMEOUT))
    text = command if command is not None else block.command()
    if RUN_LANGUAGES[block.language] == "python":
        script = folder / f"block_{block.line}.py"
        script.write_text(text, encoding="utf-8")
        argv = [str(python), script.name]
    else:
        argv = ["bash", "-euo", "pipefail", "-c", text]
    done = subprocess.run(argv, cwd=folder, env=env, capture_output=True, text=True,
                          timeout=timeout)
    assert done.returncode == 0, (f"{block.where} exited {done.returncode}:\n{text}\n"
                                  f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    return done.stdout


def printed_after(page: str, block: Block) -> str | None:
    """The ``output`` block right after ``block`` on ``page`` (what it prints), or None."""
    found = blocks(page)
    index = next(i for i, b in enumerate(found) if b.line == block.line)
    following = found[index + 1] if index + 1 < len(found) else None
    return following.text if following is not None and "output" in following.settings else None
