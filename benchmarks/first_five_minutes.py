"""Benchmark: what a new user waits for in the first five minutes (issue 19's targets).

Each step runs as a fresh process, timed by wall clock on this machine, all in one run so the
ratios compare like with like (the load average is printed with them):

* ``blindspot --help``, ``blindspot list`` and ``blindspot protocols`` (target: under 1 s each);
* ``import evaluate`` vs ``import evaluate; evaluate.load("blindspot/blindspot")``, warm (the
  installed modules cache; target: ratio <= 1.1) and the first load after install (a fresh
  ``HF_MODULES_CACHE`` filled by ``install_modules()``, as ``python -m blindspot.assets`` does;
  target: ratio <= 2);
* ``blindspot demo`` on a cold cache (fresh ``--out`` and ``BLINDSPOT_CACHE``): time to the first
  table on screen (target 30 s), to the last one and in all (target 60 s, issue 41), its CPU
  seconds, and how far each of its forecasts was from what it forecast (target: within 25%): a
  model metric's "about N s" until its table, each progress bar's first remaining time until the
  bar is full (its bars drawn on a pseudo-terminal, as on a user's screen); then again on the
  same folders (warm: target a few seconds). ``--demo-only`` measures the demo alone.

* with ``--threads``: SmolLM2's forward pass on 8 demo translations, tokens/s on 1 thread and on
  every core, beside the machine's own float32 matmul rate (GFLOP/s) on each, interleaved.
* with ``--env``: ``make env`` as on a fresh machine (target 90 s), through the Makefile's own
  target with ``VENV`` in a temporary folder and empty uv, pip and Hugging Face caches there; the
  time of each step (venv, uv, each install, WordNet, SmolLM2 conversion, module install) comes
  from when make and ``python -m blindspot.assets`` print its line. It downloads every package
  (2.4 GB unpacked): run it once before and once after a change, not in a loop.
* with ``--pip`` (or ``--only-pip``, which skips everything above): the README's pip install
  into a fresh venv with an empty pip cache, from this tree's wheel, each line timed, twice: as
  the README says for a machine without a GPU (torch's CPU build first, then its three lines)
  and as pip chooses alone (``pip install ".[models]"``: on Linux the CUDA build of torch with
  its nvidia packages); the size of each environment and its count of packages. It downloads
  several GB: run it once per change of the requirements.

    python benchmarks/first_five_minutes.py [--repeat 3] [--skip-demo | --demo-only] [--threads]
                                            [--env] [--pip | --only-pip]
                                            [--baseline /path/to/main/checkout] [--write-docs]

``--write-docs`` writes this tree's figures to docs/first-five-minutes.md, the page the README and
docs quote for every timing (tests/test_docs_blocks.py refuses timings typed into other pages):
the startup and demo table, and, with ``--pip``, its section on the pip environments (a run
without ``--pip`` keeps that section as it was, ``--only-pip`` keeps the table).

Startup times are the median of ``--repeat`` runs; the demo runs once cold and once warm.
"""

from __future__ import annotations

import argparse
import datetime
import fcntl
import importlib.util
import os
import pty
import re
import resource
import statistics
import struct
import subprocess
import sys
import sysconfig
import tempfile
import termios
import textwrap
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CLI = [sys.executable, "-m", "blindspot.cli"]
#: the checkout measured now: the working directory of every child (``-m`` puts it first on the
#: path, before PYTHONPATH)
_TREE = [Path(__file__).resolve().parents[1]]
IMPORT_EVALUATE = "import evaluate"
LOAD_MODULE = "import evaluate; evaluate.load('blindspot/blindspot')"
INSTALL_MODULES = "from blindspot.evaluate_modules import install_modules; install_modules()"
#: a line the summary table prints first (its header row)
TABLE_MARK = "┃ test"
#: ``make env``'s steps, each named by a text in the line that starts it (make echoes each
#: command; ``python -m blindspot.assets`` prints a line as each of its steps ends), in order;
#: a step lasts until the next step's line
ENV_STEPS: tuple[tuple[str, str], ...] = (
    ("-m venv", "venv"),
    ("install -q uv==", "uv (pip install uv)"),
    ("requirements/base.txt", "install the package's requirements ([all]) and the test tools"),
    ("requirements/nodeps.txt", "install requirements/nodeps.txt (--no-deps)"),
    ("-e .", "install blindspot (editable)"),
    ("-m blindspot.assets", "WordNet for NLTK"),
    ("WordNet for NLTK:", "SmolLM2 conversion"),
    ("SmolLM2-135M model folder:", "metric modules registered with evaluate"),
    ("metric modules registered", ""),
)


