"""Correlation of metrics with human criteria (Sai et al., EMNLP 2021, §2 and §5.1; SummEval).

Given outputs of several systems on the same documents with human scores per criterion (e.g.
SummEval's expert coherence / consistency / fluency / relevance), every metric scores every
output against its document's references through the scoring layer (batched, cached), and is
correlated with each criterion at two levels:

* **system level**: per system, the mean metric score and the mean human score over its
  documents; the correlation is taken over the systems (16 for SummEval).
* **summary level**: per document, the correlation between metric and human scores over the
  systems' outputs of that document; then the mean over documents. A document where either side
  is constant has no correlation: it is left out and counted in ``n_undefined``.

Coefficients (scipy.stats): Kendall's **tau-b** (``kendalltau``, which corrects for ties),
Pearson's r (``pearsonr``) and Spearman's rho (``spearmanr``). Lower-is-better metrics (TER)
are negated first, so a positive correlation always means agreement. With the option
``bootstrap=N`` each level's Kendall tau also gets a 95 % percentile bootstrap interval
(``kendall_ci``; ``scipy.stats.bootstrap``, seed ``defaults.BOOTSTRAP_SEED``): the documents are
drawn with replacement N times, and the summary level's mean or the system level's correlation
of per-system means is taken again on each draw (the inputs resampled, as Deutsch et al., 2021,
resample them).

Data: ``--data`` is the judgment file (one row per document x system: ``id``, ``system``, the
output in ``summary`` (or ``--hypothesis-column``), one numeric column per criterion). The
references come from the same rows or, with ``--protocol-option references=PATH``, from another
file joined on ``id`` (the ids of ``summeval_expert_judgments.jsonl`` and
``cnndm_summeval100_summarization.jsonl`` are the same ``dm-test-<sha1>`` strings).
``reference_columns`` (default ``gold,references``: the CNN/DM highlight and the 10 extra
human summaries, SummEval's 11 references) says which columns of that file are references; a
string or a list per cell. ``criteria`` (default: every column starting with ``expert_``, else
every other numeric column) and ``system_column`` (default ``system``) are options too.

results.json (``"protocol": "correlation"``)::

    {"schema_version": 1, "protocol": "correlation", "tool": {...},
     "config": {"metrics": [spec...], "criteria": [...], "reference_columns": [...],
                "coefficients": {"kendall": "tau-b", ...}},
     "dataset": {"name", "rows", "documents", "systems", "fingerprint"},
     "criteria_correlations": {criterion: {criterion: {"kendall", "pearson"}}},
     "metrics": {name: {"error", "signature" (blindspot.scoring.signature), "mean_score",
                        "criteria": {criterion: {"system": {"kendall", "pearson", "spearman",
                                                            "n"},
                                                 "summary": {"kendall", "pearson", "spearman",
                                                             "n_documents", "n_undefined"}}}}}}

(with ``bootstrap``, each level also holds ``"kendall_ci": [low, high]``, null where undefined).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from statistics import fmean
from typing import Any

import numpy as np
from rich.console import Console
from rich.table import Table
from scipy import stats

from blindspot import defaults
from blindspot.protocols.declarations import CORRELATION
from blindspot.protocols.interface import (
    Protocol,
    ProtocolRequest,
    ProtocolResult,
    single_data,
)
from blindspot.report import markdown as md
from blindspot.report import views
from blindspot.report.files import MARKDOWN_FILE, ReportFiles
from blindspot.report.terminal import print_signatures
from blindspot.runner.data import load_source
from blindspot.runner.entries import error_text, signature
from blindspot.runner.entries import tool as _tool
from blindspot.runner.metric_spec import resolve_metrics
from blindspot.runner.scorers import scorer_for, signed_scores
from blindspot.runner.state import content_key
from blindspot.suggest import did_you_mean

COEFFICIENTS = ("kendall", "pearson", "spearman")


@dataclass(kw_only=True)
class CorrelationResult(ProtocolResult):
    """results.json of a correlation run (layout: the module docstring)."""

    protocol: str = "correlation"
    config: dict[str, Any]
    dataset: dict[str, Any]
    criteria_correlations: dict[str, Any]
    metrics: dict[str, Any]


def _coefficient(name: str) -> Callable[[Sequence[float], Sequence[float]], float]:

    function = {"kendall": stats.kendalltau, "pearson": stats.pearsonr,
                "spearman": stats.spearmanr}[name]

    def compute(x: Sequence[float], y: Sequence[float]) -> float:
        if len(x) < 2 or len(set(x)) < 2 or len(set(y)) < 2:
            return math.nan  # undefined for constant input (scipy would warn and say NaN)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return float(function(x, y)[0])
    return compute


def correlations(x: Sequence[float], y: Sequence[float]) -> dict[str, float]:
    """Kendall tau-b, Pearson and Spearman of two equally long series (NaN when undefined)."""
    return {name: _coefficient(name)(x, y) for name in COEFFICIENTS}


def system_level(systems: Sequence[str], metric: Sequence[float], human: Sequence[float]
                 ) -> dict[str, Any]:
    """Correlation over systems of the per-system means."""
    groups: dict[str, list[int]] = {}
    for i, s in enumerate(systems):
        groups.setdefault(s, []).append(i)
    names = sorted(groups)
    m = [fmean(metric[i] for i in groups[s]) for s in names]
    h = [fmean(human[i] for i in groups[s]) for s in names]
    return {**correlations(m, h), "n": len(names)}


def _groups(keys: Sequence[str]) -> dict[str, list[int]]:
    """The row indices of each key, keys sorted."""
    groups: dict[str, list[int]] = {}
    for i, key in enumerate(keys):
        groups.setdefault(key, []).append(i)
    return dict(sorted(groups.items()))


def _per_document(documents: Sequence[str], metric: Sequence[float], human: Sequence[float]
                  ) -> tuple[dict[str, list[float]], int]:
    """Each coefficient over each document's outputs (documents where one is undefined left
    out), and how many documents were left out."""
    per_doc: dict[str, list[float]] = {name: [] for name in COEFFICIENTS}
    undefined = 0
    for rows in _groups(documents).values():
        values = correlations([metric[i] for i in rows], [human[i] for i in rows])
        if any(math.isnan(v) for v in values.values()):
            undefined += 1
            continue
        for name, v in values.items():
            per_doc[name].append(v)
    return per_doc, undefined


def summary_level(documents: Sequence[str], metric: Sequence[float], human: Sequence[float]
                  ) -> dict[str, Any]:
    """Mean over documents of the correlation over that document's outputs."""
    per_doc, undefined = _per_document(documents, metric, human)
    out: dict[str, Any] = {name: fmean(v) if v else math.nan for name, v in per_doc.items()}
    out.update(n_documents=len(per_doc["kendall"]), n_undefined=undefined)
    return out


