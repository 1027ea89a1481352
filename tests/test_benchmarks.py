"""Every benchmark runs in the suite at its smallest size, so a change that breaks one fails CI.

Each script of benchmarks/ runs as its docstring says a user runs it (``python
benchmarks/NAME.py ...``, a process of its own, a fresh cache) on a few rows, tiny shapes and one
repeat, and must exit 0 having printed its figures (the line its result hangs on). What the
figures say is the benchmarks' own business (speed is no unit test's): that they still run is
this module's. The Ray benchmarks join the session's one Ray cluster (tests/ray_support.py).
"""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from engine_support import SHARED_DATA
from ray_support import Head

ROOT = Path(__file__).resolve().parents[1]
BENCHMARKS = ROOT / "benchmarks"


@dataclass(frozen=True)
class Smoke:
    """A benchmark's smallest run: its arguments (``TMP``: a fresh folder, ``CNNDM`` / ``WMT``:
    the first rows of the shared CNN/DM and WMT21 files) and the texts its output must hold (its
    figures' last line, or the one its verdict is on)."""

    args: tuple[str, ...]
    prints: tuple[str, ...]
    ray: bool = False  # joins the session's Ray cluster (``ADDRESS``, ``CLIENT``)


#: the sections of gpu_scoring.py: on a CPU, at tiny shapes, every one runs
GPU_SECTIONS = ("gpt_ppl", "bertscore", "bartscore", "classifiers", "unieval", "mlm_ppl", "mauve",
                "moverscore", "comet")
SMOKE: dict[str, Smoke] = {
    "bertscore_multiref_speed.py": Smoke(
        ("--docs", "2", "--levels", '{"truncation": [0.3]}', "--seeds", "1"),
        ("largest score difference cached vs previous",)),
    "bertscore_speed.py": Smoke(("--rows", "4", "--repeats", "1"),
                                ("mean F1 ours vs direct differs by",)),
    "code_figures.py": Smoke((), ("internal function-local imports outside cli/",)),
    "faithfulness_rouge.py": Smoke(("--data", "CNNDM", "--tests", "truncation", "--seeds", "1"),
                                   ("ROUGE-L fails here: truncation",)),
    "first_five_minutes.py": Smoke(("--repeat", "1", "--skip-demo"), ("load average after",)),
    "gpt_ppl_speed.py": Smoke(("--n", "2"), ("max relative difference",)),
    "gpu_scoring.py": Smoke(("--size", "tiny", "--n", "2", "--baseline-n", "2", "--pairs", "2",
                             "--bart-pairs", "2", "--mlm-texts", "2", "--cells", "2"),
                            tuple(f"[{section} took" for section in GPU_SECTIONS)),
    "memory_streaming.py": Smoke(("--sizes", "20,40", "--chunk-size", "10"), ("peak RSS ratio",)),
    "num_proc_speedup.py": Smoke(("--rows", "4", "--seeds", "1", "--repeat", "1", "--tests",
                                  "truncation"), ("TARGET",)),
    "perturbation_speed.py": Smoke(("--rows", "2", "--tests", "truncation"), ("TARGET",)),
    "shipped_cards.py": Smoke(("--only", "rep_ngram", "--check"), ("rep_ngram: current",)),
    "space_speed.py": Smoke(("--runs", "1", "--cli-runs", "1", "--think", "1"),
                            ("page run 1:", "load average after")),
    "results_bytes.py": Smoke(("--out", "TMP/out", "--only", "perturb"), ("perturb\t",)),
    "rouge_speed.py": Smoke(("--docs", "2"), ("identical to rouge-score: yes",)),
    "search_wmt21.py": Smoke(("--data", "WMT", "--rows", "1", "--metrics", "chrf", "--seeds", "1",
                              "--out", "TMP/out"), ("generalises",)),
    "ray_client_connect.py": Smoke(("--connects", "1", "--parallel", "1", "--busy", "0",
                                    "--address", "CLIENT"), ("blindspot (3 attempts)",), ray=True),
    "ray_gpu_plan.py": Smoke(("--n", "2", "--address", "ADDRESS"),
                             ("results.json local vs ray: byte-identical",), ray=True),
    "ray_vs_local.py": Smoke(("--rows", "2", "--metrics", "rouge", "--tests", "truncation",
                              "--seeds", "1", "--address", "ADDRESS"),
                             ("results.json identical: True",), ray=True),
}
#: scripts that are not benchmarks of their own, and the benchmarks that run them
HELPERS = {"_child.py": ("memory_streaming.py", "num_proc_speedup.py")}


def test_every_benchmark_has_a_smoke_run() -> None:
    scripts = sorted(path.name for path in BENCHMARKS.glob("*.py"))
    assert scripts == sorted([*SMOKE, *HELPERS])
    for helper, users in HELPERS.items():
        for user in users:
            assert f"from {helper.removesuffix('.py')} import" in (BENCHMARKS / user).read_text(
                encoding="utf-8")


def _first_rows(source: str, rows: int, folder: Path) -> Path:
    path = folder / source
    path.write_text("".join((SHARED_DATA / source).open(encoding="utf-8").readlines()[:rows]),
                    encoding="utf-8")
    return path


def _run(script: str, tmp_path: Path, env: dict[str, str], **fill: str) -> str:
    smoke = SMOKE[script]
    fill |= {"TMP": str(tmp_path),
             "CNNDM": str(_first_rows("cnndm_summeval100_summarization.jsonl", 3, tmp_path)),
             "WMT": str(_first_rows("wmt21_de_en_translation.jsonl", 4, tmp_path))}
    args = []
    for arg in smoke.args:  # a placeholder, alone or before a path's first "/"
        head, slash, rest = arg.partition("/")
        args.append(fill.get(head, head) + slash + rest)
    done = subprocess.run([sys.executable, str(BENCHMARKS / script), *args], cwd=ROOT,
                          env={**env, "BLINDSPOT_CACHE": str(tmp_path / "cache")},
                          capture_output=True, text=True, timeout=600)
    output = done.stdout + done.stderr
    assert done.returncode == 0, output[-4000:]
    assert "Traceback" not in output, output[-4000:]
    for text in smoke.prints:
        assert text in done.stdout, f"{text!r} not printed:\n{done.stdout[-4000:]}"
    return done.stdout


@pytest.mark.parametrize("script", sorted(name for name, smoke in SMOKE.items() if not smoke.ray))
def test_benchmark_runs_at_its_smallest_size(script: str, tmp_path: Path) -> None:
    _run(script, tmp_path, dict(os.environ))


@pytest.mark.parametrize("script", sorted(name for name, smoke in SMOKE.items() if smoke.ray))
def test_ray_benchmark_runs_on_the_session_cluster(script: str, ray_head: Head,
                                                   tmp_path: Path) -> None:
    _run(script, tmp_path, ray_head.env, ADDRESS=ray_head.address, CLIENT=ray_head.client_address)

