"""Self-evaluation bias as a protocol: the generator x evaluator score matrix.

He, Zhang, Wang, Kumar, Cho, Glass and Tsvetkov, *On the Blind Spots of Model-Based Evaluation
Metrics for Text Generation* (ACL 2023), §5.4 "The Self-Evaluation Bias" (Tables 5 and 6):
log-probability metrics (GPT-PPL, BARTScore) are built on the same pretrained LMs that new NLG
systems are built on, and such an evaluator ranks the generations of the system sharing its base
model above the others (GPT2-small and -medium perplexities prefer their own GPT-2 size; BART-
and T5-based BARTScore prefer BART and T5 generators). The paper's advice: never compare systems
with a metric built on one of their base models without other evaluations.

Given the outputs of several generator systems and several evaluators (any registered scorer),
:func:`self_bias_matrix` scores every system with every evaluator through the shared scoring
layer (so the score cache serves repeated runs), ranks the systems per evaluator and flags every
evaluator whose own base model's system ranks first.

Choices, stated:

* A cell is the mean of the per-row scores (population std beside it). A cell with any NaN
  score (GPT-PPL of an empty text) is not averaged over the other rows, which would compare
  systems on different rows: it is reported in ``errors``, left out of the ranking, and never
  flagged.
* Higher is better for every scorer of the project (perplexities are negated) except TER;
  :class:`Evaluator` says which way it ranks, and :func:`parse_evaluator` knows TER.
* "Ranks first" is strict: a tie with another system at the top is no self-preference. The
  ``margin`` is signed so that a positive margin always means "own system preferred".

Evaluator spec strings (the command line's grammar, :func:`parse_evaluator`)::

    metric[.output][@model][=base_system]

``gpt_ppl@smollm2=smollm2`` is GPT-PPL on SmolLM2 whose base model is the system ``smollm2``;
``bertscore.f1@minilm`` scores BERTScore's F1 with MiniLM and has no base system; ``ter`` ranks
lowest first. The last ``=`` starts the base system, so a model path may hold ``=`` only when a
base system follows it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
from rich.console import Console

from blindspot.errors import BlindspotInputError
from blindspot.io import read_table
from blindspot.protocols.declarations import SELF_BIAS
from blindspot.protocols.interface import (
    Protocol,
    ProtocolRequest,
    ProtocolResult,
    single_data,
)
from blindspot.report.files import MARKDOWN_FILE, ReportFiles
from blindspot.report.markdown import signature_lines
from blindspot.runner.entries import tool as _tool
from blindspot.runner.metric_spec import lower_is_better
from blindspot.runner.scorers import make_scorer
from blindspot.scoring.engine import score_rows
from blindspot.scoring.scorer import SCORERS
from blindspot.scoring.signature import metric_signature
from blindspot.suggest import did_you_mean

FLAG = "⚑"
_JSON_SCALARS = (str, int, float, bool, type(None))
_OUTPUTS_FORMS = ("outputs must be {system: [hypotheses]} or rows with 'system' and 'hypothesis' "
                  "columns (a Dataset or a list of dicts)")


@dataclass(frozen=True)
class Evaluator:
    """One evaluator: a registered scorer with its options, which of its outputs to read
    (default: its first), and the generator system that shares its base model (or None)."""
    name: str
    metric: str
    options: dict[str, Any] = field(default_factory=dict)
    output: str | None = None
    base_model: str | None = None
    higher_is_better: bool = True

    def describe(self) -> dict[str, Any]:
        """The evaluator as JSON-ready data (options that are not JSON scalars as text)."""
        options = {k: v if isinstance(v, _JSON_SCALARS) else str(v)
                   for k, v in self.options.items()}
        return {"metric": self.metric, "options": options, "output": self.output,
                "base_model": self.base_model, "higher_is_better": self.higher_is_better}


@dataclass(frozen=True)
class SystemRows:
    """One generator system's rows: hypotheses and, when given, one reference/source per row."""
    hypotheses: list[str]
    references: list[Any] | None = None
    sources: list[Any] | None = None


# -- evaluator specs ---------------------------------------------------------------------------


