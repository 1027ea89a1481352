"""docs/metrics.md's two columns, the reference implementation and the measured agreement, are each
registered metric's declared ``Scorer.reference`` (issue 39), row by row: a row names its modules
in the "here" column (a scorer, or an evaluate module and the scorer it runs); a module without a
declared reference, and a metric left out, show a dash."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

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
