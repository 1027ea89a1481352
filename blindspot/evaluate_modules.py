"""The metric modules: generated from the scorers' cards, and loadable offline, from any directory,
under their own namespace: ``evaluate.load("blindspot/rouge")``. A canonical name
(``evaluate.load("rouge")``) is left alone.

Every registered metric with a card (``Scorer.card``: all but ``comet_qe``, which ``comet_score``
serves) has a module folder generated from it, ``metrics/<name>/`` (script, card, requirements,
Space app: :func:`module_files`), written by ``blindspot modules`` (:func:`write_modules`); the
checkout keeps them committed (a test compares them), and the install step writes every module
from the registry, a plugin's metric included. The other folders of ``metrics/`` are written by
hand (:func:`handwritten_folders`): the modules that are not one scorer's.
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

The filter that hides evaluate's cached-module notice for our modules, and the names it knows
them by, live in :mod:`blindspot.quiet` (importing ``blindspot`` installs it, and must stay light);
this module writes the start-up file that installs it before ``blindspot`` is imported.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import sysconfig
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from blindspot.pkgpath import package_dir
from blindspot.quiet import (
    BARE_NAMES,
    BARE_PREFIX,
    CACHED_NOTICE,
    CANONICAL_PREFIXES,
    EVALUATE_LOADING_LOGGER,
    NAMESPACE,
    OurCachedModuleNotice,
    our_cache_names_pattern,
)
from blindspot.report.files import atomic_write_text
from blindspot.scoring.facts import WIDTH, module_card, scorer_facts
from blindspot.scoring.scorer import SCORERS
from blindspot.suggest import did_you_mean

#: written into every version folder we install, so a later install can tell ours for sure
MARKER = ".blindspot-module.json"

_HASH = re.compile(r"^[0-9a-f]{64}$")
_IMPORTS_BLINDSPOT = re.compile(r"^\s*(?:import|from)\s+blindspot[.\s]", re.MULTILINE)


#: the start-up file (``.pth``) that installs the same filter when the interpreter starts, so that
#: even the first ``evaluate.load("blindspot/<name>")`` of a process is quiet (that load logs the
#: notice before it imports our module, hence before ``import blindspot`` could install it)
STARTUP_FILE = "blindspot-evaluate-notice.pth"


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


def module_folders(root: Path | None = None) -> list[Path]:
    """Every ``metrics/<name>/`` (under ``root``) that holds a ``<name>.py`` module script, by
    name."""
    return sorted(p for p in (root or metrics_root()).iterdir()
                  if p.is_dir() and (p / f"{p.name}.py").is_file())


def generated_metrics() -> list[str]:
    """The registered metrics whose module is generated from their card, by name."""
    return sorted(name for name, cls in SCORERS.items() if cls.card is not None)


def handwritten_folders(root: Path | None = None) -> list[Path]:
    """The module folders written by hand: those of no registered metric with a card, and
    none that :func:`write_modules` generated (its marker)."""
    generated = set(generated_metrics())
    return [p for p in module_folders(root) if p.name not in generated
            and GENERATED_MARK not in (p / f"{p.name}.py").read_text(encoding="utf-8")]


def module_names() -> list[str]:
    """Every module ``install_modules`` registers: the generated and the hand-written ones."""
    return sorted({*generated_metrics(), *(p.name for p in handwritten_folders())})


def module_path(name: str) -> Path:
    """The script of the metric module ``name``; a clear error lists the valid names."""
    folder = metrics_root() / name
    if not (folder / f"{name}.py").is_file():
        names = [p.name for p in module_folders()]
        raise ValueError(f"unknown metric module {name!r}; valid modules: {', '.join(names)}"
                         f"{did_you_mean(name, names)}")
    return folder / f"{name}.py"


# -- generated modules ---------------------------------------------------------------------------

#: the Space SDK a card declares: the gradio the project pins (requirements/constraints.txt)
SPACE_SDK_VERSION = "6.17.3"
#: the line every generated script carries (and no hand-written one)
GENERATED_MARK = "Generated by `blindspot modules` from the scorer"

_APP = """import evaluate
from evaluate.utils import launch_gradio_widget

