"""Deviation from human judgement (Sai et al., EMNLP 2021, Eq. 1): the perturbation checklists.

For a task's templates (``blindspot.checklists.templates``: criterion x template -> a registered
perturbation), every gold output p of the data is perturbed to p', and each metric's reaction is
compared with the humans' per template t and criterion c::

    s = (h(p') - h(p)) - (f(p') - f(p))

* h: the human score of the template (``blindspot.checklists.human_scores``; h(p) = 1, the
  unperturbed output; h(p') = 1 - the template's mean normalised penalty).
* f: the metric normalised to [0, 1] (see below); ``f(p') - f(p)`` is the mean over the rows the
  template changed (the paper "shortlists only the successfully modified samples", App. B), over
  all seeds of a random template.
* s > 0: the metric dropped more than the humans would; s < 0: it under-reacted (the paper's
  Figure 4 plots these deviations). Invariance templates and the control expect h(p') = 1: any
  metric drop is a deviation.

Normalisation of f (``--protocol-option normalise=``): ``auto`` (default) divides by the metric's
natural range when the project knows it (ROUGE: [0, 1]; BLEU, chrF: [0, 100]) and otherwise
min-max scales over every score of that metric in the run (gold and all perturbed rows pooled);
``minmax`` forces the pooled min-max for every metric; ``none`` uses raw scores (for metrics
already in [0, 1]). Lower-is-better metrics (TER) are negated first. results.json records the
method and the (low, high) used per metric.

The control ("alternative reference") replaces p by another human reference r_k of the row;
both p and r_k are then scored against the remaining references, so the metric never sees r_k
as its own reference. With a single reference r (MT: two human translations) the two swap
roles: f(p) = m(p, [r]) and f(p') = m(r, [p]). Rows without a reference other than p are not
applied.

Options (``--protocol-option key=value``): ``human_scores`` (CSV path), ``criteria``
(comma-separated), ``templates`` (comma-separated template ids), ``normalise``, ``tolerance``
(a normalised drop up to this counts as none; default 0), ``batch_size``, ``examples`` (per
template in the report; default 2).

results.json (``"protocol": "deviation"``)::

    {"schema_version": 1, "protocol": "deviation", "tool": {...},
     "config": {"task", "criteria", "seeds", "metrics": [spec...], "human_scores": origin,
                "normalise", "tolerance"},
     "dataset": {"name", "rows", "fingerprint", "columns"},
     "templates": [{"task", "criterion", "template", "test", "level", "expectation", "paper",
                    "human_score", "human_basis", "status": "ok"|"skipped", "reason",
                    "rows", "applied" (distinct rows changed), "pairs" ((row, seed) pairs
                    scored: a random template runs once per seed),
                    "examples": [{"id", "gold", "perturbed"}]}],
     "metrics": {name: {"metric", "output", "higher_is_better", "error",
                        "signature" (blindspot.scoring.signature; null when not built),
                        "normalisation": {"method", "low", "high"},
                        "templates": {"criterion/template": {"n" (pairs), "gold_mean",
                                      "perturbed_mean", "metric_delta", "human_delta",
                                      "deviation", "verdict"}}}}}

``verdict``: a ``drop`` template is ``detected`` when ``metric_delta < -tolerance``, else
``missed``; an ``invariant`` one is ``kept`` when ``metric_delta >= -tolerance``, else
``dropped``. All figures are means in normalised units; nothing holds a timestamp or path.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from statistics import fmean
from typing import Any

from rich.console import Console
from rich.table import Table

from blindspot.checklists import (
    Template,
    canonical_checklist_task,
    load_human_scores,
    templates_for,
)
from blindspot.errors import DataRoles, MetricNeeds
from blindspot.minmax import Range
from blindspot.perturbations.dataset import build_perturbation
from blindspot.perturbations.perturbation import REGISTRY, TASKS, canonical_name
from blindspot.progress import progress_bar
from blindspot.protocols.declarations import DEVIATION, NORMALISE
from blindspot.protocols.interface import (
    Protocol,
    ProtocolRequest,
    ProtocolResult,
    single_data,
)
from blindspot.report.deviation_report import render_deviation_report
from blindspot.report.files import ReportFiles
from blindspot.report.terminal import print_signatures
from blindspot.runner.data import gold_inputs, load_gold_data
from blindspot.runner.entries import error_text, signature
from blindspot.runner.entries import tool as _tool
from blindspot.runner.metric_spec import resolve_metrics
from blindspot.runner.scorers import scorer_for, signed_scores
from blindspot.scoring.facts import registered_metrics, scorer_facts


@dataclass(kw_only=True)
class DeviationResult(ProtocolResult):
    """results.json of a deviation run (layout: the module docstring)."""

    protocol: str = "deviation"
    config: dict[str, Any]
    dataset: dict[str, Any]
    templates: list[dict[str, Any]]
    metrics: dict[str, Any]


@dataclass
class Case:
    """One template's perturbed rows: (row index, seed, perturbed text) of the applied ones."""
    template: Template
    rows: list[int] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    references: list[Any] | None = None  #: per case row (the control's reduced references)
    gold_references: list[Any] | None = None
    reason: str | None = None


