"""The judge audits as a protocol: ``blindspot judge-audit`` and ``blindspot run --protocol
judge-audit --metrics llm_judge@MODEL``.

The audits themselves (position, rubric, flakiness, panel) are :mod:`blindspot.judge_audit`;
this module runs the chosen ones on the first rows of the request's data and reports them. The
judge is the request's one metric, ``llm_judge@MODEL``: the thing audited is a metric, so it is
named as ``blindspot run --metrics llm_judge@smollm2`` names it, and its other options come the
same way (``request.metric_options["llm_judge"]``: ``--judge-url``, ``--max-calls``, ``--option
llm_judge.key=value``). The audits' own settings are the protocol's declared options
(:data:`~blindspot.protocols.declarations.JUDGE_AUDIT`).

The report folder holds ``results.json`` (:class:`JudgeAuditResult`: each audit's rule,
tolerance, verdict, explanation and figures, the judge's settings, and its flags: an
uninformative judge, one grade for every text) and ``report.md`` (one section per audit, verdict
first). The judge's server URL is shown as ``blindspot run`` shows it (a URL with credentials is
refused before any call); its key never is (only the environment holds it). With ``--fail-on
fail`` a failed audit exits 3 (:meth:`JudgeAuditProtocol.failed`).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rich.console import Console

from blindspot import judge_audit as audit
from blindspot.checkup.protocol import load_rows
from blindspot.exit_codes import FailOn
from blindspot.perturbations.perturbation import REGISTRY
from blindspot.protocols.declarations import JUDGE_AUDIT
from blindspot.protocols.interface import Protocol, ProtocolRequest, ProtocolResult, single_data
from blindspot.report.files import MARKDOWN_FILE, RESULTS_FILE, ReportFiles
from blindspot.runner.entries import tool
from blindspot.runner.metric_spec import resolve_metrics

#: the panel's judges when the ``judges`` option is not set: the three rubric variants
DEFAULT_PANEL = tuple({"rubric": r} for r in ("as_written", "reversed", "reworded"))


@dataclass(kw_only=True)
class JudgeAuditResult(ProtocolResult):
    """The judge audits of one judge on the first rows of one dataset: the judge's settings
    (its server's URL included, never a key), the data, the test, per audit its rule, tolerance,
    ``passed``, explanation and figures (NaN written as null), and the judge's flags."""

    protocol: str = "judge-audit"
    judge: dict[str, Any]
    data: str
    task: str
    rows: int
    test: str
    level: Any
    audits: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: ``uninformative: ...`` per audit that found the judge gives every text one grade
    flags: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class AuditRows:
    """What every audit of one run reads: the base judge, the rows and the text test."""

    judge: dict[str, Any]
    settings: Mapping[str, Any]
    task: str
    texts: list[str]
    sources: Sequence[str | None] | None
    references: Sequence[Sequence[str]] | None
    perturbation: Any
    level: Any
    panel: list[dict[str, Any]]  #: the panel's judges, as options over the base judge

    @property
    def graded(self) -> dict[str, Any]:
        """The judge that grades one text (rubric, flakiness, panel)."""
        return {**self.judge, "template": self.settings["template"]}


def judge_options(metrics: Any, metric_options: Mapping[str, Mapping[str, Any]] | None
                  ) -> dict[str, Any]:
    """The options of the one judge of ``metrics`` (``llm_judge@MODEL``), its metric options
    included; a ValueError when ``metrics`` names anything else."""
    specs = resolve_metrics(metrics, metric_options)
    if len(specs) != 1 or specs[0].metric != "llm_judge":
        raise ValueError(f"the judge-audit protocol audits one LLM judge, not "
                         f"{', '.join(s.name for s in specs)}; give --metrics llm_judge@MODEL "
                         f"(e.g. llm_judge@smollm2)")
    return dict(specs[0].options)


def judge_variant(text: str, what: str = "judge") -> dict[str, Any]:
    """Judge options written ``key=value,key=value`` (a panel judge, or ``--judge-options``:
    ``what``), values JSON when they parse."""
    options: dict[str, Any] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        key, sep, value = item.partition("=")
        if not (sep and key):
            raise ValueError(f"{what} {text!r}: {item!r} must look like key=value, e.g. "
                             f"rubric=reworded or max_tokens=16")
        try:
            options[key] = json.loads(value)
        except ValueError:
            options[key] = value
    return options


def _level(perturbation: Any, test: str, task: str, level: str | None) -> Any:
    """The test's level: the given one checked, else the test's first for the task."""
    if level is not None:
        return perturbation.check_level(level)
    paper = perturbation.paper_levels(task)
    if not paper:
        raise ValueError(f"test {test!r} has no level for task {task!r}; give --level")
    return paper[0]


def audit_rows(request: ProtocolRequest, settings: Mapping[str, Any]) -> tuple[str, AuditRows]:
    """The data's display name and what the audits read, from the request (the judge and
    the panel's judges read first: a bad one fails before the data is read)."""
    judge = {**judge_options(request.metrics, request.metric_options),
             "mode": settings["mode"]}
    panel = [judge_variant(j) for j in settings["judges"] or ()] or list(DEFAULT_PANEL)
    rows = settings["rows"]
    gold, checked = load_rows(single_data(JUDGE_AUDIT.name, request.data), request.task,
                              request.columns, request.split, max(rows, 2))
    perturbation = REGISTRY.get(settings["test"])(task=request.task)
    level = _level(perturbation, settings["test"], request.task, settings["level"])
    return gold.name, AuditRows(
        judge, settings, request.task, checked.hypotheses[:rows],
        checked.sources[:rows] if checked.sources else None,
        checked.references[:rows] if checked.references else None, perturbation, level, panel)


def _position(rows: AuditRows) -> audit.AuditResult:
    texts = rows.texts
    made = rows.perturbation.apply_rows(texts, list(range(len(texts))), rows.level, 0)
    kept = [i for i, ok in enumerate(made["applied"]) if ok]  # a row the test left alone
    # would pair the gold with itself
    return audit.position({**rows.judge, "template": rows.settings["pairwise"]},
                          [texts[i] for i in kept], [made["perturbed"][i] for i in kept],
                          [rows.sources[i] for i in kept] if rows.sources else None,
                          rows.settings["position_tolerance"])


def _rubric(rows: AuditRows) -> audit.AuditResult:
    return audit.rubric(rows.graded, rows.texts, rows.sources, rows.references,
                        rows.settings["rubric_tolerance"])


def _flakiness(rows: AuditRows) -> audit.AuditResult:
    return audit.flakiness(rows.graded, rows.texts, rows.settings["test"], rows.level,
                           rows.settings["repeats"], rows.sources, rows.task)


def _panel(rows: AuditRows) -> audit.AuditResult:
    judges = {",".join(f"{k}={v}" for k, v in variant.items()) or "base": {**rows.graded,
                                                                           **variant}
              for variant in rows.panel}
    return audit.judge_panel(judges, rows.texts, rows.sources, rows.references,
                             rows.settings["panel_tolerance"])


#: how each declared audit runs on the rows
RUNS: dict[str, Callable[[AuditRows], audit.AuditResult]] = {
    "position": _position, "rubric": _rubric, "flakiness": _flakiness, "panel": _panel}


def _finite(value: Any) -> Any:
    """``value`` with NaN and infinite floats as None (results.json is strict JSON)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def _entry(result: audit.AuditResult) -> dict[str, Any]:
    return _finite({"rule": result.rule, "tolerance": result.tolerance, "passed": result.passed,
                    "explanation": result.explanation, **result.figures})


def _names(value: str | Sequence[str]) -> list[str]:
    """A ``names`` option's value: its default is the declared text, a given one a list."""
    items = value.split(",") if isinstance(value, str) else value
    return [item.strip() for item in items if item.strip()]


# -- rendering (what the report's files say) -----------------------------------------------------

def summary_lines(result: JudgeAuditResult) -> list[str]:
    """The judge (its server's URL as ``run`` shows it), then one line per audit: its name,
    ``pass`` or ``FAIL``, its rule and why; then the judge's flags."""
    judge = result.judge
    where = f" on {judge['url']}" if judge.get("url") else ""
    return [f"judge      llm_judge@{judge.get('model')}{where} (mode {judge.get('mode')})",
            *(f"{name:<10} {'pass' if entry['passed'] else 'FAIL':<5} {entry['rule']}: "
              f"{entry['explanation']}" for name, entry in result.audits.items()),
            *(f"flag       {flag}" for flag in result.flags)]


def render_markdown(result: JudgeAuditResult) -> str:
    """``report.md``: the judge and the rows, then one section per audit, verdict first."""
    judge = result.judge
    server = f", on the server `{judge['url']}`" if judge.get("url") else ""
    lines = ["# Judge audit", "",
             f"Judge `{judge.get('model')}` (template `{judge.get('template')}`, pairwise "
             f"`{judge.get('pairwise')}`, mode `{judge.get('mode')}`{server}"
             f") on the first {result.rows} rows of `{result.data}` ({result.task}); test "
             f"`{result.test}` at level `{result.level}`.", ""]
    if result.flags:
        lines += ["## Flags", "", *(f"- {flag}" for flag in result.flags), ""]
    for name, entry in result.audits.items():
        lines += [f"## {name}: {'pass' if entry['passed'] else 'FAIL'}", "",
                  f"`{entry['rule']}` (tolerance {entry['tolerance']}): {entry['explanation']}.",
                  ""]
    lines.append(f"Every audit's figures are in `{RESULTS_FILE}`.")
    return "\n".join(lines) + "\n"


# -- the protocol ----------------------------------------------------------------------------------

class JudgeAuditProtocol(Protocol[JudgeAuditResult]):
    """``blindspot run --protocol judge-audit --data DATA --metrics llm_judge@MODEL`` (or
    ``blindspot judge-audit``): the declared audits on the data's first rows."""

    declaration = JUDGE_AUDIT

    def execute(self, request: ProtocolRequest) -> JudgeAuditResult:
        settings = JUDGE_AUDIT.settings(request.options)
        data, rows = audit_rows(request, settings)
        results = [RUNS[name](rows) for name in _names(settings["audits"])]
        return JudgeAuditResult(
            tool=tool(),
            judge={**rows.judge, "template": settings["template"],
                   "pairwise": settings["pairwise"]},
            data=data, task=request.task, rows=len(rows.texts), test=settings["test"],
            level=rows.level, audits={r.audit: _entry(r) for r in results},
            flags=list(dict.fromkeys(f"{r.audit}: {r.flag}" for r in results if r.flag)))

    def failed(self, result: JudgeAuditResult, fail_on: FailOn | str) -> list[str]:
        """The audits that failed, when ``--fail-on`` is ``fail`` or ``significant`` (an audit
        has no noise band: both stop on any failed audit); none with ``error``."""
        if FailOn(fail_on) is FailOn.error:
            return []
        return [f"judge-audit / {name}" for name, entry in result.audits.items()
                if not entry["passed"]]

    def render(self, result: JudgeAuditResult) -> ReportFiles:
        """results.json and report.md, one section per audit."""
        return ReportFiles(result.to_dict(), {MARKDOWN_FILE: render_markdown(result)})

    def summarise(self, result: JudgeAuditResult, console: Console) -> None:
        for line in summary_lines(result):
            console.print(line, markup=False, highlight=False, soft_wrap=True)

    def view(self, result: JudgeAuditResult) -> dict[str, Any]:
        results = result.to_dict()
        return {"passed": {name: entry["passed"] for name, entry in result.audits.items()},
                "explanations": {name: entry["explanation"]
                                 for name, entry in result.audits.items()},
                "results": results}


__all__ = ["DEFAULT_PANEL", "JudgeAuditProtocol", "JudgeAuditResult", "judge_options",
           "judge_variant", "render_markdown", "summary_lines"]
