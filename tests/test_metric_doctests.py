"""Every metric module's docstring examples run as a user runs them: from a folder outside the
checkout, after `blindspot install-modules` (here into a fresh modules cache), loading the modules
by the names it installs (``blindspot/<name>``, and the bare ``blindspot``,
``blindspot_accuracy``, ``preference_accuracy``). The cards show the same examples (the generated
ones are the card's own). Every module folder is complete (script, card with the evaluate YAML
header, requirements, Space app), and no card or script loads a path that exists only in the
checkout."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from blindspot.evaluate_modules import install_modules

ROOT = Path(__file__).resolve().parents[1]
MODULES = sorted(p.name for p in (ROOT / "metrics").iterdir()
                 if p.is_dir() and (p / f"{p.name}.py").exists())

# runs the doctests of each installed module script (argv: the scripts) and prints, per module,
# how many examples ran and what failed
RUN_DOCTESTS = """
import doctest, importlib.util, io, json, sys
from contextlib import redirect_stdout
results = {}
for path in sys.argv[1:]:
    name = path.rsplit("/", 1)[-1][:-3]
    spec = importlib.util.spec_from_file_location(f"doctest_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    report = io.StringIO()
    with redirect_stdout(report):
        result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    results[name] = {"attempted": result.attempted, "failed": result.failed,
                     "report": report.getvalue()[-3000:]}
print(json.dumps(results))
"""


@pytest.fixture(scope="module")
def doctest_results(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """Every module installed into a fresh modules cache, and every installed script's doctests
    run in one process whose working directory is a user's empty folder."""
    modules = tmp_path_factory.mktemp("hf-modules")
    scripts = install_modules(modules / "evaluate_modules")
    user_folder = tmp_path_factory.mktemp("my-project")
    env = dict(os.environ, HF_MODULES_CACHE=str(modules), HF_HUB_OFFLINE="1")
    done = subprocess.run([sys.executable, "-c", RUN_DOCTESTS, *map(str, scripts)],
                          cwd=user_folder, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_every_folder_is_a_module() -> None:
    folders = sorted(p.name for p in (ROOT / "metrics").iterdir()
                     if p.is_dir() and not p.name.startswith((".", "_")))
    assert folders == MODULES


@pytest.mark.parametrize("name", MODULES)
def test_module_folder_is_complete(name: str) -> None:
    folder = ROOT / "metrics" / name
    for required in ("README.md", "requirements.txt", "app.py"):
        assert (folder / required).is_file(), f"metrics/{name}/{required} is missing"
    card = (folder / "README.md").read_text(encoding="utf-8")
    header = yaml.safe_load(card.split("---")[1])
    assert "evaluate" in header["tags"] and header["app_file"] == "app.py"


#: a load that works only with the checkout's root as the working directory
CHECKOUT_ONLY = re.compile(r"""evaluate\.load\(\s*["'](?:\./)?metrics/""")


@pytest.mark.parametrize("name", MODULES)
def test_examples_load_installed_names_only(name: str) -> None:
    for file in ("README.md", f"{name}.py"):
        text = (ROOT / "metrics" / name / file).read_text(encoding="utf-8")
        assert not CHECKOUT_ONLY.search(text), f"metrics/{name}/{file} loads a checkout path"


@pytest.mark.xdist_group("metric_doctests")  # the doctests run once, not once per worker
@pytest.mark.parametrize("name", MODULES)
def test_module_docstring_examples_run_from_any_folder(name: str, doctest_results: dict) -> None:
    result = doctest_results[name]
    assert result["attempted"] > 0, f"metrics/{name}/{name}.py has no doctested example"
    assert result["failed"] == 0, result["report"]
