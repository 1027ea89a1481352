"""Make the metric modules loadable by name, from any directory, offline: ``evaluate.load("rouge")``.

Offline, ``evaluate.load(<name>)`` falls back to the newest script it finds in its modules cache
under ``evaluate-metric--<name>``. Registering a module writes our script there, in the same
layout ``evaluate`` itself uses (a folder named by the script's sha256), so a user's script needs
no path. Online, a canonical Hub module of the same name takes precedence; load ours by path then.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

from blindspot.pkgpath import package_dir
from blindspot.suggest import did_you_mean


def metrics_root() -> Path:
    """The folder of the metric modules (the checkout's ``metrics/`` or the installed copy)."""
    root = package_dir("blindspot.metrics")
    if root is None:
        raise RuntimeError("blindspot.metrics is not installed; run `make env`")
    return root


def module_folders() -> list[Path]:
    """Every ``metrics/<name>/`` that holds a ``<name>.py`` module script, by name."""
    return sorted(p for p in metrics_root().iterdir()
                  if p.is_dir() and (p / f"{p.name}.py").is_file())


def module_path(name: str) -> Path:
    """The script of the metric module ``name``; a clear error lists the valid names."""
    folder = metrics_root() / name
    if not (folder / f"{name}.py").is_file():
        names = ", ".join(p.name for p in module_folders())
        raise ValueError(f"unknown metric module {name!r}; valid modules: {names}"
                         f"{did_you_mean(name, (p.name for p in module_folders()))}")
    return folder / f"{name}.py"


def _touch_init(folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "__init__.py").touch()


def install_modules(dynamic_modules_path: str | os.PathLike[str] | None = None) -> list[Path]:
    """Register every metric module in evaluate's modules cache; returns the scripts written."""
    from evaluate.loading import init_dynamic_modules

    root = Path(dynamic_modules_path or init_dynamic_modules())
    _touch_init(root)
    _touch_init(root / "metrics")
    written = []
    for folder in module_folders():
        script = folder / f"{folder.name}.py"
        digest = hashlib.sha256(script.read_bytes()).hexdigest()
        named = root / "metrics" / f"evaluate-metric--{folder.name}"
        _touch_init(named)
        _touch_init(named / digest)
        target = named / digest / script.name
        shutil.copyfile(script, target)
        if (folder / "README.md").is_file():
            shutil.copyfile(folder / "README.md", named / digest / "README.md")
        os.utime(target)  # the newest copy is the one evaluate picks
        written.append(target)
    return written