#: below this share of the environment's modules compiled to bytecode, the figures are not a
#: user's: where Python may not write bytecode (PYTHONDONTWRITEBYTECODE), every process compiles
#: torch, transformers and datasets from source, many seconds each (pip compiles at install)
COMPILED_AT_LEAST = 0.9


def compiled_share() -> float:
    """The share of this environment's installed ``.py`` files whose bytecode is there and
    current (what an import reads instead of compiling the source)."""
    sources = list(Path(sysconfig.get_paths()["purelib"]).rglob("*.py"))
    current = 0
    for source in sources:
        cached = Path(importlib.util.cache_from_source(str(source)))
        try:
            current += cached.stat().st_mtime >= source.stat().st_mtime
        except OSError:  # no bytecode for it
            continue
    return current / max(len(sources), 1)


def _env(**extra: str) -> dict[str, str]:
    return dict(os.environ, HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1", TRANSFORMERS_OFFLINE="1",
                TOKENIZERS_PARALLELISM="false", GRADIO_ANALYTICS_ENABLED="False",
                HF_HUB_DISABLE_TELEMETRY="1", **extra)


def _time(cmd: list[str], **env: str) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, env=_env(**env), check=True, capture_output=True, cwd=_TREE[0])
    return time.perf_counter() - start


def _median(cmd: list[str], repeat: int, **env: str) -> float:
    return statistics.median(_time(cmd, **env) for _ in range(repeat))


def _python(code: str) -> list[str]:
    return [sys.executable, "-c", code]


def _first_load(repeat: int) -> tuple[float, float]:
    """(import evaluate, first evaluate.load) in a fresh modules cache each time, after the
    install step registered the modules there."""
    imports, loads = [], []
    for _ in range(repeat):
        with tempfile.TemporaryDirectory() as modules:
            subprocess.run(_python(INSTALL_MODULES), env=_env(HF_MODULES_CACHE=modules),
                           check=True, capture_output=True, cwd=_TREE[0])
            imports.append(_time(_python(IMPORT_EVALUATE), HF_MODULES_CACHE=modules))
            loads.append(_time(_python(LOAD_MODULE), HF_MODULES_CACHE=modules))
    return statistics.median(imports), statistics.median(loads)


#: the forecast the demo prints before a model metric scores
FORECAST = re.compile(r"scoring ([\d,]+) texts with (\S+): about ([\d,]+) s")
#: a progress bar as tqdm draws it: its name, count, total, elapsed and remaining time
BAR = re.compile(r"(perturbing|scoring):\s+\d+%\|[^|]*\|\s*(\d+)/(\d+) \[([\d:]+)<([\d:?]+)")
#: a forecast that took less than this is not judged (a second's noise is most of it)
FORECAST_FLOOR_S = 5.0


@dataclass
class DemoTimes:
    """One ``blindspot demo``: when its first and last tables came, when it ended, and each of
    its forecasts as (what, said, took) in seconds: a model metric's "about N s" until its
    table, and each progress bar's first remaining time until the bar was full."""

    first_table: float | None
    last_table: float | None
    done: float
    forecasts: list[tuple[str, float, float]]

    def worst_forecast(self) -> float | None:
        """The largest |said / took - 1| of the forecasts that took long enough to judge."""
        judged = [abs(said / took - 1) for _, said, took in self.forecasts
                  if took >= FORECAST_FLOOR_S]
        return max(judged) if judged else None


def _clock(text: str) -> float:
    """tqdm's ``MM:SS`` or ``H:MM:SS`` in seconds."""
    seconds = 0.0
    for part in text.split(":"):
        seconds = seconds * 60 + float(part)
    return seconds