module = evaluate.load("{name}.py")
launch_gradio_widget(module)
"""


def _literal(text: str) -> str:
    """``text`` as the body of a triple-quoted string literal that evaluates back to it."""
    return text.replace("\\", "\\\\").replace('"""', '\\"\\"\\"')


def _noqa(text: str) -> str:
    """ruff's line-length waiver at the end of a string literal whose text has a long line
    (a published BibTeX entry, a doctest's exact output)."""
    return "  # noqa: E501" if any(len(line) > 110 for line in text.splitlines()) else ""


def _origin(metric: str) -> str:
    cls = scorer_facts(metric)
    return f"{cls.__module__}.{cls.__name__}"


def script_text(metric: str) -> str:
    """The module script of ``metric``: its description and examples as the docstring (the
    examples are doctests), and a class that names the scorer; the rest is read from the card
    when the module loads."""
    card = module_card(metric)
    docstring = card.description.strip()
    if card.examples.strip():
        docstring += "\n\nExamples:\n" + textwrap.indent(card.examples.strip("\n"), "    ")
    summary = textwrap.fill(card.summary, WIDTH - 4, initial_indent="    ",
                            subsequent_indent="    ").strip()
    cls = scorer_facts(metric)
    return (f'"""{_literal(docstring)}\n"""{_noqa(docstring)}\n\n'
            f"import blindspot.scoring.module as base\n\n\n"
            f"class {cls.__name__}(base.CardMetric):\n"
            f'    """{_literal(summary)}\n\n'
            f"    {GENERATED_MARK} {_origin(metric)}\n"
            f'    (its ``card``): edit that, not this file."""\n\n'
            f'    scorer_name = "{metric}"\n')


def readme_text(metric: str) -> str:
    """The metric card of ``metric``'s module: the evaluate Space header, then the card's own
    sections (or, where it declares none, the description, how to load it and its inputs), the
    examples and the citation."""
    card = module_card(metric)
    header = "\n".join([
        "---", f"title: {card.title} (blindspot)", f"emoji: {card.emoji}", "colorFrom: blue",
        "colorTo: red", "sdk: gradio", f"sdk_version: {SPACE_SDK_VERSION}", "app_file: app.py",
        "pinned: false", "tags:", "- evaluate", "- metric", "description: >-",
        textwrap.fill(card.summary, WIDTH - 4, initial_indent="  ", subsequent_indent="  "),
        "---"])
    parts = [header, f"# Metric card: {card.title}",
             f"<!-- {GENERATED_MARK} {_origin(metric)} (its card): edit that, not this file. -->"]
    if card.sections.strip():
        parts.append(card.sections.strip())
    else:
        parts += [f"## Metric description\n{card.description.strip()}",
                  "## How to use\nOffline after `make env` (or `blindspot install-modules`), from "
                  "any folder:\n\n```python\nimport evaluate\n"
                  f'metric = evaluate.load("blindspot/{metric}")\n```\n\n'
                  f"`blindspot run --data demo --metrics {metric}` stress-tests it on the demo "
                  "data.",
                  f"## Inputs and outputs\n```text\n{card.inputs.strip()}\n```"]
    if card.examples.strip():
        parts.append(f"## Examples\n```pycon\n{textwrap.dedent(card.examples).strip()}\n```")
    if card.citation.strip():
        parts.append(f"## Citation\n```bibtex\n{card.citation.strip()}\n```")
    return "\n\n".join(parts) + "\n"


def module_files(metric: str) -> dict[str, str]:
    """The files of ``metric``'s generated module folder, by name."""
    requirements = ["blindspot-nlg", *module_card(metric).requirements]
    return {f"{metric}.py": script_text(metric), "README.md": readme_text(metric),
            "requirements.txt": "\n".join(requirements) + "\n",
            "app.py": _APP.format(name=metric)}


