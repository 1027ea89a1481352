"""The preference protocol as a run: load MENLI-style sets, score both candidates, report.

``blindspot run --protocol preference --data SET.csv --metrics bleu,chrf,rouge`` and
``evaluate.load("blindspot/blindspot").compute(data=..., metric=..., protocol="preference")``
come here through the protocol registry. Every metric scores the paraphrase and the adversarial
candidate of every row against the mode's anchor through the shared scoring layer (batched,
deduplicated, cached), and :mod:`blindspot.protocols.preference` turns the paired scores into the figures.

How the anchor reaches a metric (``--protocol-option mode=...``):

* ``ref-based``: the anchor ``ref`` is the metric's reference; a metric that also reads the
  source (COMET) gets the ``source`` column as its source.
* ``ref-free``: the anchor ``source`` is the metric's source when it reads one (COMET-QE,
  MENLI's src->hyp direction); a metric that reads only references (BLEU, chrF, ROUGE) compares
  the candidate with the source text as its reference, which is what "ref-free" can mean for it;
  a metric that needs both a reference and a source cannot run ref-free and reports an error.

Lower-is-better outputs (TER) are negated first, so a hit is always "the paraphrase scores
better". A metric that fails (or is corpus-level only, with no per-row score to compare) gets an
``error`` and no figures; the other metrics still run.

Options (``--protocol-option key=value``): ``mode`` (ref-based | ref-free, default ref-based),
``fixed`` (read the ``*_fixed`` columns, default false), ``error_types`` (comma-separated or a
list, default all present), ``combine_with`` (a metric spec N, e.g. ``menli``) with ``weight``
(w in [0, 1], default 0.2, MENLI's best MT weight): each other metric M is also reported as
``w * minmax(N) + (1 - w) * minmax(M)``; ``examples`` (how many failed pairs to keep per error
type and metric, those with the largest margin for the attack first, default 1);
``batch_size``.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console

from blindspot.challenge_sets.figures import ChallengeResult, run_challenge
from blindspot.progress import progress_bar
from blindspot.protocols.declarations import PREFERENCE
from blindspot.protocols.interface import Protocol, ProtocolRequest, ProtocolResult
from blindspot.protocols.preference import (
    ADEQUACY_TYPES,
    ERROR_TYPES,
    FLUENCY_TYPES,
    Mode,
    check_error_types,
    combine_pairs,
    get_mode,
    preference_accuracy,
)
from blindspot.protocols.preference_data import (
    FIXED_COLUMNS,
    check_columns,
    dataset_name,
    load_preference_set,
    row_ids,
)
from blindspot.protocols.preference_report import print_summary, render_preference_report
from blindspot.report.files import ReportFiles
from blindspot.runner.entries import error_text, signature
from blindspot.runner.entries import tool as _tool
from blindspot.runner.metric_spec import resolve_metrics
from blindspot.runner.scorers import scorer_for, signed_scores
from blindspot.runner.state import content_key

PROTOCOL = PREFERENCE.name


@dataclass(kw_only=True)
class PreferenceResult(ProtocolResult):
    """results.json of a preference run (layout: :mod:`blindspot.protocols.preference_report`):
    the run's config and, per MENLI-style set, its metrics' figures."""

    protocol: str = PROTOCOL
    config: dict[str, Any]
    datasets: dict[str, Any] = field(default_factory=dict)

    def render(self) -> ReportFiles:
        """results.json, report.md, the plots and report.html."""
        return render_preference_report(self.to_dict())


class PreferenceProtocol(Protocol[PreferenceResult | ChallengeResult]):
    declaration = PREFERENCE

    def execute(self, request: ProtocolRequest) -> PreferenceResult | ChallengeResult:
        """:func:`preference_result` on the request."""
        return preference_result(request.data, request.metrics,
                                 metric_options=request.metric_options,
                                 progress=request.progress, **request.options)

    def render(self, result: PreferenceResult | ChallengeResult) -> ReportFiles:
        """The report folder of a MENLI-style run or of a challenge-set run (each result
        renders its own)."""
        return result.render()

    def summarise(self, result: PreferenceResult | ChallengeResult, console: Console) -> None:
        print_summary(result.to_dict(), console)

    def view(self, result: PreferenceResult | ChallengeResult) -> dict[str, Any]:
        """What ``evaluate.load("blindspot/blindspot").compute(protocol="preference")`` returns:
        the first metric's figures, the combined entries beside it, and the whole results."""
        results = result.to_dict()
        dataset = next(iter(results["datasets"].values()))
        entries = dataset["metrics"]
        # the module's one metric; a combine_with metric it did not name was put first
        name = [n for n, e in entries.items() if e["combination"] is None][-1]
        entry = entries[name]
        keys = ("mean", "adequacy", "fluency", "kendall_like", "n", "hits", "ties", "n_nan",
                "error")
        return {"metric": name, "mode": results["config"]["mode"],
                "accuracy": {t: e["accuracy"] for t, e in entry["per_type"].items()},
                **{k: entry[k] for k in keys}, "per_type": entry["per_type"],
                "combined": {n: {k: e[k] for k in keys} for n, e in entries.items()
                             if e["combination"] is not None},
                "results": results}