def _read_lines(stream: Any, name: str, start: float, events: list[tuple[float, str, str]]
                ) -> None:
    """Each line of ``stream`` (a bar's redraws end in \\r) as (seconds since start, name, text)."""
    pending = ""
    while True:
        try:
            chunk = os.read(stream, 4096) if isinstance(stream, int) else stream.read1(4096)
        except OSError:  # the terminal's other end closed
            chunk = b""
        if not chunk:
            break
        pending += chunk.decode("utf-8", errors="replace")
        *lines, pending = re.split(r"[\r\n]", pending)
        now = time.perf_counter() - start
        events.extend((now, name, line) for line in lines if line.strip())


def _forecasts(events: list[tuple[float, str, str]]) -> list[tuple[str, float, float]]:
    """(what, said, took) of each forecast in the demo's output (see :class:`DemoTimes`)."""
    tables = [t for t, name, line in events if name == "stdout" and TABLE_MARK in line]
    found = []
    for t, name, line in events:
        if name == "stderr" and (said := FORECAST.search(line)):
            took = next((table - t for table in tables if table > t), None)
            if took is not None:
                found.append((f"{said[2]} ({said[1]} texts)", float(said[3].replace(",", "")),
                              took))
    bar: tuple[str, float, float] | None = None  # (name, when it first forecast, what it said)
    for t, name, line in events:
        if name != "stderr" or not (drawn := BAR.search(line)):
            continue
        what, n, total, remaining = drawn[1], int(drawn[2]), int(drawn[3]), drawn[5]
        if n == 0:
            bar = None
        elif bar is None and remaining != "?" and n < total:
            bar = (f"{what} bar at {n}/{total}", t, _clock(remaining))
        elif bar is not None and n == total:
            found.append((bar[0], bar[2], t - bar[1]))
            bar = None
    return found


def _demo(out: Path, cache: Path) -> DemoTimes:
    """``blindspot demo`` as a user sees it: its tables on stdout, its bars and forecasts on a
    terminal (a pseudo-terminal: tqdm redraws there as on a user's screen), each line timed."""
    start = time.perf_counter()
    events: list[tuple[float, str, str]] = []
    screen, terminal = pty.openpty()
    # a screen of 40 x 160 characters: a terminal of no width gets no bars drawn
    fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 160, 0, 0))
    with subprocess.Popen([*CLI, "demo", "--out", str(out)], stdout=subprocess.PIPE,
                          stderr=terminal, env=_env(BLINDSPOT_CACHE=str(cache), COLUMNS="160"),
                          cwd=_TREE[0]) as proc:
        os.close(terminal)
        readers = [threading.Thread(target=_read_lines, args=(source, name, start, events))
                   for source, name in ((proc.stdout, "stdout"), (screen, "stderr"))]
        for reader in readers:
            reader.start()
        proc.wait()
        for reader in readers:
            reader.join()
    os.close(screen)
    if proc.returncode:
        raise SystemExit(f"blindspot demo exited with {proc.returncode}")
    tables = [t for t, name, line in events if name == "stdout" and TABLE_MARK in line]
    return DemoTimes(tables[0] if tables else None, tables[-1] if tables else None,
                     time.perf_counter() - start, _forecasts(events))


def _env_step(line: str, next_step: int) -> int | None:
    """The index in :data:`ENV_STEPS` of the step ``line`` starts, or None."""
    for index in range(next_step, len(ENV_STEPS)):
        if ENV_STEPS[index][0] in line:
            return index
    return None


def _make_env(tree: Path) -> tuple[list[tuple[str, float]], float]:
    """([(step, seconds)], seconds in all) of ``make env`` into a fresh venv with cold caches."""
    steps: list[tuple[str, float]] = []
    with tempfile.TemporaryDirectory() as tmp:
        env = _env(UV_CACHE_DIR=f"{tmp}/uv-cache", PIP_NO_CACHE_DIR="1", HF_HOME=f"{tmp}/hf",
                   HF_MODULES_CACHE=f"{tmp}/hf/modules")
        env.pop("PYTHONPATH", None)  # the new venv imports its own editable install
        start = last = time.perf_counter()
        current: int | None = None
        with subprocess.Popen(["make", "-C", str(tree), "env", f"VENV={tmp}/venv"],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              env=env) as proc:
            assert proc.stdout is not None
            for line in proc.stdout:
                found = _env_step(line, 0 if current is None else current + 1)
                if found is None:
                    continue
                now = time.perf_counter()
                if current is not None:
                    steps.append((ENV_STEPS[current][1], now - last))
                current, last = found, now
        if proc.returncode:
            raise SystemExit(f"make env exited with {proc.returncode}")
        total = time.perf_counter() - start
        if current is not None and ENV_STEPS[current][1]:
            steps.append((ENV_STEPS[current][1], time.perf_counter() - last))
    return steps, total