def stale_modules(root: Path | None = None, docs: Path | None = None) -> list[str]:
    """What differs between ``root`` (default: the checkout's ``metrics/``) and the generated
    modules, and between ``docs`` (a docs folder) and its generated tables, one line each (empty:
    they are equal): a file that differs or is missing, and a generated folder whose metric is no
    longer registered."""
    root = root or metrics_root()
    stale = []
    for metric in generated_metrics():
        for name, text in module_files(metric).items():
            path = root / metric / name
            if not path.is_file():
                stale.append(f"{path}: missing")
            elif path.read_text(encoding="utf-8") != text:
                stale.append(f"{path}: differs from what its scorer's card generates")
    for folder in _orphans(root):
        stale.append(f"{folder}: generated for a metric that is no longer registered")
    if docs is not None:
        stale += [f"{path}: its generated table differs from the registry's"
                  for path, text in generated_docs(docs).items()
                  if path.read_text(encoding="utf-8") != text]
    return stale


def _orphans(root: Path) -> list[Path]:
    generated = set(generated_metrics())
    return [p for p in module_folders(root) if p.name not in generated
            and GENERATED_MARK in (p / f"{p.name}.py").read_text(encoding="utf-8")]


def write_modules(root: Path | None = None, docs: Path | None = None) -> list[Path]:
    """Write every generated module folder under ``root`` (default: the checkout's
    ``metrics/``), rewriting only the files that differ, remove the generated folders of
    metrics no longer registered, and put the generated tables into the pages of ``docs`` (a docs
    folder); returns the files written or removed."""
    root = root or metrics_root()
    changed = []
    for metric in generated_metrics():
        (root / metric).mkdir(parents=True, exist_ok=True)
        for name, text in module_files(metric).items():
            path = root / metric / name
            if not (path.is_file() and path.read_text(encoding="utf-8") == text):
                atomic_write_text(path, text)
                changed.append(path)
    for folder in _orphans(root):
        shutil.rmtree(folder)
        changed.append(folder)
    for path, text in (generated_docs(docs) if docs is not None else {}).items():
        if path.read_text(encoding="utf-8") != text:
            atomic_write_text(path, text)
            changed.append(path)
    return changed


# -- the docs' tables ---------------------------------------------------------------------------

def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def metric_entries() -> list[dict[str, Any]]:
    """Every registered metric (a plugin's too) with its declared facts, in registry order: what
    ``blindspot metrics`` lists and docs/metrics.md's generated table shows."""
    entries = []
    for metric in SCORERS:
        cls = scorer_facts(metric)
        judged = cls.judged_output()
        outputs = [judged, *(o for o in cls.outputs if o != judged)]
        reads = ["predictions"]
        for column, use in (("references", cls.uses_references), ("sources", cls.uses_source)):
            if use != "none":
                reads.append(column + (" (optional)" if use == "optional" else ""))
        entries.append({
            "metric": metric, "kind": cls.kind, "outputs": outputs,
            "lower_is_better": [o for o in outputs if not cls.higher_is_better(o)],
            "scales": {o: list(s) for o in outputs if (s := cls.natural_range(o))},
            "reads": reads, "options": cls.option_names(),
            "module": load_name(metric) if cls.card is not None else None,
            "scorer": _origin(metric)})
    return entries


def entry_cells(entry: dict[str, Any]) -> list[str]:
    """The cells of one metric's row (:data:`METRIC_COLUMNS`), as plain text."""
    outputs = ", ".join(o + (" (lower is better)" if o in entry["lower_is_better"] else "")
                        for o in entry["outputs"])
    scales = sorted({f"[{low:g}, {high:g}]" for low, high in entry["scales"].values()})
    return [entry["metric"], entry["kind"], outputs, ", ".join(scales) or "—",
            ", ".join(entry["reads"]), entry["module"] or "—"]


#: the columns of the metrics' table, in the terminal and in docs/metrics.md
METRIC_COLUMNS = ("metric", "kind", "outputs (judged first)", "scale", "reads", "module")


def metrics_table() -> str:
    """docs/metrics.md's table of every registered metric and its declared facts."""
    rows = ["| " + " | ".join(METRIC_COLUMNS) + " |", "|" + "---|" * len(METRIC_COLUMNS)]
    for entry in metric_entries():
        cells = entry_cells(entry)
        code = {0, 5} if entry["module"] else {0}
        rows.append("| " + " | ".join(f"`{c}`" if i in code else _cell(c)
                                      for i, c in enumerate(cells)) + " |")
    return "\n".join(rows)


def _handwritten_summary(folder: Path) -> str:
    header = (folder / "README.md").read_text(encoding="utf-8").split("---\n")[1]
    return str(yaml.safe_load(header)["description"])