def _split_last(text: str, mark: str, spec: str, what: str) -> tuple[str, str | None]:
    """``text`` cut at its last ``mark``: (before, after), after None when there is no mark."""
    if mark not in text:
        return text, None
    before, _, after = text.rpartition(mark)
    if not after.strip():
        raise ValueError(f"evaluator spec {spec!r}: nothing after {mark!r}; give {what} "
                         f"(grammar: metric[.output][@model][=base_system]) or drop the {mark!r}")
    return before, after.strip()


def parse_evaluator(spec: str) -> Evaluator:
    """An :class:`Evaluator` from ``metric[.output][@model][=base_system]``.

    The evaluator's name is the spec without its ``=base_system`` part. The metric is not looked
    up here (:func:`self_bias_matrix` does, with the list of valid metrics).
    """
    text = spec.strip()
    head, base = _split_last(text, "=", spec, "the generator system sharing the base model")
    if "@" in head:
        metric_part, _, model = head.partition("@")
        if not model.strip():
            raise ValueError(f"evaluator spec {spec!r}: nothing after '@'; give a model "
                             f"(e.g. gpt_ppl@smollm2) or drop the '@'")
    else:
        metric_part, model = head, ""
    metric, _, output = metric_part.strip().partition(".")
    if not metric.isidentifier():
        raise ValueError(f"evaluator spec {spec!r}: {metric!r} is not a metric name; "
                         f"grammar: metric[.output][@model][=base_system], e.g. "
                         f"gpt_ppl@smollm2=smollm2")
    if "." in metric_part and not output:
        raise ValueError(f"evaluator spec {spec!r}: nothing after '.'; give an output "
                         f"(e.g. bertscore.f1) or drop the '.'")
    options = {"model": model.strip()} if model.strip() else {}
    return Evaluator(name=head.strip(), metric=metric, options=options, output=output or None,
                     base_model=base, higher_is_better=not lower_is_better(metric, output or None))


def parse_evaluators(text: str) -> list[Evaluator]:
    """Comma-separated evaluator specs (see :func:`parse_evaluator`)."""
    specs = [part for part in text.split(",") if part.strip()]
    if not specs:
        raise ValueError("evaluators is empty; give comma-separated specs "
                         "metric[.output][@model][=base_system], e.g. gpt_ppl@smollm2=smollm2")
    return [parse_evaluator(spec) for spec in specs]


# -- the systems' rows -------------------------------------------------------------------------


def _texts(name: str, values: Any) -> list[str]:
    """A system's hypotheses as a list of strings, or a ValueError naming the system."""
    if isinstance(values, str) or not isinstance(values, Sequence):
        raise ValueError(f"outputs[{name!r}] must be a list of hypotheses (strings), "
                         f"got {type(values).__name__}")
    if not values:
        raise ValueError(f"outputs[{name!r}] is empty; give at least one hypothesis per system "
                         f"or leave the system out")
    for i, text in enumerate(values):
        if not isinstance(text, str):
            raise ValueError(f"outputs[{name!r}][{i}] must be a string, got "
                             f"{type(text).__name__}; replace missing hypotheses by \"\"")
    return list(values)


def _per_system(argument: str, value: Any, systems: Mapping[str, list[str]]
                ) -> dict[str, list[Any]] | None:
    """References or sources for each system: one shared list (one item per row, every system
    with the same rows) or a mapping from system to its own list."""
    if value is None:
        return None
    if isinstance(value, Mapping):
        missing = [s for s in systems if s not in value]
        if missing:
            raise ValueError(f"{argument} has no entry for system(s) {missing}; give a list per "
                             f"system, or one shared list")
        lists = {s: list(value[s]) for s in systems}
    elif isinstance(value, str) or not isinstance(value, Sequence):
        raise ValueError(f"{argument} must be a list (one item per row) or a mapping from "
                         f"system to such a list, got {type(value).__name__}")
    else:
        lists = {s: list(value) for s in systems}
    for system, hyps in systems.items():
        if len(lists[system]) != len(hyps):
            raise ValueError(f"{argument} has {len(lists[system])} items for system {system!r} "
                             f"but it has {len(hyps)} outputs; every system must answer the same "
                             f"rows, one {argument[:-1]} per row")
    return lists