def parse_options(options: dict[str, Any]) -> dict[str, Any]:
    """The protocol's settings from ``--protocol-option`` values, checked against the declared
    options (:data:`blindspot.protocols.declarations.PREFERENCE`), with their defaults."""
    options = PREFERENCE.check_options(options)
    settings = PREFERENCE.settings(options)
    mode = get_mode(settings["mode"])
    fixed = settings["fixed"]
    if fixed and mode.name == "ref-free":
        raise ValueError("fixed=true corrects hyp_para and hyp_adv_based, which the ref-free mode "
                         "does not read; drop fixed or use mode=ref-based")
    if "weight" in options and not options.get("combine_with"):
        raise ValueError("--protocol-option weight needs combine_with=<metric> (the metric N of "
                         "w * minmax(N) + (1 - w) * minmax(M))")
    types = settings["error_types"]
    return {**settings, "mode": mode,
            "error_types": None if types is None else check_error_types(types)}


# -- scoring ---------------------------------------------------------------------------------------

def anchor_inputs(scorer: Any, mode: Mode, dataset: Any) -> dict[str, list[str] | None]:
    """``references`` and ``sources`` of one candidate column, as the module docstring says."""
    anchor = list(dataset[mode.anchor])
    source = list(dataset["source"]) if "source" in dataset.column_names else None
    reads_source = scorer.uses_source != "none"
    if mode.name == "ref-based":
        if scorer.uses_source == "required" and source is None:
            raise ValueError(f"metric {scorer.name!r} needs the source texts; the set has no "
                             f"'source' column")
        return {"references": anchor if scorer.uses_references != "none" else None,
                "sources": source if reads_source else None}
    if reads_source:
        if scorer.uses_references == "required":
            raise ValueError(f"metric {scorer.name!r} needs a reference as well as the source; "
                             f"the ref-free mode compares with the source only")
        return {"references": None, "sources": anchor}
    return {"references": anchor if scorer.uses_references != "none" else None, "sources": None}


def score_pairs(scorer: Any, spec: Any, mode: Mode, dataset: Any, batch_size: int | None,
                progress: bool) -> tuple[list[float], list[float]]:
    """(paraphrase scores, adversarial scores) of every row, higher = better."""
    if scorer.corpus_level:
        raise ValueError(f"metric {spec.name!r} is corpus-level: it has no per-row score to "
                         f"compare two candidates with")
    inputs = anchor_inputs(scorer, mode, dataset)
    doubled = {k: (v + v if v is not None else None) for k, v in inputs.items()}
    candidates = list(dataset[mode.good]) + list(dataset[mode.bad])
    signed = signed_scores(spec, scorer, candidates, doubled["references"], doubled["sources"],
                           batch_size, progress)
    n = dataset.num_rows
    return signed[:n], signed[n:]


# -- results ---------------------------------------------------------------------------------------

def _scorer_config(scorer: Any | None) -> dict[str, Any] | None:
    """Every setting the scorer ran with, defaults included (ROUGE's ``use_stemmer``...)."""
    if scorer is None:
        return None
    return json.loads(json.dumps(scorer.config, sort_keys=True, default=str))


def _metric_entry(spec: Any, figures: dict[str, Any] | None, error: str | None,
                  scorer: Any | None = None) -> dict[str, Any]:
    entry = {"metric": spec.metric, "output": spec.output, "options": spec.as_json()["options"],
             "scorer_config": _scorer_config(scorer), "higher_is_better": spec.higher_is_better,
             "combination": None, "error": error, "signature": signature(spec, scorer)}
    entry.update(figures or _empty_figures())
    entry["examples"] = {}
    return entry


