"""Make the metric modules loadable offline, from any directory, under their own namespace:
``evaluate.load("blindspot/rouge")``. A canonical name (``evaluate.load("rouge")``) is left alone.
The modules that are not canonical ones (:data:`BARE_NAMES`: ``blindspot``, ``blindspot_accuracy``,
``preference_accuracy``) also load under their bare names, ``evaluate.load("blindspot")``.

``evaluate.load("<namespace>/<name>")`` is a community module: online it asks the Hub, and when
that fails (offline) it takes the newest script in its modules cache under
``metrics/<namespace>--<name>/<hash>/``. Registering a module writes our script there, in that
layout, with a marker file saying we wrote it. A bare name (``evaluate.load("rouge")``) looks
only under ``evaluate-metric--<name>`` (and the comparison/measurement twins), which we never
write for a canonical name: the user's canonical modules are never overwritten or hidden. The
bare names of :data:`BARE_NAMES` are written there too (no canonical module has them, so nothing is
shadowed), in the same way and with the same marker. evaluate takes a bare name for a local
folder only when ``<name>/<name>.py`` exists under the working directory, so the checkout's root
(whose ``blindspot/`` is the package, without a ``blindspot.py``) loads them from the cache too.

Older versions of blindspot wrote into ``evaluate-metric--<name>``. Those copies are removed, and
only those: a version folder is ours when it holds our marker file, or when it is the legacy
layout only our installer produced (the folder is named by the sha256 of the script's bytes,
evaluate names its own by a hash of the script's code lines) and the script imports blindspot.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import shutil
import sysconfig
from pathlib import Path

from blindspot.pkgpath import package_dir
from blindspot.report.files import atomic_write_text
from blindspot.suggest import did_you_mean

#: the namespace of our modules in ``evaluate.load("blindspot/<name>")``
NAMESPACE = "blindspot"
#: evaluate's own namespace folders (``evaluate.load("<name>")``); we only ever remove from them,
#: except under the bare names below
CANONICAL_PREFIXES = ("evaluate-metric--", "evaluate-comparison--", "evaluate-measurement--")
#: the folder prefix evaluate's cache looks under first for ``evaluate.load("<name>")``
BARE_PREFIX = CANONICAL_PREFIXES[0]
#: our modules that no canonical module is named after: they also load as ``evaluate.load(name)``
#: (the names the project's documentation promised); every other module only as ``blindspot/<name>``
BARE_NAMES = ("blindspot", "blindspot_accuracy", "preference_accuracy")
#: written into every version folder we install, so a later install can tell ours for sure
MARKER = ".blindspot-module.json"

#: evaluate's logger that warns "Using the latest cached version of the module ..." whenever a
#: community module loads offline from its cache
EVALUATE_LOADING_LOGGER = "evaluate.loading"
CACHED_NOTICE = "Using the latest cached version of the module"

_HASH = re.compile(r"^[0-9a-f]{64}$")
_IMPORTS_BLINDSPOT = re.compile(r"^\s*(?:import|from)\s+blindspot[.\s]", re.MULTILINE)


#: the start-up file (``.pth``) that installs the same filter when the interpreter starts, so that
#: even the first ``evaluate.load("blindspot/<name>")`` of a process is quiet (that load logs the
#: notice before it imports our module, hence before ``import blindspot`` could install it)
STARTUP_FILE = "blindspot-evaluate-notice.pth"


def our_cache_names_pattern() -> str:
    """A regular expression for the cache folder name evaluate's notice ends with ("couldn't be
    found locally at <name>,") when the module is ours: ``blindspot--<any>`` or a bare name's."""
    bare = "|".join(re.escape(name) for name in BARE_NAMES)
    return (rf"couldn't be found locally at (?:{re.escape(NAMESPACE)}--[\w.-]+|"
            rf"{re.escape(BARE_PREFIX)}(?:{bare})),")


def is_our_cached_notice(message: str) -> bool:
    """Whether a log message is evaluate's cached-module notice for one of our modules."""
    return message.startswith(CACHED_NOTICE) and re.search(our_cache_names_pattern(),
                                                          message) is not None


class OurCachedModuleNotice(logging.Filter):
    """Drops evaluate's "Using the latest cached version of the module ... couldn't be found ...
    on the Hugging Face Hub" for our modules only (``blindspot/<name>`` and the bare names): our
    modules are never on the Hub, the cached
    copy is the one ``install_modules`` wrote, so the warning says nothing. Other modules keep it."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not is_our_cached_notice(record.getMessage())


def quiet_cached_module_notice() -> None:
    """Install :class:`OurCachedModuleNotice` on evaluate's loading logger (once; importing
    ``blindspot`` does), without importing evaluate. The start-up file's filter, built under the
    same class name, counts as installed."""
    logger = logging.getLogger(EVALUATE_LOADING_LOGGER)
    if not any(type(f).__name__ == OurCachedModuleNotice.__name__ for f in logger.filters):
        logger.addFilter(OurCachedModuleNotice())


def startup_file_text() -> str:
    """The start-up file: a comment, then one line that builds :class:`OurCachedModuleNotice` from the same
    constants, importing nothing but ``logging`` and ``re`` and nothing of blindspot (a file left
    behind by an uninstall still runs without error). ``site`` runs the line inside a function, so
    the filter imports ``re`` when called instead of reading a name the line bound."""
    drop = (f"lambda self, record: not (record.getMessage().startswith({CACHED_NOTICE!r}) "
            f"and __import__('re').search({our_cache_names_pattern()!r}, record.getMessage()) "
            f"is not None)")
    notice = f"type({OurCachedModuleNotice.__name__!r}, (logging.Filter,), {{'filter': {drop}}})"
    return (f"# written by blindspot (python -m blindspot.assets): hides evaluate's notice \"{CACHED_NOTICE}"
            f" ...\" for blindspot's own modules only; delete this file to undo\n"
            f"import logging; logging.getLogger({EVALUATE_LOADING_LOGGER!r}).addFilter({notice}())\n")


def default_site_dir() -> Path:
    """The environment's purelib folder (site-packages), whose ``.pth`` files run at start-up."""
    return Path(sysconfig.get_paths()["purelib"])