def _from_mapping(outputs: Mapping[str, Any], references: Any, sources: Any
                  ) -> dict[str, SystemRows]:
    hyps = {str(name): _texts(str(name), values) for name, values in outputs.items()}
    refs = _per_system("references", references, hyps)
    srcs = _per_system("sources", sources, hyps)
    return {s: SystemRows(h, refs[s] if refs else None, srcs[s] if srcs else None)
            for s, h in hyps.items()}


def _value(row: Mapping[str, Any], column: str, index: int) -> Any:
    if column not in row:
        raise BlindspotInputError(
            f"no column {column!r}", row=index + 1, field=column,
            fix=f"The row's columns: {sorted(row)}{did_you_mean(column, row)}; name the one that "
                "holds it (--system-column, --hypothesis-column, --references-column, "
                "--source-column)")
    return row[column]


def group_rows(rows: Iterable[Mapping[str, Any]], system_column: str = "system",
               hypothesis_column: str = "hypothesis", references_column: str | None = None,
               source_column: str | None = None) -> dict[str, SystemRows]:
    """Rows of (system, hypothesis[, references][, source]) grouped by system, systems in
    first-seen order and each system's rows in row order (a Dataset or a list of dicts)."""
    grouped: dict[str, SystemRows] = {}
    for index, row in enumerate(rows):
        system = str(_value(row, system_column, index))
        entry = grouped.setdefault(system, SystemRows(
            [], [] if references_column else None, [] if source_column else None))
        entry.hypotheses.append(_value(row, hypothesis_column, index))
        if references_column and entry.references is not None:  # a list when the column is named
            entry.references.append(_value(row, references_column, index))
        if source_column and entry.sources is not None:
            entry.sources.append(_value(row, source_column, index))
    if not grouped:
        raise ValueError("outputs has no rows; give at least one (system, hypothesis) row")
    for system, entry in grouped.items():
        _texts(system, entry.hypotheses)
    return grouped


def _from_rows(rows: Any, references: Any, sources: Any) -> dict[str, SystemRows]:
    if references is not None or sources is not None:
        raise ValueError("with rows as outputs, give references and sources as the rows' "
                         "'references' and 'source' columns, not as arguments")
    rows = list(rows)
    if not all(isinstance(row, Mapping) for row in rows):
        raise ValueError(_OUTPUTS_FORMS)
    columns = set(rows[0]) if rows else set()
    return group_rows(rows, references_column="references" if "references" in columns else None,
                      source_column="source" if "source" in columns else None)


def _systems(outputs: Any, references: Any, sources: Any) -> dict[str, SystemRows]:
    if isinstance(outputs, Mapping):
        if not outputs:
            raise ValueError("outputs is empty; give {system: [hypothesis, ...]} for at least "
                             "one system")
        return _from_mapping(outputs, references, sources)
    if outputs is None or isinstance(outputs, str):
        raise ValueError(_OUTPUTS_FORMS)
    return _from_rows(outputs, references, sources)


# -- scoring and ranking -----------------------------------------------------------------------


def _check_evaluators(evaluators: Sequence[Evaluator], systems: Sequence[str]) -> None:
    if not evaluators:
        raise ValueError("evaluators is empty; give at least one Evaluator (e.g. "
                         "Evaluator('gpt_ppl@smollm2', 'gpt_ppl', {'model': 'smollm2'}))")
    names = [e.name for e in evaluators]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise ValueError(f"evaluator names must be unique; repeated: {repeated}")
    for evaluator in evaluators:
        if evaluator.base_model is not None and evaluator.base_model not in systems:
            raise ValueError(f"evaluator {evaluator.name!r}: base_model "
                             f"{evaluator.base_model!r} is not a system; valid systems: "
                             f"{list(systems)} (or None when no system shares its base model)")