# -- building the cases ---------------------------------------------------------------------------

def _skip_reason(template: Template, resources: Mapping[str, Any], has_source: bool) -> str | None:

    if template.is_control:
        return None
    try:
        name = canonical_name(template.test)
    except ValueError:
        return (f"test {template.test!r} is not registered in this install (MENLI attacks come "
                f"with the menli suite)")
    cls = REGISTRY[name]
    missing = [r for r in cls.requires if r != "pool" and resources.get(r) is None]
    if missing:
        return f"needs {', '.join(missing)} (e.g. --{missing[0]} on the command line)"
    if cls.needs_source and not has_source:
        return "needs the source text (--source-column), e.g. the dialogue context"
    return None


def _blindspot_task(task: str) -> str | None:

    return task if task in TASKS else None


def perturb_template(template: Template, gold: Any, seeds: Sequence[int],
                     resources: Mapping[str, Any]) -> Case:
    """The applied rows of ``template`` on ``gold`` over ``seeds`` (one seed if deterministic)."""
    texts, ids, sources = gold.column("hypothesis"), gold.ids(), gold.column("source")
    case = Case(template)
    perturbation = build_perturbation(template.test, texts, resources,
                                      _blindspot_task(template.task))
    for seed in (seeds[:1] if perturbation.deterministic else seeds):
        columns = perturbation.apply_rows(texts, ids, template.level, int(seed), sources=sources)
        for i, (text, applied) in enumerate(zip(columns["perturbed"], columns["applied"], strict=True)):
            if applied:
                case.rows.append(i)
                case.texts.append(text)
    return case


def _as_list(value: Any) -> list[str]:
    if value is None:
        return []
    return [value] if isinstance(value, str) else [v for v in value if isinstance(v, str)]


def control_case(template: Template, gold: Any) -> Case:
    """The control: the first reference that differs from the gold output, scored (with the
    gold) against the row's other references; with a single reference, the two swap roles
    (the reference scored against the gold, the gold against the reference)."""
    references: list[Any] = []
    gold_references: list[Any] = []
    case = Case(template, references=references, gold_references=gold_references)
    refs = gold.column("references")
    if refs is None:
        case.reason = "needs references (--references-column) to take an alternative from"
        return case
    for i, (text, row_refs) in enumerate(zip(gold.column("hypothesis"), refs, strict=True)):
        options = _as_list(row_refs)
        pick = next((k for k, r in enumerate(options) if r.strip() != (text or "").strip()), None)
        if pick is None:
            continue
        rest = options[:pick] + options[pick + 1:]
        case.rows.append(i)
        case.texts.append(options[pick])
        references.append(rest or [text])
        gold_references.append(rest or [options[pick]])
    return case


def build_cases(templates: Sequence[Template], gold: Any, seeds: Sequence[int],
                resources: Mapping[str, Any], progress: bool) -> list[Case]:
    """Every template's case (skipped ones carry their reason), with a progress bar."""
    has_source = gold.columns.get("source") is not None
    cases = []
    for template in progress_bar(templates, desc="perturbing", unit="template", disable=not progress,
                         file=sys.stderr):
        reason = _skip_reason(template, resources, has_source)
        if reason is not None:
            cases.append(Case(template, reason=reason))
        elif template.is_control:
            cases.append(control_case(template, gold))
        else:
            cases.append(perturb_template(template, gold, seeds, resources))
    return cases