#: the README's pip install for a machine without a GPU (its install block, the clone's "." the
#: wheel built from the tree), after torch's CPU build: here the local CPU wheel pip is configured
#: with stands in for ``--index-url https://download.pytorch.org/whl/cpu``, out of reach here
PIP_CPU_TORCH = "pip install torch==2.13.0"
PIP_DEFAULT = 'pip install "{wheel}[models]"'
#: the README's install block, read from the README (its first line opens it)
README_INSTALL = 'pip install ".[models,judges,space]"'


def _readme_install(tree: Path, wheel: Path) -> list[str]:
    """The README's install lines, as printed, the clone's ``"."`` being ``wheel``."""
    text = (tree / "README.md").read_text(encoding="utf-8")
    start = text.index(README_INSTALL)
    block = text[start:text.index("```", start)]
    return [line.split("  #")[0].strip().replace('".[', f'"{wheel}[')
            for line in block.splitlines() if line.strip()]


def _pip_env(wheel: Path, lines: list[str]) -> dict[str, Any]:
    """Each of ``lines`` run in a fresh venv with an empty pip cache, timed; the environment's
    size (bytes), package count, torch version and count of nvidia packages."""
    with tempfile.TemporaryDirectory() as tmp:
        venv, user = Path(tmp) / "venv", Path(tmp) / "user"
        user.mkdir()
        env = _env(PIP_CACHE_DIR=f"{tmp}/pip-cache", PIP_DISABLE_PIP_VERSION_CHECK="1",
                   HF_HOME=f"{tmp}/hf", BLINDSPOT_CACHE=f"{tmp}/cache")
        env.pop("PYTHONPATH", None)
        env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env['PATH']}"
        start = time.perf_counter()
        subprocess.run([sys._base_executable, "-m", "venv", str(venv)], check=True, env=env)
        steps = [("python -m venv", time.perf_counter() - start)]
        for line in lines:
            began = time.perf_counter()
            subprocess.run(["bash", "-c", line], check=True, env=env, cwd=user,
                           stdout=subprocess.DEVNULL)
            steps.append((line.replace(str(wheel), "."), time.perf_counter() - began))
        total = time.perf_counter() - start
        frozen = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "list",
                                 "--format=freeze"], check=True, env=env, capture_output=True,
                                text=True).stdout.splitlines()
        size = int(subprocess.run(["du", "-sb", str(venv)], check=True, capture_output=True,
                                  text=True).stdout.split()[0])
    torch = next((line.split("==")[1] for line in frozen if line.startswith("torch==")), "-")
    return {"steps": steps, "total": total, "size": size, "packages": len(frozen),
            "torch": torch, "nvidia": sum(line.startswith("nvidia-") for line in frozen)}


def _pip(tree: Path) -> dict[str, dict[str, Any]]:
    """The README's pip install (CPU torch first) and pip's own choice, from ``tree``'s wheel."""
    with tempfile.TemporaryDirectory() as tmp:
        uv = Path(sys.executable).parent / "uv"  # make env installs it into the venv
        subprocess.run([str(uv), "build", "--quiet", "--wheel", "--out-dir", tmp, str(tree)],
                       check=True, env=_env())
        wheel = next(Path(tmp).glob("*.whl"))
        return {"cpu": _pip_env(wheel, [PIP_CPU_TORCH, *_readme_install(tree, wheel)]),
                "default": _pip_env(wheel, [PIP_DEFAULT.format(wheel=wheel)])}


def _report_pip(found: dict[str, dict[str, Any]]) -> None:
    for name, measured in found.items():
        print(f"-- pip install, {name}: {measured['total']:.0f} s, "
              f"{measured['size'] / 1e9:.2f} GB, {measured['packages']} packages, torch "
              f"{measured['torch']} ({measured['nvidia']} nvidia packages)")
        for step, seconds in measured["steps"]:
            _row("  " + step[:42], seconds, "")