def _scorer_and_key(evaluator: Evaluator) -> tuple[Any, str]:
    """The evaluator's scorer and the output key to read, or a ValueError naming the evaluator.

    Built as the runner builds its scorers: ``model`` goes to the scorer's own model option
    (``bertscore@minilm`` sets ``model_type``)."""
    if evaluator.metric in SCORERS and SCORERS[evaluator.metric].corpus_level:
        raise ValueError(f"evaluator {evaluator.name!r}: metric {evaluator.metric!r} gives only "
                         f"corpus-level scores; the matrix needs per-row scores (e.g. gpt_ppl)")
    try:
        scorer = make_scorer(evaluator.metric, evaluator.options)
    except (TypeError, ValueError) as error:
        raise ValueError(f"evaluator {evaluator.name!r}: {error}") from error
    key = evaluator.output or scorer.outputs[0]
    if key not in scorer.outputs:
        raise ValueError(f"evaluator {evaluator.name!r}: metric {evaluator.metric!r} has no "
                         f"output {key!r}; valid outputs: {', '.join(scorer.outputs)}"
                         f"{did_you_mean(key, scorer.outputs)}")
    return scorer, key


def _joined(systems: Mapping[str, SystemRows], attribute: str) -> list[Any] | None:
    lists = [getattr(rows, attribute) for rows in systems.values()]
    return None if lists[0] is None else [item for part in lists for item in part]


def score_systems(evaluator: Evaluator, systems: Mapping[str, SystemRows],
                  progress: bool = False,
                  built: tuple[Any, str] | None = None) -> dict[str, list[float]]:
    """Every system's per-row scores under one evaluator, in one pass of the scoring layer
    (distinct inputs are scored once and the score cache is used); ``built``: its scorer and
    output key when already built."""
    scorer, key = built or _scorer_and_key(evaluator)
    try:
        hypotheses = [text for rows in systems.values() for text in rows.hypotheses]
        scores = score_rows(scorer, hypotheses, _joined(systems, "references"),
                            _joined(systems, "sources"), progress=progress)[key]
    except ValueError as error:
        raise ValueError(f"evaluator {evaluator.name!r}: {error}") from error
    out, start = {}, 0
    for system, rows in systems.items():
        out[system] = [float(s) for s in scores[start: start + len(rows.hypotheses)]]
        start += len(rows.hypotheses)
    return out


def summarise_cell(scores: Sequence[float]) -> tuple[float | None, float | None, str | None]:
    """(mean, population std, error): no mean and an error message when any score is NaN."""
    bad = [i for i, s in enumerate(scores) if math.isnan(s)]
    if bad:
        shown = ", ".join(map(str, bad[:5])) + (", ..." if len(bad) > 5 else "")
        rows = "row" if len(bad) == 1 else "rows"
        return None, None, (f"{len(bad)} of {len(scores)} rows scored NaN ({rows} {shown}), e.g. "
                            f"an empty hypothesis; fix or drop those rows for every system")
    return float(np.mean(scores)), float(np.std(scores)), None


def rank_systems(means: Mapping[str, float | None], higher_is_better: bool = True) -> list[str]:
    """Systems with a score, best first; ties keep the systems' order; None is left out."""
    scored = {s: v for s, v in means.items() if v is not None}
    sign = -1.0 if higher_is_better else 1.0
    return sorted(scored, key=lambda s: sign * scored[s])


def self_preference(evaluator: Evaluator, means: Mapping[str, float | None]) -> dict[str, Any]:
    """Where the evaluator puts its own base model's system: rank (1 = first; 1 + the number
    of systems strictly better), margin over the best other system (positive: own preferred)
    and whether it ranks first strictly. No rank and never first when its cell has no score."""
    own = evaluator.base_model
    sign = 1.0 if evaluator.higher_is_better else -1.0
    result: dict[str, Any] = {"base_model": own, "rank": None, "ranks_first": False,
                              "margin": None}
    own_mean = means.get(own) if own is not None else None
    if own_mean is None:
        return result
    others = [sign * v for s, v in means.items() if s != own and v is not None]
    mine = sign * own_mean
    result["rank"] = 1 + sum(v > mine for v in others)
    if others:
        margin = mine - max(others)
        result["margin"] = margin
        result["ranks_first"] = margin > 0
    return result