# -- scoring --------------------------------------------------------------------------------------

def score_cases(spec: Any, scorer: Any, gold: Any, cases: list[Case], batch_size: int | None,
                progress: bool) -> tuple[list[float], dict[int, tuple[list[float], list[float]]]]:
    """Gold scores per row, and per case (by position) its (gold, perturbed) scores per applied
    row, all in one ``score_rows`` call (deduplicated, cached, one progress bar), by ``scorer``
    (:func:`scorer_for` ``(spec, gold's references)``)."""
    refs, sources = gold.column("references"), gold.column("source")
    if scorer.corpus_level:
        raise ValueError(f"metric {spec.name!r} gives one corpus-level score; the deviation "
                         f"protocol needs a score per output")
    if scorer.uses_references == "required" and refs is None:
        raise ValueError(f"metric {spec.name!r} needs references; the data has none "
                         f"(name them with --references-column)")
    use_refs = scorer.uses_references != "none" and refs is not None
    use_src = scorer.uses_source != "none" and sources is not None
    texts = list(gold.column("hypothesis"))
    hyps = list(texts)
    r_in = list(refs) if use_refs else None
    s_in = list(sources) if use_src else None
    spans: dict[int, tuple[int, int, int]] = {}
    for k, case in enumerate(cases):
        if case.reason is not None or not case.rows:
            continue
        own_gold = case.gold_references is not None
        start = len(hyps)
        hyps += case.texts + ([texts[i] for i in case.rows] if own_gold else [])
        if r_in is not None:
            if case.references is not None and case.gold_references is not None:  # the control
                r_in += case.references + case.gold_references
            else:
                r_in += [refs[i] for i in case.rows]
        if s_in is not None:
            s_in += [sources[i] for i in case.rows] * (2 if own_gold else 1)
        spans[k] = (start, len(case.rows), 1 if own_gold else 0)
    scores = signed_scores(spec, scorer, hyps, r_in, s_in, batch_size, progress)
    gold_scores = scores[:len(texts)]
    per_case = {}
    for k, (start, n, own) in spans.items():
        perturbed = scores[start:start + n]
        base = scores[start + n:start + 2 * n] if own else [gold_scores[i] for i in cases[k].rows]
        per_case[k] = (base, perturbed)
    return gold_scores, per_case


# -- normalisation and Eq. 1 --------------------------------------------------------------------

def natural_range(metric: str, output: str) -> tuple[float, float] | None:
    """The metric's fixed scale, if its scorer declares one."""
    return scorer_facts(metric).natural_range(output) if metric in registered_metrics() else None


def normaliser(method: str, spec: Any, values: Sequence[float]) -> dict[str, Any]:
    """The normalisation of one metric: method and (low, high) of the linear map to [0, 1]."""
    if method not in NORMALISE:
        raise ValueError(f"--protocol-option normalise={method!r} is not a method; choose one "
                         f"of {', '.join(NORMALISE)}")
    if method == "none":
        return {"method": "none", "low": 0.0, "high": 1.0}
    known = natural_range(spec.metric, spec.output) if method == "auto" else None
    if known is not None:
        low, high = known
        if not spec.higher_is_better:
            low, high = -high, -low
        return {"method": "range", "low": low, "high": high}
    found = Range.of(values) or Range(0.0, 1.0)
    return {"method": "minmax", "low": found.low, "high": found.high}


def normalise(value: float, norm: Mapping[str, Any]) -> float:
    """``value`` mapped by ``norm`` (a constant metric maps to 0)."""
    return Range(norm["low"], norm["high"]).scale(value)