def modules_table() -> str:
    """docs/metric-reference.md's table of every metric module, generated or written by hand."""
    handwritten = {p.name: p for p in handwritten_folders()}
    rows = ["| module | loads as | what | written |", "|---|---|---|---|"]
    for name in module_names():
        if name in handwritten:
            what, written = _handwritten_summary(handwritten[name]), "by hand"
        else:
            what, written = module_card(name).summary, f"from `{_origin(name)}`"
        rows.append(f"| `{name}` | `evaluate.load(\"{load_name(name)}\")` | {_cell(what)} | "
                    f"{written} |")
    return "\n".join(rows)


#: the generated tables of the docs: page (under docs/) -> (table name, its generator)
DOCS_TABLES: dict[str, tuple[str, Callable[[], str]]] = {
    "metrics.md": ("registered metrics", metrics_table),
    "metric-reference.md": ("modules", modules_table),
}


def _markers(table: str) -> tuple[str, str]:
    return (f"<!-- generated by `blindspot modules`: the {table} table, from the registry; "
            "edit the scorers, not this table -->", f"<!-- end of the generated {table} table -->")


def generated_docs(docs: Path) -> dict[Path, str]:
    """Each page of :data:`DOCS_TABLES` under ``docs`` with its generated table put between its
    markers (a page without them is an error: the table has no place)."""
    pages = {}
    for page, (table, generate) in DOCS_TABLES.items():
        path = docs / page
        text = path.read_text(encoding="utf-8")
        start, end = _markers(table)
        if start not in text or end not in text:
            raise ValueError(f"{path}: the markers of the generated {table} table are missing; "
                             f"put these two lines where it goes:\n{start}\n{end}")
        before, rest = text.split(start, 1)
        after = rest.split(end, 1)[1]
        pages[path] = f"{before}{start}\n{generate()}\n{end}{after}"
    return pages


def docs_folder() -> Path | None:
    """The checkout's docs/ beside metrics/ (None in an installed package)."""
    folder = metrics_root().parent / "docs"
    return folder if all((folder / page).is_file() for page in DOCS_TABLES) else None


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


def _write_version(named: Path, name: str, files: dict[str, str], digest: str) -> Path:
    """Write module ``name`` (its script and card, from ``files``) into ``named/<digest>/`` with
    our marker, after removing our earlier versions there (derived copies; a version without
    our marker is not ours)."""
    _touch_init(named)
    for old in named.iterdir():
        if old.name != digest and old.is_dir() and _HASH.match(old.name) and is_ours(old):
            shutil.rmtree(old)
    _touch_init(named / digest)
    target = named / digest / f"{name}.py"
    for file_name in (target.name, "README.md"):
        if file_name in files:
            (named / digest / file_name).write_text(files[file_name], encoding="utf-8")
    (named / digest / MARKER).write_text(json.dumps({"installed_by": "blindspot",
                                                     "module": name}) + "\n")
    os.utime(target)  # the newest copy is the one evaluate picks
    return target


def _installed_files(name: str) -> dict[str, str]:
    """The script and card ``install_modules`` writes for module ``name``: generated from the
    registry, or read from its hand-written folder."""
    if name in generated_metrics():
        return module_files(name)
    folder = metrics_root() / name
    return {p.name: p.read_text(encoding="utf-8")
            for p in (folder / f"{name}.py", folder / "README.md") if p.is_file()}


def install_modules(dynamic_modules_path: str | os.PathLike[str] | None = None) -> list[Path]:
    """Register every metric module (:func:`module_names`: a plugin's metric too) under our
    namespace in evaluate's modules cache (and the modules of :data:`BARE_NAMES` under their
    bare names too), replacing our earlier versions there and removing the copies older
    blindspot versions wrote under canonical names; returns the scripts written under our
    namespace (one per module)."""
    root = _modules_root(dynamic_modules_path)
    remove_stale_modules(root)
    written = []
    for name in module_names():
        files = _installed_files(name)
        digest = hashlib.sha256(files[f"{name}.py"].encode("utf-8")).hexdigest()
        targets = [_write_version(root / "metrics" / named, name, files, digest)
                   for named in cache_names(name)]
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
