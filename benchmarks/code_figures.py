"""Figures of the code's shape: lines, function-local imports and import circles per layer.

Issues 17 (one orchestration layer) and 29 (one door, one name per thing) ask for before/after
figures: the modules that write a report file, the CLI's modules and parsers, the module names
used twice and the longest functions are printed too. Run it on any checkout:

    python benchmarks/code_figures.py            # this checkout
    python benchmarks/code_figures.py --root DIR # another one (e.g. a worktree of an older commit)

Function-local imports are ``import``/``from`` statements inside a function body; the internal
ones import blindspot's own modules, and outside ``cli/`` (one a command) each needs a reason (a
real circle or a heavy dependency) in a comment on its line or the line above (issue 41); an import
circle is a strongly connected set of modules in the graph of ``blindspot.*`` imports (all of
them, and top-of-module ones only). ruff and mypy figures come from ``make check``.
"""

from __future__ import annotations

import argparse
import ast
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

PACKAGES = ("blindspot", "perturbations", "metrics", "datasets_scripts")
ALIASED = {"perturbations", "metrics", "datasets_scripts"}  # installed as blindspot.<name>
ORCHESTRATION = ("blindspot/runner", "blindspot/protocols", "blindspot/cli", "blindspot/demo_job",
                 "blindspot/search/protocol")


@dataclass(frozen=True)
class LocalImport:
    """An import of one of blindspot's own modules inside a function."""

    path: Path
    line: int
    target: str
    reason: str  # the comment on its line or the line above ("" when none)

    def where(self, root: Path) -> str:
        return f"{self.path.relative_to(root).as_posix()}:{self.line} imports {self.target}"


@dataclass
class ModuleFacts:
    name: str
    path: Path
    lines: int
    local_imports: int
    imports_top: set[str] = field(default_factory=set)
    imports_all: set[str] = field(default_factory=set)
    internal_local: list[LocalImport] = field(default_factory=list)


