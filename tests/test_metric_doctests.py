"""Every metric module's docstring examples run, and every module folder is complete
(script, card with the evaluate YAML header, requirements, Space app)."""

from __future__ import annotations

import doctest
import importlib.util
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
MODULES = sorted(p.name for p in (ROOT / "metrics").iterdir()
                 if p.is_dir() and (p / f"{p.name}.py").exists())


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


@pytest.mark.parametrize("name", MODULES)
def test_module_docstring_examples(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)  # the examples load "metrics/<name>" from the repository root
    spec = importlib.util.spec_from_file_location(f"doctest_{name}",
                                                  ROOT / "metrics" / name / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0, f"metrics/{name}/{name}.py has no doctested example"
    assert result.failed == 0