def _row(name: str, seconds: float | None, target: str, note: str = "") -> None:
    shown = "-" if seconds is None else f"{seconds:7.2f} s"
    print(f"{name:<44} {shown:>10}   {target:<22} {note}")


def _threads(repeat: int) -> None:
    """SmolLM2 tokens/s and matmul GFLOP/s per thread count, interleaved."""
    import torch

    from blindspot.demo import read_demo
    from blindspot.models import load_causal_lm

    tokenizer, model = load_causal_lm("smollm2")
    tokenizer.pad_token = tokenizer.pad_token or tokenizer.eos_token
    batch = tokenizer([row["gold"] for row in read_demo("translation")][:8], return_tensors="pt",
                      padding=True)
    tokens = int(batch["attention_mask"].sum())
    params = sum(p.numel() for p in model.parameters())
    a, b = torch.randn(512, 576), torch.randn(576, 1536)
    for _ in range(repeat):
        for threads in sorted({1, os.cpu_count() or 1}):
            torch.set_num_threads(threads)
            start = time.perf_counter()
            with torch.inference_mode():
                model(**batch, use_cache=False)
            forward = time.perf_counter() - start
            start = time.perf_counter()
            for _ in range(20):
                a @ b
            matmul = 20 * 2 * a.shape[0] * a.shape[1] * b.shape[1] / (time.perf_counter() - start)
            print(f"threads {threads}: SmolLM2 {tokens / forward:6.0f} tokens/s "
                  f"({2 * params * tokens / forward / 1e9:5.1f} GFLOP/s), matmul "
                  f"{matmul / 1e9:5.1f} GFLOP/s, load {os.getloadavg()[0]:.1f}")


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _measure_demo(figures: dict[str, Any]) -> None:
    """The demo cold (with its CPU seconds: a figure a busy machine inflates less than the
    wall clock) and warm, into ``figures``."""
    with tempfile.TemporaryDirectory() as tmp:
        out, cache = Path(tmp) / "demo", Path(tmp) / "cache"
        cpu = _children_cpu()
        cold = _demo(out, cache)
        figures.update(demo_first=cold.first_table, demo_last=cold.last_table, demo=cold.done,
                       demo_cpu=_children_cpu() - cpu, demo_forecast=cold.worst_forecast(),
                       demo_forecasts=cold.forecasts, demo_warm=_demo(out, cache).done)


def _measure(args: argparse.Namespace, tree: Path) -> dict[str, Any]:
    """Every figure with ``tree``'s blindspot first on the path."""
    os.environ["PYTHONPATH"] = str(tree)
    _TREE[0] = tree
    figures: dict[str, Any] = {}
    if not args.demo_only:
        figures.update({"help": _median([*CLI, "--help"], args.repeat),
                        "list": _median([*CLI, "list"], args.repeat),
                        "protocols": _median([*CLI, "protocols"], args.repeat),
                        "import": _median(_python(IMPORT_EVALUATE), args.repeat),
                        "load": _median(_python(LOAD_MODULE), args.repeat)})
        figures["first_import"], figures["first_load"] = _first_load(args.repeat)
    if not args.skip_demo:
        _measure_demo(figures)
    if args.env:
        steps, figures["env"] = _make_env(tree)
        figures.update({f"env: {name}": seconds for name, seconds in steps})
    return figures