def _percentile_interval(sample: np.ndarray, statistic: Callable[..., Any], resamples: int,
                         vectorized: bool) -> list[float] | None:
    """The 95 % percentile bootstrap interval of ``statistic`` over ``sample`` (drawn with
    replacement ``resamples`` times, seeded), None when undefined (fewer than 2 items, or a
    draw where the statistic is)."""
    if len(sample) < 2:
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a degenerate draw: the interval is NaN, said as None
        found = stats.bootstrap((sample,), statistic, n_resamples=resamples,
                                vectorized=vectorized, method="percentile",
                                rng=np.random.default_rng(defaults.BOOTSTRAP_SEED))
    low, high = found.confidence_interval
    return None if math.isnan(low) or math.isnan(high) else [float(low), float(high)]


def kendall_intervals(systems: Sequence[str], documents: Sequence[str], metric: Sequence[float],
                      human: Sequence[float], resamples: int) -> dict[str, list[float] | None]:
    """The 95 % bootstrap intervals of the system- and summary-level Kendall tau, the documents
    resampled (see the module docstring)."""
    per_doc, _ = _per_document(documents, metric, human)
    summary = _percentile_interval(np.array(per_doc["kendall"]), np.mean, resamples, True)
    docs = list(_groups(documents).values())
    names = sorted(set(systems))
    where = {name: j for j, name in enumerate(names)}
    # per document and system: the sums of the metric's and the humans' scores, and the count
    sums = np.zeros((2, len(docs), len(names)))
    counts = np.zeros((len(docs), len(names)))
    for d, rows in enumerate(docs):
        for i in rows:
            sums[:, d, where[systems[i]]] += (metric[i], human[i])
            counts[d, where[systems[i]]] += 1

    def system_tau(picked: np.ndarray) -> float:
        total = counts[picked].sum(0)
        kept = total > 0
        means = sums[:, picked].sum(1)[:, kept] / total[kept]
        return _coefficient("kendall")(list(means[0]), list(means[1]))

    system = _percentile_interval(np.arange(len(docs)), system_tau, resamples, False)
    return {"system": system, "summary": summary}