@dataclass(kw_only=True)
class SelfBiasResult(ProtocolResult):
    """The self-bias matrix (what :func:`self_bias_matrix` describes), field for field the keys
    of its ``results.json``. That file (once ``self_bias.json``) never had the common keys
    (schema version, protocol, tool), so :meth:`to_dict` leaves them out."""

    protocol: str = "self-bias"
    systems: list[str]
    evaluators: list[str]
    evaluator_specs: dict[str, dict[str, Any]]
    matrix: dict[str, dict[str, float | None]] = field(default_factory=dict)
    std: dict[str, dict[str, float | None]] = field(default_factory=dict)
    n: dict[str, dict[str, int]] = field(default_factory=dict)
    ranking: dict[str, list[str]] = field(default_factory=dict)
    self_preference: dict[str, dict[str, Any]] = field(default_factory=dict)
    flagged: list[str] = field(default_factory=list)
    errors: dict[str, dict[str, str]] = field(default_factory=dict)
    #: per evaluator, what produced its scores (:mod:`blindspot.scoring.signature`)
    signatures: dict[str, str] = field(default_factory=dict)

    UNSAVED: ClassVar[tuple[str, ...]] = ("schema_version", "protocol", "tool")


def matrix_for_systems(systems: Mapping[str, SystemRows], evaluators: Sequence[Evaluator],
                       progress: bool = False) -> SelfBiasResult:
    """:func:`self_bias_matrix` on systems already grouped (see :func:`group_rows`), typed."""
    _check_evaluators(evaluators, list(systems))
    result = SelfBiasResult(tool=_tool(), systems=list(systems),
                            evaluators=[e.name for e in evaluators],
                            evaluator_specs={e.name: e.describe() for e in evaluators})
    for evaluator in evaluators:
        name = evaluator.name
        built = _scorer_and_key(evaluator)
        result.signatures[name] = metric_signature(*built, ())
        scores = score_systems(evaluator, systems, progress, built)
        cells = {s: summarise_cell(v) for s, v in scores.items()}
        means = {s: cell[0] for s, cell in cells.items()}
        result.matrix[name] = means
        result.std[name] = {s: cell[1] for s, cell in cells.items()}
        result.n[name] = {s: len(v) for s, v in scores.items()}
        errors = {s: cell[2] for s, cell in cells.items() if cell[2] is not None}
        if errors:
            result.errors[name] = errors
        result.ranking[name] = rank_systems(means, evaluator.higher_is_better)
        if evaluator.base_model is not None:
            preference = self_preference(evaluator, means)
            result.self_preference[name] = preference
            if preference["ranks_first"]:
                result.flagged.append(name)
    return result


def self_bias_matrix(outputs: Any, evaluators: Sequence[Evaluator], references: Any = None,
                     sources: Any = None, progress: bool = True) -> dict[str, Any]:
    """The generator x evaluator score matrix with self-preference flags, as JSON-ready data.

    Args:
        outputs: ``{system: [hypothesis, ...]}``, or rows (a ``datasets.Dataset`` or a list of
            dicts) with columns ``system`` and ``hypothesis`` and, optionally, ``references``
            and ``source``.
        evaluators: the :class:`Evaluator` list (names unique; ``base_model`` a system or None).
        references, sources: with a mapping as outputs, one list shared by every system (one
            item per row, so every system has the same rows) or ``{system: list}``.
        progress: show a progress bar per evaluator while scoring.
    Returns:
        ``systems``, ``evaluators``, ``evaluator_specs``; per evaluator and system ``matrix``
        (mean score, None for an error cell), ``std``, ``n``; per evaluator ``ranking`` (best
        first), ``self_preference`` (for evaluators with a base model: ``base_model``, ``rank``,
        ``ranks_first``, ``margin``); ``flagged`` (evaluators whose base model ranks first),
        ``errors`` (``{evaluator: {system: message}}`` for cells with NaN scores) and
        ``signatures`` (per evaluator, what produced its scores).
    """
    return matrix_for_systems(_systems(outputs, references, sources), evaluators,
                              progress).to_dict()


# -- the table ---------------------------------------------------------------------------------


def _escape(text: str) -> str:
    return str(text).replace("|", "\\|")


def _header(result: Mapping[str, Any], name: str) -> str:
    spec = result["evaluator_specs"][name]
    parts = [_escape(name)]
    if spec["base_model"] is not None:
        parts.append(f"(base: {_escape(spec['base_model'])})")
    if not spec["higher_is_better"]:
        parts.append("↓")
    return " ".join(parts)