def deviation(human_score: float, gold: Sequence[float], perturbed: Sequence[float],
              expectation: str, tolerance: float = 0.0) -> dict[str, Any]:
    """Eq. 1 for one template: s = (h(p') - h(p)) - mean(f(p') - f(p)), h(p) = 1."""
    if not gold or len(gold) != len(perturbed):
        raise ValueError("deviation needs as many gold as perturbed scores, at least one")
    metric_delta = fmean(b - a for a, b in zip(gold, perturbed, strict=True))
    human_delta = human_score - 1.0
    if expectation == "drop":
        verdict = "detected" if metric_delta < -tolerance else "missed"
    else:
        verdict = "kept" if metric_delta >= -tolerance else "dropped"
    return {"n": len(gold), "gold_mean": fmean(gold), "perturbed_mean": fmean(perturbed),
            "metric_delta": metric_delta, "human_delta": human_delta,
            "deviation": human_delta - metric_delta, "verdict": verdict}


# -- the protocol ---------------------------------------------------------------------------------

def template_id(template: Template) -> str:
    return f"{template.criterion}/{template.template}"


def _template_entry(case: Case, human: Mapping[Any, float], basis: Mapping[Any, str],
                    gold: Any, rows: int, examples: int) -> dict[str, Any]:
    t = case.template
    ids = gold.ids()
    texts = gold.column("hypothesis")
    entry = {**t.as_json(), "human_score": human[t.key], "human_basis": basis.get(t.key, ""),
             "status": "skipped" if case.reason else "ok", "reason": case.reason,
             "rows": rows, "applied": len(set(case.rows)), "pairs": len(case.rows),
             "examples": []}
    for i, text in list(zip(case.rows, case.texts, strict=True))[:examples]:
        entry["examples"].append({"id": str(ids[i]), "gold": texts[i], "perturbed": text})
    if case.reason is None and not case.rows:
        entry["status"], entry["reason"] = "skipped", "no row could be perturbed"
    return entry


def metric_entry(spec: Any, gold: Any, cases: list[Case], human: Mapping[Any, float],
                 settings: Mapping[str, Any], progress: bool) -> dict[str, Any]:
    """One metric's deviations over every template (or its error)."""
    entry: dict[str, Any] = {"metric": spec.metric, "output": spec.output,
                             "higher_is_better": spec.higher_is_better, "error": None,
                             "signature": None, "normalisation": None, "templates": {}}
    try:
        scorer = scorer_for(spec, gold.column("references"))
        entry["signature"] = signature(spec, scorer, settings["seeds"])
        _, per_case = score_cases(spec, scorer, gold, cases, settings["batch_size"], progress)
    except Exception as error:  # one failing metric is reported, the others still run
        entry["error"] = error_text(error)
        return entry
    pooled = [v for base, pert in per_case.values() for v in (*base, *pert)]
    bad = [v for v in pooled if not math.isfinite(v)]
    if bad:
        entry["error"] = f"{len(bad)} score(s) are NaN or infinite; the deviation is undefined"
        return entry
    norm = normaliser(settings["normalise"], spec, pooled)
    entry["normalisation"] = norm
    for k, (base, pert) in sorted(per_case.items()):
        t = cases[k].template
        entry["templates"][template_id(t)] = deviation(
            human[t.key], [normalise(v, norm) for v in base], [normalise(v, norm) for v in pert],
            t.expectation, settings["tolerance"])
    return entry


def _settings(options: Mapping[str, Any]) -> dict[str, Any]:
    """The run's settings: the options (checked against DEVIATION.options) over
    their declared defaults."""
    settings = DEVIATION.settings(options)
    return {name: settings[name] for name in ("normalise", "tolerance", "batch_size", "examples")}


def _chosen_templates(task: str, options: Mapping[str, Any]) -> list[Template]:
    chosen = templates_for(task, options.get("criteria"))
    wanted = options.get("templates")
    if wanted:
        names = list(wanted)
        known = {t.template for t in chosen}
        unknown = [n for n in names if n not in known]
        if unknown:
            raise ValueError(f"template {unknown[0]!r} is not a template of task {task!r}"
                             f"{' and the chosen criteria' if options.get('criteria') else ''}; "
                             f"choose from {sorted(known)}")
        chosen = [t for t in chosen if t.template in names]
    return chosen


