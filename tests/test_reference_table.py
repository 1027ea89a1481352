"""docs/metrics.md's two columns, the reference implementation and the measured agreement, are each
registered metric's declared ``Scorer.reference`` (issue 39), row by row: a row names its modules
in the "here" column (a scorer, or an evaluate module and the scorer it runs); a module without a
declared reference, and a metric left out, show a dash. Every name a row gives is a registered
metric or a module, and the tables generated from the registry (every registered metric in
docs/metrics.md, every module in docs/metric-reference.md) are what the registry generates now
(issue 41)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from blindspot.evaluate_modules import DOCS_TABLES, generated_docs, metric_entries, module_names
from blindspot.scoring.scorer import SCORERS, Reference

ROOT = Path(__file__).resolve().parents[1]
HEADER = "| metric | paper(s) | here | reference implementation | agreement | notes |"
DASH = "—"


def _rows() -> list[list[str]]:
    lines = (ROOT / "docs" / "metrics.md").read_text(encoding="utf-8").split("\n")
    start = lines.index(HEADER) + 2
    rows = []
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        cells = [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", line)[1:-1]]
        rows.append(cells)
    return rows


def _modules(here: str) -> list[str]:
    """The modules a row's "here" cell starts with (`bleu`, `sacrebleu`; `rouge.rougeW`)."""
    lead = re.match(r"((?:`[^`]+`(?:, )?)+)", here)
    return [name.split(".")[0] for name in re.findall(r"`([^`]+)`", lead[1])] if lead else []


def _reference(module: str) -> Reference | None:
    """The declared reference of a scorer, or of the scorer an evaluate module runs."""
    if module not in SCORERS:
        script = (ROOT / "metrics" / module / f"{module}.py").read_text(encoding="utf-8")
        module = re.search(r'scorer_name = "(\w+)"', script)[1]
    return SCORERS.get(module).reference


@pytest.mark.quick
def test_every_row_shows_its_metrics_declared_reference() -> None:
    rows = _rows()
    assert len(rows) > 40 and all(len(cells) == 6 for cells in rows), "six cells a row"
    checked = 0
    for metric, _papers, here, implementation, agreement, _notes in rows:
        references = {_reference(module) for module in _modules(here)}
        assert len(references) <= 1, f"{metric}: its modules declare different references"
        reference = references.pop() if references else None
        if reference is None:
            assert (implementation, agreement) == (DASH, DASH), metric
        else:
            assert (implementation, agreement) == (reference.implementation,
                                                   reference.agreement()), metric
            checked += 1
    assert checked >= 14  # every lexical metric's row


@pytest.mark.quick
def test_every_lexical_metric_declares_a_reference_and_has_a_row() -> None:
    shown = {module for row in _rows() for module in _modules(row[2])}
    for name in SCORERS.names():
        cls = SCORERS.get(name)
        if cls.kind == "lexical":
            assert cls.reference is not None, name
            assert name in shown, f"{name} has no row in docs/metrics.md"


@pytest.mark.quick
def test_every_row_names_registered_metrics_or_modules() -> None:
    """A row's "here" cell names registered metrics (or outputs of one) or modules, or says the
    metric is left out: a renamed or removed metric leaves no row behind."""
    known = set(SCORERS.names()) | set(module_names())
    for metric, _papers, here, *_ in _rows():
        names = _modules(here)
        if here == "left out":
            continue
        assert names, f"{metric}: its here cell names no module and does not say 'left out'"
        assert set(names) <= known, f"{metric}: {sorted(set(names) - known)} is not registered"


@pytest.mark.quick
def test_every_declared_reference_has_a_row() -> None:
    shown = {module for row in _rows() for module in _modules(row[2])}
    for name in SCORERS.names():
        if SCORERS.get(name).reference is not None:
            assert name in shown, f"{name} declares a reference but has no row in docs/metrics.md"


@pytest.mark.quick
def test_the_generated_tables_are_the_registrys() -> None:
    """docs/metrics.md lists every registered metric and docs/metric-reference.md every module, as
    `blindspot modules` writes them from the registry and the cards (run it after adding one)."""
    pages = generated_docs(ROOT / "docs")
    assert {path.name for path in pages} == set(DOCS_TABLES)
    for path, text in pages.items():
        assert path.read_text(encoding="utf-8") == text, (
            f"{path.name}'s generated table is stale: run `blindspot modules`")
    metrics_page = (ROOT / "docs" / "metrics.md").read_text(encoding="utf-8")
    assert all(f"| `{entry['metric']}` |" in metrics_page for entry in metric_entries())