def _empty_figures() -> dict[str, Any]:
    return {"mean": None, "adequacy": None, "fluency": None, "kendall_like": None,
            "error_types": 0, "n": 0, "hits": 0, "misses": 0, "ties": 0, "n_nan": 0,
            "per_type": {}}


def combination_name(other: str, metric: str, weight: float) -> str:
    """``0.2*menli.e+0.8*bleu.bleu``: the display name of a combined metric."""
    return f"{weight:g}*{other}+{1 - weight:g}*{metric}"


def _combined_entries(scored: dict[str, tuple[list[float], list[float]]], specs: list[Any],
                      other: Any, weight: float, error_types: list[str], dataset: Any,
                      mode: Mode, examples: int) -> dict[str, dict[str, Any]]:
    """The ``w * minmax(N) + (1 - w) * minmax(M)`` entries of every metric M scored (the batch
    of the min-max is every judged row)."""
    entries: dict[str, dict[str, Any]] = {}
    if other.name not in scored:
        return entries
    for spec in specs:
        if spec.name == other.name or spec.name not in scored:
            continue
        para, adv = combine_pairs(*scored[other.name], *scored[spec.name], weight)
        figures = preference_accuracy(para, adv, error_types)
        entry = _metric_entry(spec, figures, None)
        entry["examples"] = worst_examples(dataset, mode, para, adv, examples)
        entry["combination"] = {"other": other.name, "metric": spec.name, "weight": weight}
        entries[combination_name(other.name, spec.name, weight)] = entry
    return entries


def worst_examples(dataset: Any, mode: Mode, para: list[float], adv: list[float],
                   k: int) -> dict[str, list[dict[str, Any]]]:
    """Per error type, the ``k`` failed pairs (misses and ties) where the attack beat the
    paraphrase by most, ties in row order; pairs with a NaN score are not examples."""


    if k == 0:
        return {}
    ids = row_ids(dataset)
    failed: dict[str, list[int]] = {}
    for index, (kind, p, a) in enumerate(zip(dataset["error"], para, adv, strict=True)):
        if not (math.isnan(p) or math.isnan(a)) and p <= a:
            failed.setdefault(kind, []).append(index)
    examples = {}
    for kind in ERROR_TYPES:
        chosen = sorted(failed.get(kind, []), key=lambda i: (para[i] - adv[i], i))[:k]
        if chosen:
            examples[kind] = [{"id": ids[i], "anchor": dataset[i][mode.anchor],
                               "paraphrase": dataset[i][mode.good],
                               "adversarial": dataset[i][mode.bad],
                               "para_score": para[i], "adv_score": adv[i]} for i in chosen]
    return examples


def _fingerprint(dataset: Any, mode: Mode) -> str:

    used = [c for c in ("id", *mode.columns) if c in dataset.column_names]
    return content_key(used, dataset.select_columns(used).to_dict())


def select_types(dataset: Any, include: list[str] | None) -> Any:
    """The rows of the error types asked for (all rows when None); a type with no row is an
    error naming the types the set has."""
    if include is None:
        return dataset
    present = set(dataset["error"])
    missing = [t for t in include if t not in present]
    if missing:
        raise ValueError(f"error type(s) {missing} have no row in this set; it has "
                         f"{sorted(present)}")
    wanted = set(include)
    return dataset.select([i for i, t in enumerate(dataset["error"]) if t in wanted])