def module_name(root: Path, path: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    if parts[0] in ALIASED:
        parts = ["blindspot", *parts]
    return ".".join(parts)


def resolve(current: str, is_package: bool, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = current.split(".")
    base = base if is_package else base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


def comment_of(lines: list[str], line: int) -> str:
    """The comment on 1-based ``line`` of ``lines`` or, failing that, on the line above."""
    for text in (lines[line - 1], lines[line - 2] if line > 1 else ""):
        if "#" in text:
            return text.split("#", 1)[1].strip()
    return ""


def scan(root: Path, path: Path) -> ModuleFacts:
    source = path.read_text(encoding="utf-8")
    tree = ast.parse(source)
    lines = source.splitlines()
    name = module_name(root, path)
    facts = ModuleFacts(name, path, len(source.splitlines()), 0)
    inside: set[int] = set()
    for fn in ast.walk(tree):
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for node in ast.walk(fn):
                if isinstance(node, (ast.Import, ast.ImportFrom)):
                    inside.add(id(node))
    for node in ast.walk(tree):
        if not isinstance(node, (ast.Import, ast.ImportFrom)):
            continue
        local = id(node) in inside
        facts.local_imports += local
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        else:
            base = resolve(name, path.name == "__init__.py", node)
            targets = [f"{base}.{a.name}" for a in node.names] + [base]
        internal = False
        for target in targets:
            if target.split(".")[0] in ALIASED:
                target = "blindspot." + target
            if target.startswith("blindspot"):
                internal = True
                facts.imports_all.add(target)
                if not local and not _under_type_checking(tree, node):
                    facts.imports_top.add(target)
        if local and internal:
            base = targets[-1] if isinstance(node, ast.ImportFrom) else targets[0]
            base = "blindspot." + base if base.split(".")[0] in ALIASED else base
            facts.internal_local.append(LocalImport(path, node.lineno, base,
                                                    comment_of(lines, node.lineno)))
    return facts


#: where internal function-local imports are the rule: a command module imports its work
LOCAL_IMPORTS_HOME = "blindspot/cli/"


def internal_local_imports(root: Path, modules: dict[str, ModuleFacts]) -> list[LocalImport]:
    """The internal function-local imports outside ``cli/``, in file order."""
    return sorted((imp for facts in modules.values() for imp in facts.internal_local
                   if not imp.path.relative_to(root).as_posix().startswith(LOCAL_IMPORTS_HOME)),
                  key=lambda imp: (imp.path, imp.line))


def _under_type_checking(tree: ast.Module, node: ast.AST) -> bool:
    for stmt in tree.body:
        if isinstance(stmt, ast.If) and "TYPE_CHECKING" in ast.unparse(stmt.test):
            if any(child is node for child in ast.walk(stmt)):
                return True
    return False


def scan_tree(root: Path) -> dict[str, ModuleFacts]:
    """Every module of the packages under ``root``, by dotted name (symlinked folders skipped)."""
    modules = {}
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            if path.is_symlink() or any(p.is_symlink() for p in path.parents if root in p.parents):
                continue
            facts = scan(root, path)
            modules[facts.name] = facts
    return modules


def known_module(target: str, modules: dict[str, ModuleFacts]) -> str:
    """The module an imported name lives in (``a.b.func`` -> ``a.b``); empty when none."""
    while target and target not in modules:
        target = target.rpartition(".")[0]
    return target


def cycles(modules: dict[str, ModuleFacts], attr: str) -> list[list[str]]:
    """Strongly connected components (Tarjan) with more than one module."""
    graph = defaultdict(set)
    for name, facts in modules.items():
        for target in getattr(facts, attr):
            target = known_module(target, modules)
            if target and target != name:
                graph[name].add(target)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                item = stack.pop()
                on_stack.discard(item)
                component.append(item)
                if item == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for name in sorted(modules):
        if name not in index:
            visit(name)
    return found


#: the folders of our own module names (metrics/ follows evaluate's layout, name/name.py + app.py)
NAMED = ("blindspot", "perturbations", "datasets_scripts")
#: a module that writes a file of a report folder: a write call beside the report's file names
REPORT_NAMES = re.compile(r"RESULTS_FILE|MARKDOWN_FILE|HTML_FILE|\"results\.json\"|\"report\.md\"")
WRITE_CALL = re.compile(r"atomic_write_(?:text|bytes)\(|\.write_(?:text|bytes)\(|os\.replace\(")


def shape_figures(root: Path) -> dict[str, list[str]]:
    """Issue 29's figures: report writers, argparse modules, CLI modules, module names used by
    more than one module (``__init__`` aside), the six longest functions."""
    paths = sorted(p for top in NAMED for p in (root / top).rglob("*.py")
                   if "__pycache__" not in p.parts)
    writers, parsers, functions = [], [], []
    for path in paths:
        text = path.read_text(encoding="utf-8")
        where = str(path.relative_to(root))
        if REPORT_NAMES.search(text) and WRITE_CALL.search(text):
            writers.append(where)
        if re.search(r"^import argparse", text, re.MULTILINE):
            parsers.append(where)
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                functions.append((node.end_lineno - node.lineno + 1, f"{where}::{node.name}"))
    names = Counter(p.name for p in paths if p.name != "__init__.py")
    return {"modules writing a report file": writers, "argparse modules": parsers,
            "CLI modules": [str(p.relative_to(root)) for p in paths
                            if p.parent.name == "cli" or p.name.endswith("_cli.py")
                            or p.name == "cli.py"],
            "module names used more than once": [f"{n} x{c}" for n, c in sorted(names.items())
                                                 if c > 1],
            "longest functions": [f"{where} {lines}" for lines, where in
                                  sorted(functions, reverse=True)[:6]]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parents[1])
    parser.add_argument("--list-cycles", action="store_true")
    args = parser.parse_args()
    root = args.root.resolve()
    modules = scan_tree(root)
    total = sum(m.lines for m in modules.values())
    local = sum(m.local_imports for m in modules.values())
    orch = [m for m in modules.values() if str(m.path.relative_to(root)).startswith(ORCHESTRATION)]
    orch_lines = sum(m.lines for m in orch)
    orch_local = sum(m.local_imports for m in orch)
    all_cycles = cycles(modules, "imports_all")
    top_cycles = cycles(modules, "imports_top")
    print(f"python lines (blindspot + perturbations + metrics + datasets_scripts): {total}")
    print(f"function-local imports: {local} ({1000 * local / total:.1f} per 1,000 lines)")
    internal = internal_local_imports(root, modules)
    print(f"internal function-local imports outside cli/: {len(internal)}")
    for imp in internal:
        print(f"  {imp.where(root)}  # {imp.reason or '(no reason given)'}")
    print(f"orchestration lines (runner/, protocols/, CLIs, demo_job, search protocol): {orch_lines}, "
          f"function-local imports there: {orch_local}")
    print(f"import circles, all imports: {len(all_cycles)} "
          f"(modules in them: {sum(len(c) for c in all_cycles)})")
    print(f"import circles, top-of-module imports: {len(top_cycles)} "
          f"(modules in them: {sum(len(c) for c in top_cycles)})")
    if args.list_cycles:
        for component in all_cycles:
            print("  circle:", ", ".join(component))
    worst = sorted(modules.values(), key=lambda m: -m.local_imports)[:10]
    print("most function-local imports:", ", ".join(f"{m.name} {m.local_imports}" for m in worst))
    for what, found in shape_figures(root).items():
        print(f"{what} ({len(found)}): {', '.join(found) or 'none'}")


if __name__ == "__main__":
    main()