def _cell(result: Mapping[str, Any], name: str, system: str) -> str:
    value = result["matrix"][name][system]
    if value is None:
        return "error"
    ranking = result["ranking"][name]
    text = f"{value:.3f}"
    if result["matrix"][name][ranking[0]] == value:
        text = f"**{text}**"
    preference = result["self_preference"].get(name)
    if preference and preference["ranks_first"] and preference["base_model"] == system:
        text += f" {FLAG}"
    return text


def _notes(result: Mapping[str, Any]) -> list[str]:
    lines = []
    for name in result["flagged"]:
        preference = result["self_preference"][name]
        lines.append(f"- {FLAG} self-preference: {_escape(name)} ranks its own base model's "
                     f"system {_escape(preference['base_model'])} first (margin "
                     f"{preference['margin']:+.3f} over the best other system)")
    for name, errors in result["errors"].items():
        for system, message in errors.items():
            lines.append(f"- error, {_escape(name)} x {_escape(system)}: {_escape(message)}")
    return lines


def format_matrix(result: Mapping[str, Any]) -> str:
    """A markdown table, generator systems x evaluators: the best system per evaluator in bold,
    ``⚑`` where an evaluator ranks its own base model's system first, ``↓`` on evaluators that
    rank lower scores first, then one line per flag and per error cell."""
    names = result["evaluators"]
    lines = ["| generator | " + " | ".join(_header(result, n) for n in names) + " |",
             "|---|" + "---:|" * len(names)]
    for system in result["systems"]:
        cells = [_cell(result, name, system) for name in names]
        lines.append(f"| {_escape(system)} | " + " | ".join(cells) + " |")
    notes = _notes(result)
    marks = signature_lines(list(result.get("signatures", {}).items()))
    return "\n".join(lines + ([""] + notes if notes else [])
                     + (["", *marks[:-1]] if marks else [])) + "\n"


# -- the protocol --------------------------------------------------------------------------------

class SelfBiasProtocol(Protocol[SelfBiasResult]):
    """``blindspot run --protocol self-bias --data TABLE --metrics EVALUATORS``: the rows of
    ``--data`` are (system, hypothesis[, references][, source]) with the columns of
    ``--hypothesis-column`` (default ``hypothesis``), ``--references-column``, ``--source-column``
    and the ``system_column`` option; ``--metrics`` holds the evaluator specs
    (:func:`parse_evaluators`). The report folder gets ``results.json`` and ``report.md`` (the
    table), as ``blindspot self-bias --out`` writes it."""
    declaration = SELF_BIAS

    def execute(self, request: ProtocolRequest) -> SelfBiasResult:
        """The evaluators read first (a bad spec fails before the data is read), then the
        rows grouped by system and scored."""
        evaluators = parse_evaluators(request.metrics if isinstance(request.metrics, str)
                                      else ",".join(request.metrics))
        for evaluator in evaluators:  # an unknown metric (with its did-you-mean) before the data
            SCORERS.get(evaluator.metric)
        data = single_data(self.name, request.data)
        rows = read_table(data) if isinstance(data, (str, Path)) else data
        columns = dict(request.columns or {})
        try:
            systems = group_rows(rows, SELF_BIAS.settings(request.options)["system_column"],
                                 columns.get("hypothesis") or "hypothesis",
                                 columns.get("references"), columns.get("source"))
        except BlindspotInputError as error:
            raise error.in_file(data) if isinstance(data, (str, Path)) else error from None
        return matrix_for_systems(systems, evaluators, request.progress)

    def render(self, result: SelfBiasResult) -> ReportFiles:
        """results.json and report.md (:func:`format_matrix`)."""
        results = result.to_dict()
        return ReportFiles(results, {MARKDOWN_FILE: format_matrix(results)})

    def summarise(self, result: SelfBiasResult, console: Console) -> None:
        console.print(format_matrix(result.to_dict()), markup=False, highlight=False,
                      soft_wrap=True)  # a signature is read (and copied) as written

    def view(self, result: SelfBiasResult) -> dict[str, Any]:
        results = result.to_dict()
        return {"matrix": results["matrix"], "ranking": results["ranking"],
                "flagged": results["flagged"], "results": results}