def run_dataset(dataset: Any, specs: list[Any], settings: dict[str, Any], other: Any | None,
                progress: bool) -> dict[str, Any]:
    """One set's entry: every metric's figures (and the combinations); ``dataset`` has passed
    :func:`check_columns` (:func:`run_preference` checks every set before any scoring)."""


    mode: Mode = settings["mode"]
    rows = dataset.num_rows
    dataset = select_types(dataset, settings["error_types"])
    error_types = list(dataset["error"])
    counts = {t: error_types.count(t) for t in (*ADEQUACY_TYPES, *FLUENCY_TYPES)
              if t in set(error_types)}
    idf = list(dict.fromkeys(dataset[mode.anchor]))
    metrics: dict[str, dict[str, Any]] = {}
    scored: dict[str, tuple[list[float], list[float]]] = {}
    for spec in progress_bar(specs, desc="metrics", unit="metric", disable=not progress):
        scorer = None
        try:
            scorer = scorer_for(spec, idf)
            scored[spec.name] = score_pairs(scorer, spec, mode, dataset,
                                            settings["batch_size"], progress)
        except Exception as error:  # one metric failing is reported, the others still run
            metrics[spec.name] = _metric_entry(spec, None, error_text(error), scorer)
            continue
        figures = preference_accuracy(*scored[spec.name], error_types)
        metrics[spec.name] = _metric_entry(spec, figures, None, scorer)
        metrics[spec.name]["examples"] = worst_examples(dataset, mode, *scored[spec.name],
                                                        settings["examples"])
    if other is not None:
        metrics.update(_combined_entries(scored, specs, other, settings["weight"], error_types,
                                         dataset, mode, settings["examples"]))
    return {"rows": rows, "judged": dataset.num_rows, "fingerprint": _fingerprint(dataset, mode),
            "error_types": counts, "metrics": metrics}


def _config(settings: dict[str, Any], specs: list[Any], other: Any | None) -> dict[str, Any]:
    mode: Mode = settings["mode"]

    def read(column: str) -> str:  # the file's column behind a candidate
        return FIXED_COLUMNS.get(column, column) if settings["fixed"] else column

    return {"mode": mode.name, "preference": mode.description, "fixed": settings["fixed"],
            "columns": {"anchor": mode.anchor, "paraphrase": read(mode.good),
                        "adversarial": read(mode.bad)},
            "error_types": settings["error_types"],
            "adequacy_types": list(ADEQUACY_TYPES), "fluency_types": list(FLUENCY_TYPES),
            "combine_with": other.name if other is not None else None,
            "weight": settings["weight"] if other is not None else None,
            "examples": settings["examples"],
            "metrics": [s.as_json() for s in specs]}


def _as_sources(data: Any) -> list[Any]:
    return list(data) if isinstance(data, (list, tuple)) else [data]


def _specs(metrics: Any, metric_options: Any, combine_with: str | None) -> tuple[list[Any], Any]:
    """The metric specs, with the combination's metric N added (scored once) when not given."""
    specs = resolve_metrics(metrics, metric_options)
    if combine_with is None:
        return specs, None
    other = resolve_metrics(combine_with, metric_options)
    if len(other) != 1:
        raise ValueError(f"combine_with names one metric, got {combine_with!r}")
    found = next((s for s in specs if s.name == other[0].name), None)
    if found is None:
        specs = [other[0], *specs]
        found = other[0]
    return specs, found


def preference_result(data: Any, metrics: Any, *, metric_options: Any = None,
                      progress: bool = True, **options: Any) -> PreferenceResult | ChallengeResult:
    """Judge ``metrics`` on one or more MENLI-style sets (or challenge sets, by ``format``);
    nothing is written. ``options`` are the protocol options (module docstring)."""
    settings = parse_options(options)
    if settings["format"] != "menli":  # DEMETR, ACES: read as published, reported per phenomenon
        return run_challenge(data, metrics, settings, score_pairs, metric_options=metric_options,
                             progress=progress)
    specs, other = _specs(metrics, metric_options, settings["combine_with"])
    sets = [(dataset_name(d), load_preference_set(d, settings["fixed"])) for d in
            _as_sources(data)]
    for _, dataset in sets:  # every set is checked before any scoring
        check_columns(dataset, settings["mode"])
    found = PreferenceResult(tool=_tool(), config=_config(settings, specs, other))
    for index, (name, dataset) in enumerate(sets):
        key = name if name not in found.datasets else f"{name}#{index + 1}"
        found.datasets[key] = run_dataset(dataset, specs, settings, other, progress)
    return found


def run_preference(data: Any, metrics: Any, *, out: str | Path | None = None,
                   metric_options: Any = None, progress: bool = True,
                   **options: Any) -> dict[str, Any]:
    """The preference protocol's run (:meth:`Protocol.run`: checked options, the result, the
    report folder with ``out``) as the results dict (layout:
    :mod:`blindspot.protocols.preference_report`)."""
    request = ProtocolRequest(data, metrics, out=out, metric_options=metric_options,
                              progress=progress, options=options)
    return PreferenceProtocol().run(request).to_dict()


__all__ = ["PreferenceProtocol", "anchor_inputs", "combination_name",
           "parse_options", "preference_result", "run_preference", "score_pairs"]