def criteria_matrix(rows: Sequence[Mapping[str, Any]], criteria: Sequence[str]
                    ) -> dict[str, dict[str, dict[str, float]]]:
    """Kendall tau-b and Pearson between every pair of human criteria over all outputs (the
    paper's Figure 1 and Figure 6: how far apart the criteria themselves are)."""
    columns = {c: [float(r[c]) for r in rows] for c in criteria}
    return {a: {b: {"kendall": _coefficient("kendall")(columns[a], columns[b]),
                    "pearson": _coefficient("pearson")(columns[a], columns[b])}
                for b in criteria} for a in criteria}


# -- data -----------------------------------------------------------------------------------------

def _read_rows(source: Any) -> tuple[str, list[dict[str, Any]]]:

    name, dataset = load_source(source, "summarization")
    return name, dataset.to_list()


def _as_refs(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    return [v for v in value if isinstance(v, str)]


def _reference_table(path: Any, columns: Sequence[str]) -> dict[str, list[str]]:
    """id -> references, from the file at ``path`` (columns checked)."""
    name, rows = _read_rows(path)
    if not rows:
        raise ValueError(f"references file {name!r} has no rows")
    missing = [c for c in ("id", *columns) if c not in rows[0]]
    if missing:
        raise ValueError(f"references file {name!r} lacks column(s) {missing}; it has "
                         f"{sorted(rows[0])}; set --protocol-option reference_columns=...")
    return {str(r["id"]): [x for c in columns for x in _as_refs(r[c])] for r in rows}


def _criteria(rows: list[dict[str, Any]], given: Any, skip: set[str]) -> list[str]:
    columns = list(rows[0])
    if given:
        chosen = [c.strip() for c in (given.split(",") if isinstance(given, str) else given)]
        bad = [c for c in chosen if c not in columns]
        if bad:
            raise ValueError(f"criterion column {bad[0]!r} not found; the data has {columns}"
                             f"{did_you_mean(bad[0], columns)}")
        return chosen
    expert = [c for c in columns if c.startswith("expert_")]
    numeric = [c for c in columns if c not in skip and all(
        isinstance(r[c], (int, float)) and not isinstance(r[c], bool) for r in rows)]
    if not (expert or numeric):
        raise ValueError(f"no human criterion column found in {columns}; name them with "
                         f"--protocol-option criteria=col1,col2")
    return expert or numeric


def _pick(rows: list[dict[str, Any]], role: str, given: str | None, names: Sequence[str]) -> str:
    columns = list(rows[0])
    if given:
        if given not in columns:
            raise ValueError(f"{role} column {given!r} not found; the data has {columns}"
                             f"{did_you_mean(given, columns)}")
        return given
    found = next((n for n in names if n in columns), None)
    if found is None:
        raise ValueError(f"no {role} column ({'/'.join(names)}) in {columns}; name it with "
                         f"--{role}-column")
    return found


# -- the protocol ---------------------------------------------------------------------------------

def _scores(spec: Any, scorer: Any, hypotheses: list[str], references: list[list[str]],
            batch_size: int | None, progress: bool) -> list[float]:

    if scorer.corpus_level:
        raise ValueError(f"metric {spec.name!r} gives one corpus-level score; correlations "
                         f"need a score per output")
    if scorer.uses_source == "required":
        raise ValueError(f"metric {spec.name!r} needs the source text, which the correlation "
                         f"protocol does not pass")
    return signed_scores(spec, scorer, hypotheses, references, None, batch_size, progress)


def _metric_entry(spec: Any, rows: list[dict[str, Any]], hyp: str, refs: list[list[str]],
                  criteria: list[str], system: str, settings: Mapping[str, Any],
                  progress: bool) -> dict[str, Any]:

    entry: dict[str, Any] = {"error": None, "signature": None, "mean_score": None,
                             "criteria": {}}
    try:
        scorer = scorer_for(spec, refs)
        entry["signature"] = signature(spec, scorer)
        scores = _scores(spec, scorer, [r[hyp] for r in rows], refs, settings["batch_size"],
                         progress)
    except Exception as error:  # one failing metric is reported, the others still run
        entry["error"] = error_text(error)
        return entry
    if not all(math.isfinite(s) for s in scores):
        entry["error"] = "some scores are NaN or infinite; correlations are undefined"
        return entry
    entry["mean_score"] = fmean(scores)
    systems = [str(r[system]) for r in rows]
    documents = [str(r["id"]) for r in rows]
    for criterion in criteria:
        human = [float(r[criterion]) for r in rows]
        levels = {"system": system_level(systems, scores, human),
                  "summary": summary_level(documents, scores, human)}
        if settings["bootstrap"]:
            for level, interval in kendall_intervals(systems, documents, scores, human,
                                                     settings["bootstrap"]).items():
                levels[level]["kendall_ci"] = interval
        entry["criteria"][criterion] = levels
    return entry


def _nan_to_none(value: Any) -> Any:
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, dict):
        return {k: _nan_to_none(v) for k, v in value.items()}
    return value