def install_startup_filter(site_dir: Path | None = None) -> Path:
    """Write :data:`STARTUP_FILE` into ``site_dir`` (default: :func:`default_site_dir`); the file is
    rewritten only when its content differs. Returns its path."""
    target = (site_dir or default_site_dir()) / STARTUP_FILE
    text = startup_file_text()
    if not (target.is_file() and target.read_text(encoding="utf-8") == text):
        atomic_write_text(target, text)  # a start-up never reads half a file
    return target


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


def load_name(name: str) -> str:
    """What to pass to ``evaluate.load`` for our module ``name`` once installed: the bare name for
    one of :data:`BARE_NAMES`, else ``blindspot/<name>`` (which loads every module)."""
    return name if name in BARE_NAMES else f"{NAMESPACE}/{name}"


def _touch_init(folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "__init__.py").touch()


def _modules_root(dynamic_modules_path: str | os.PathLike[str] | None) -> Path:
    from evaluate.loading import init_dynamic_modules

    root = Path(dynamic_modules_path or init_dynamic_modules())
    _touch_init(root)
    _touch_init(root / "metrics")
    return root


def cache_names(name: str) -> list[str]:
    """The folders of evaluate's modules cache our module ``name`` is written to:
    ``blindspot--<name>``, and ``evaluate-metric--<name>`` for a name of :data:`BARE_NAMES`."""
    return [f"{NAMESPACE}--{name}"] + ([f"{BARE_PREFIX}{name}"] if name in BARE_NAMES else [])


def _write_version(named: Path, folder: Path, digest: str) -> Path:
    """Write the module of ``folder`` into ``named/<digest>/`` with our marker, after removing our
    earlier versions there (derived copies; a version without our marker is not ours)."""
    script = folder / f"{folder.name}.py"
    _touch_init(named)
    for old in named.iterdir():
        if old.name != digest and old.is_dir() and _HASH.match(old.name) and is_ours(old):
            shutil.rmtree(old)
    _touch_init(named / digest)
    target = named / digest / script.name
    shutil.copyfile(script, target)
    if (folder / "README.md").is_file():
        shutil.copyfile(folder / "README.md", named / digest / "README.md")
    (named / digest / MARKER).write_text(json.dumps({"installed_by": "blindspot",
                                                     "module": folder.name}) + "\n")
    os.utime(target)  # the newest copy is the one evaluate picks
    return target


def install_modules(dynamic_modules_path: str | os.PathLike[str] | None = None) -> list[Path]:
    """Register every metric module under our namespace in evaluate's modules cache (and the
    modules of :data:`BARE_NAMES` under their bare names too), replacing our earlier versions
    there and removing the copies older blindspot versions wrote under canonical names; returns
    the scripts written under our namespace (one per module)."""
    root = _modules_root(dynamic_modules_path)
    remove_stale_modules(root)
    written = []
    for folder in module_folders():
        digest = hashlib.sha256((folder / f"{folder.name}.py").read_bytes()).hexdigest()
        targets = [_write_version(root / "metrics" / named, folder, digest)
                   for named in cache_names(folder.name)]
        written.append(targets[0])
    return written


def register_modules(dynamic_modules_path: str | os.PathLike[str] | None = None,
                     site_dir: Path | None = None) -> tuple[list[Path], Path]:
    """The install step (``python -m blindspot.assets``, ``blindspot install-modules``):
    :func:`install_modules`, then :func:`install_startup_filter`; returns what each wrote."""
    return install_modules(dynamic_modules_path), install_startup_filter(site_dir)


def is_ours(version_folder: Path) -> bool:
    """Whether a version folder of evaluate's modules cache was written by a blindspot install."""
    if (version_folder / MARKER).is_file():
        return True
    name = version_folder.parent.name.split("--", 1)[-1]
    script = version_folder / f"{name}.py"
    if not script.is_file():
        return False
    data = script.read_bytes()
    return (hashlib.sha256(data).hexdigest() == version_folder.name
            and bool(_IMPORTS_BLINDSPOT.search(data.decode("utf-8", errors="replace"))))


def remove_stale_modules(dynamic_modules_path: str | os.PathLike[str] | None = None) -> list[Path]:
    """Remove the version folders an older blindspot install wrote under canonical names (and a
    name folder left with none); anything else there is not touched, nor the bare names' folders
    (:func:`install_modules` keeps those current). Returns what was removed."""
    metrics = _modules_root(dynamic_modules_path) / "metrics"
    bare = {f"{BARE_PREFIX}{name}" for name in BARE_NAMES}
    removed = []
    for named in sorted(metrics.iterdir()):
        if not (named.is_dir() and named.name.startswith(CANONICAL_PREFIXES)) or named.name in bare:
            continue
        for version in sorted(named.iterdir()):
            if version.is_dir() and _HASH.match(version.name) and is_ours(version):
                shutil.rmtree(version)
                removed.append(version)
        leftovers = {p.name for p in named.iterdir()} - {"__init__.py", "__pycache__"}
        if removed and removed[-1].parent == named and not leftovers:
            shutil.rmtree(named)
            removed.append(named)
    return removed