def _report(name: str, f: dict[str, Any]) -> None:
    print(f"-- {name}")
    if "help" in f:
        _row("blindspot --help", f["help"], "< 1 s")
        _row("blindspot list", f["list"], "< 1 s")
        _row("blindspot protocols", f["protocols"], "< 1 s")
        _row("import evaluate (warm)", f["import"], "")
        _row("evaluate.load('blindspot/blindspot') (warm)", f["load"], "<= 1.1x import",
             f"{f['load'] / f['import']:.2f}x")
        _row("import evaluate (fresh modules cache)", f["first_import"], "")
        _row("evaluate.load, first after install", f["first_load"], "<= 2x import",
             f"{f['first_load'] / f['first_import']:.2f}x")
    if "demo" in f:
        _row("blindspot demo, cold: first table", f["demo_first"], "<= 30 s")
        _row("blindspot demo, cold: last table", f["demo_last"], "",
             "then the report folders are written")
        _row("blindspot demo, cold: all", f["demo"], "<= 60 s",
             f"{f['demo_cpu']:.0f} CPU s")
        _row("blindspot demo, warm (same out and cache)", f["demo_warm"], "a few s",
             f"{f['demo_warm'] / f['demo']:.2f}x cold")
        worst = f["demo_forecast"]
        print(f"{'its forecasts, the worst off by':<44} "
              f"{'-' if worst is None else f'{100 * worst:7.0f} %':>10}   <= 25 %")
        for what, said, took in f["demo_forecasts"]:
            print(f"  {what:<42} said {said:6.0f} s, took {took:6.1f} s "
                  f"({'not judged: short' if took < FORECAST_FLOOR_S else f'{said / took:.2f}x'})")
    if "env" in f:
        _row("make env, fresh venv and cold caches", f["env"], "<= 90 s")
        for name, seconds in f.items():
            if name.startswith("env: "):
                _row("  " + name.removeprefix("env: "), seconds, "")


#: the page the docs quote timings from, and its first line (tests/test_docs_blocks.py checks it)
DOCS_PAGE = Path(__file__).resolve().parents[1] / "docs" / "first-five-minutes.md"
DOCS_HEADER = "<!-- written by benchmarks/first_five_minutes.py --write-docs: do not edit -->"
DOCS_ROWS = (("help", "`blindspot --help`", "under 1 s"), ("list", "`blindspot list`", "under 1 s"),
             ("protocols", "`blindspot protocols`", "under 1 s"),
             ("import", "`import evaluate`, for comparison", ""),
             ("load", "`evaluate.load('blindspot/blindspot')`, warm", "1.1x import"),
             ("first_load", "`evaluate.load`, the first after the install step", "2x import"),
             ("demo_first", "`blindspot demo`, cold caches: the first table on screen", "30 s"),
             ("demo", "`blindspot demo`, cold caches: done", "60 s"),
             ("demo_warm", "`blindspot demo` again (finished work reused, no model loaded)",
              "a few s"),
             ("env", "`make env` into a fresh venv with cold caches (`--env`)", "90 s"))


def _forecast_rows(f: dict[str, Any]) -> list[str]:
    """The demo's forecasts, each beside what it took (those a second's noise decides left out)."""
    judged = [(what, said, took) for what, said, took in f.get("demo_forecasts", ())
              if took >= FORECAST_FLOOR_S]
    if not judged:
        return []
    return ["", "What the cold demo forecast, and what it took (target: within 25%):", "",
            "| forecast | said (s) | took (s) |", "|---|---|---|",
            *(f"| {what} | {said:.0f} | {took:.1f} |" for what, said, took in judged)]


#: the heading of the page's pip section (the README links to its anchor, #pip-install)
PIP_SECTION = "## pip install"


def _pip_section(found: dict[str, dict[str, Any]], load: float) -> str:
    """The page's section on the pip environments, from :func:`_pip`'s figures."""
    cpu, default = found["cpu"], found["default"]
    about = textwrap.wrap(
        f"The README's pip install, measured by `python benchmarks/first_five_minutes.py --pip "
        f"--write-docs` on {datetime.date.today().isoformat()} ({os.cpu_count()} cores, load "
        f"average {load:.1f}): each line in a fresh venv with an empty pip cache, from the wheel "
        f"of the tree (the clone's `.`). Without a GPU, as the README says: torch's CPU build "
        f"first (here the same wheel from a local folder, PyTorch's CPU index being out of "
        f"reach), then the README's three lines. As pip chooses alone, `pip install "
        f"\".[models]\"` brings torch {default['torch']} with {default['nvidia']} nvidia "
        f"packages.", 100)
    rows = [f"| {step} | {seconds:.0f} |" for step, seconds in cpu["steps"]]
    return "\n".join([
        PIP_SECTION, "", *about, "",
        "| environment | install, s | size, GB | packages | torch |", "|---|---|---|---|---|",
        f"| README, CPU torch first | {cpu['total']:.0f} | {cpu['size'] / 1e9:.1f} | "
        f"{cpu['packages']} | {cpu['torch']} |",
        f"| `pip install \".[models]\"` as pip chooses | {default['total']:.0f} | "
        f"{default['size'] / 1e9:.1f} | {default['packages']} | {default['torch']} |", "",
        "The README's lines, one by one (seconds):", "", "| line | seconds |", "|---|---|",
        *rows, ""])