def run_correlation(request: Any) -> CorrelationResult:
    """The correlation protocol's result on a request (see the module docstring); nothing
    written (the report: :func:`render_correlation_report`)."""
    options = request.options  # checked against CORRELATION.options
    data = single_data("correlation", request.data)
    specs = resolve_metrics(request.metrics, request.metric_options)
    name, rows = _read_rows(data)
    if not rows:
        raise ValueError(f"judgment data {name!r} has no rows")
    columns = dict(request.columns or {})
    hyp = _pick(rows, "hypothesis", columns.get("hypothesis"), ("summary", "hypothesis", "gold"))
    system = _pick(rows, "system", options.get("system_column"), ("system",))
    _pick(rows, "id", columns.get("id"), ("id",))
    ref_columns = options.get("reference_columns", "gold,references")
    ref_columns = [c.strip() for c in (ref_columns.split(",") if isinstance(ref_columns, str)
                                       else ref_columns)]
    if options.get("references"):
        table = _reference_table(options["references"], ref_columns)
        missing = sorted({str(r["id"]) for r in rows} - set(table))
        if missing:
            raise ValueError(f"{len(missing)} document id(s) of {name!r} have no references in "
                             f"{options['references']!r}, e.g. {missing[0]!r}")
        refs = [table[str(r["id"])] for r in rows]
    else:
        present = [c for c in ref_columns if c in rows[0]]
        if not present:
            raise ValueError(f"no reference column {ref_columns} in {name!r}; pass "
                             f"--protocol-option references=FILE (joined on id)")
        refs = [[x for c in present for x in _as_refs(r[c])] for r in rows]
    criteria = _criteria(rows, options.get("criteria"), {hyp, system, "id", *ref_columns})
    batch = options.get("batch_size")
    settings = {"batch_size": int(batch) if batch is not None else None,
                "bootstrap": CORRELATION.settings(options)["bootstrap"]}
    fingerprint = content_key(rows, refs)
    return CorrelationResult(
        tool=_tool(),
        config={"metrics": [s.as_json() for s in specs], "criteria": criteria,
                **({"bootstrap": settings["bootstrap"]} if settings["bootstrap"] else {}),
                "reference_columns": ref_columns, "hypothesis_column": hyp,
                "coefficients": {"kendall": "tau-b (scipy.stats.kendalltau)",
                                 "pearson": "scipy.stats.pearsonr",
                                 "spearman": "scipy.stats.spearmanr"}},
        dataset={"name": name, "rows": len(rows), "documents": len({r["id"] for r in rows}),
                 "systems": len({r[system] for r in rows}), "fingerprint": fingerprint},
        criteria_correlations=_nan_to_none(criteria_matrix(rows, criteria)),
        metrics={s.name: _nan_to_none(_metric_entry(s, rows, hyp, refs, criteria, system,
                                                    settings, request.progress))
                 for s in specs},
    )