def run_deviation(request: Any) -> DeviationResult:
    """The deviation protocol's result on a request (see the module docstring); nothing
    written (the report: :meth:`DeviationProtocol.report`)."""
    settings = _settings(request.options)
    task = canonical_checklist_task(request.task)
    templates = _chosen_templates(task, request.options)
    table = load_human_scores(request.options.get("human_scores"))
    human = table.for_templates(templates)
    specs = resolve_metrics(request.metrics, request.metric_options)
    gold = load_gold_data(single_data("deviation", request.data), task, request.columns,
                          request.split)
    seeds = list(request.seeds)
    resources = {k: v for k, v in dict(request.resources or {}).items() if v is not None}
    cases = build_cases(templates, gold, seeds, resources, request.progress)
    rows = gold.dataset.num_rows
    return DeviationResult(
        tool=_tool(),
        config={"task": task, "criteria": sorted({t.criterion for t in templates}),
                "seeds": seeds, "metrics": [s.as_json() for s in specs],
                "human_scores": table.origin, "normalise": settings["normalise"],
                "tolerance": settings["tolerance"]},
        dataset={"name": gold.name, "rows": rows, "fingerprint": gold.fingerprint(),
                 "columns": dict(gold.columns)},
        templates=[_template_entry(c, human, table.basis, gold, rows, settings["examples"])
                   for c in cases],
        metrics={s.name: metric_entry(s, gold, cases, human, {**settings, "seeds": seeds},
                                      request.progress)
                 for s in specs},
    )


class DeviationProtocol(Protocol[DeviationResult]):
    declaration = DEVIATION

    def inputs(self, request: ProtocolRequest) -> tuple[list[DataRoles], list[MetricNeeds]]:
        """The one gold source's columns and the metrics' needs, checked before any work."""
        single_data("deviation", request.data)
        return gold_inputs(request, canonical_checklist_task(request.task))

    def execute(self, request: ProtocolRequest) -> DeviationResult:
        return run_deviation(request)

    def render(self, result: DeviationResult) -> ReportFiles:
        """results.json, report.md and the heatmap (:func:`render_deviation_report`)."""
        return render_deviation_report(result.to_dict())

    def summarise(self, result: DeviationResult, console: Console) -> None:
        """templates x metrics: the deviation s, coloured by verdict; then skipped templates."""
        results = result.to_dict()
        styles = {"detected": "green", "kept": "green", "missed": "bold red", "dropped": "bold red"}
        table = Table(title=f"deviation from humans, {results['config']['task']} "
                            f"({results['dataset']['rows']} rows; s > 0 metric dropped more)")
        for column in ("criterion/template", "h(p')"):
            table.add_column(column)
        for name in results["metrics"]:
            table.add_column(name, justify="right")
        for t in results["templates"]:
            key = f"{t['criterion']}/{t['template']}"
            cells = []
            for m in results["metrics"].values():
                r = m["templates"].get(key)
                cells.append("-" if r is None else
                             f"[{styles[r['verdict']]}]{r['deviation']:+.3f}[/]")
            table.add_row(key, f"{t['human_score']:.2f}", *cells)
        console.print(table)
        print_signatures(results, console)
        for t in results["templates"]:
            if t["status"] == "skipped":
                console.print(f"[yellow]skipped[/] {t['criterion']}/{t['template']}: "
                              f"{t['reason']}")
        for name, m in results["metrics"].items():
            if m["error"]:
                console.print(f"[bold magenta]metric error[/] {name}: {m['error']}")

    def view(self, result: DeviationResult) -> dict[str, Any]:
        """What ``evaluate.load("blindspot/blindspot").compute(protocol="deviation")`` returns:
        per metric, the deviation and verdict of every template, the skipped templates and the
        full results."""
        results = result.to_dict()
        metrics = results["metrics"]
        view = {name: {"deviations": {t: r["deviation"] for t, r in m["templates"].items()},
                       "verdicts": {t: r["verdict"] for t, r in m["templates"].items()},
                       "error": m["error"]} for name, m in metrics.items()}
        skipped = {f"{t['criterion']}/{t['template']}": t["reason"] for t in results["templates"]
                   if t["status"] == "skipped"}
        out: dict[str, Any] = {"metrics": view, "skipped": skipped, "results": results}
        if len(view) == 1:
            (name, only), = view.items()
            out.update(metric=name, **only)
        return out


__all__ = ["DeviationProtocol", "deviation", "normalise",
           "normaliser", "run_deviation"]