def _write_docs(f: dict[str, float | None] | None, load: float,
                pip: dict[str, dict[str, Any]] | None = None) -> None:
    """docs/first-five-minutes.md: this run's figures, the one source of the timings docs quote
    (a part this run did not measure is kept as the page had it)."""
    old = DOCS_PAGE.read_text(encoding="utf-8") if DOCS_PAGE.is_file() else ""
    kept_main, _, kept_pip = old.partition(PIP_SECTION)
    main = kept_main.rstrip() + "\n"
    if f is not None:
        rows = [f"| {label} | {f[key]:.1f} | {target or '-'} |" for key, label, target in DOCS_ROWS
                if f.get(key) is not None]
        about = textwrap.wrap(
            f"What a new user waits for, measured by `python benchmarks/first_five_minutes.py "
            f"--write-docs` on {datetime.date.today().isoformat()}: {os.cpu_count()} cores, load "
            f"average {load:.1f} before the run (a load above the number of cores means other work "
            f"shared them: every figure is slower than on a quiet machine). Each command runs as a "
            f"fresh process; startup times are the median of `--repeat` runs.", 100)
        main = "\n".join([
            DOCS_HEADER, "", "# The first five minutes, timed", "", *about, "",
            "| step | seconds | target |", "|---|---|---|", *rows, *_forecast_rows(f), ""])
    section = _pip_section(pip, load) if pip is not None else (
        PIP_SECTION + kept_pip if kept_pip else "")
    DOCS_PAGE.write_text(main + ("\n" + section if section else ""), encoding="utf-8")
    print(f"wrote {DOCS_PAGE}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--skip-demo", action="store_true")
    parser.add_argument("--demo-only", action="store_true",
                        help="only the demo, cold and warm (not with --write-docs)")
    parser.add_argument("--threads", action="store_true",
                        help="also SmolLM2 tokens/s vs matmul GFLOP/s per thread count")
    parser.add_argument("--env", action="store_true",
                        help="also make env into a fresh venv with cold caches (downloads GBs)")
    parser.add_argument("--pip", action="store_true",
                        help="also the README's pip install and pip's own choice (downloads GBs)")
    parser.add_argument("--only-pip", action="store_true",
                        help="only the pip environments (no startup, demo or make env figures)")
    parser.add_argument("--write-docs", action="store_true",
                        help="write this tree's figures to docs/first-five-minutes.md")
    parser.add_argument("--baseline", type=Path,
                        help="another checkout (e.g. main) measured first in the same run")
    args = parser.parse_args()
    if args.demo_only and (args.write_docs or args.skip_demo):
        parser.error("--demo-only measures the demo alone: not with --write-docs or --skip-demo")
    here = Path(__file__).resolve().parents[1]
    trees = ([("baseline " + str(args.baseline), args.baseline)] if args.baseline else []) + [
        ("this tree " + str(here), here)]
    before = os.getloadavg()[0]
    print(f"load average before: {before:.2f} (cores: {os.cpu_count()})")
    compiled = compiled_share()
    print(f"bytecode: {compiled:.0%} of the environment's modules compiled")
    if compiled < COMPILED_AT_LEAST and sys.flags.dont_write_bytecode:
        print(f"warning: only {compiled:.0%} of the environment's modules are compiled and "
              "PYTHONDONTWRITEBYTECODE is set, so every process compiles them from source: not "
              "a user's figures (run `python -m compileall -q -j 0` on its site-packages, as make "
              "env's --compile-bytecode does)")
        if args.write_docs:
            print("error: --write-docs refused: these figures would not be a user's",
                  file=sys.stderr)
            return 2
    figures: dict[str, float | None] | None = None
    pip = None
    for name, tree in trees:
        if not args.only_pip:
            figures = _measure(args, tree)
            _report(name, figures)
        if args.pip or args.only_pip:
            print(f"-- {name}")
            pip = _pip(tree)
            _report_pip(pip)
        print(f"load average: {os.getloadavg()[0]:.2f}")
    if args.write_docs:
        _write_docs(figures, before, pip)
    if args.threads:
        _threads(args.repeat)
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