CORRELATION_HEADER = ("metric", "criterion", "sys. Kendall", "sys. Pearson", "sys. Spearman",
                      "summ. Kendall", "summ. Pearson", "summ. Spearman")


def correlation_table(results: dict[str, Any]) -> list[str]:
    """Markdown lines: one row per metric x criterion, the three coefficients at both levels."""
    rows = []
    for name, entry in results["metrics"].items():
        if entry["error"]:
            rows.append([name, f"error: {entry['error']}", *[""] * 6])
            continue
        for criterion, levels in entry["criteria"].items():
            rows.append([name, criterion, *(_fmt(levels[level][c])
                                            for level in ("system", "summary")
                                            for c in COEFFICIENTS)])
    return md.table(CORRELATION_HEADER, rows)


def criteria_table(results: dict[str, Any]) -> list[str]:
    """Markdown lines: Kendall tau-b between the human criteria (over all outputs)."""
    matrix = results["criteria_correlations"]
    names = list(matrix)
    return md.table(["Kendall tau-b", *names],
                 [[a, *(_fmt(matrix[a][b]["kendall"]) for b in names)] for a in names])


def _fmt(value: Any) -> str:
    return "-" if value is None else f"{value:.4f}"


def render_correlation_report(results: dict[str, Any]) -> ReportFiles:
    """The report folder: results.json and report.md (the correlation table)."""
    data = results["dataset"]
    lines = [f"# Correlation with human criteria: `{data['name']}`", "",
             f"{data['rows']} outputs: {data['documents']} documents x {data['systems']} systems. "
             "System level: correlation over systems of per-system means. Summary level: mean "
             "over documents of the correlation over that document's outputs (documents with a "
             "constant side left out). Kendall is tau-b.", "", *correlation_table(results), "",
             *md.signature_lines(views.signatures(results)),
             "## Between the human criteria (all outputs)", "", *criteria_table(results)]
    return ReportFiles(results, {MARKDOWN_FILE: "\n".join(lines) + "\n"})


class CorrelationProtocol(Protocol[CorrelationResult]):
    declaration = CORRELATION

    def execute(self, request: ProtocolRequest) -> CorrelationResult:
        return run_correlation(request)

    def render(self, result: CorrelationResult) -> ReportFiles:
        return render_correlation_report(result.to_dict())

    def summarise(self, result: CorrelationResult, console: Console) -> None:
        """The correlation table on the terminal."""
        results = result.to_dict()
        table = Table(title=f"correlation with human criteria ({results['dataset']['name']}; "
                            f"Kendall tau-b / Pearson / Spearman)")
        for column in ("metric", "criterion", "system level", "summary level"):
            table.add_column(column)
        for name, entry in results["metrics"].items():
            if entry["error"]:
                console.print(f"[bold magenta]metric error[/] {name}: {entry['error']}")
                continue
            for criterion, levels in entry["criteria"].items():
                cells = [" / ".join(_fmt(levels[level][c]) for c in COEFFICIENTS)
                         for level in ("system", "summary")]
                table.add_row(name, criterion, *cells)
        console.print(table)
        print_signatures(results, console)

    def view(self, result: CorrelationResult) -> dict[str, Any]:
        """What ``evaluate.load("blindspot/blindspot").compute(protocol="correlation")`` returns."""
        results = result.to_dict()
        view = {name: m["criteria"] for name, m in results["metrics"].items()}
        out: dict[str, Any] = {"correlations": view, "results": results}
        if len(view) == 1:
            (name, only), = view.items()
            out.update(metric=name, criteria=only)
        return out


__all__ = ["CorrelationProtocol", "correlations", "criteria_matrix", "kendall_intervals",
           "run_correlation", "summary_level", "system_level"]
