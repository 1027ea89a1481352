"""A challenge set (DEMETR, ACES) through the preference protocol, and its report.

``blindspot run --protocol preference --format demetr|aces --data FILE --metrics chrf,bleu``:
every metric scores the good and the bad translation of each item against the mode's anchor
(the reference, ref-based; the source, ref-free) through the preference protocol's scoring
(:func:`blindspot.protocols.preference_run.score_pairs`). Per phenomenon the report gives the
benchmark's own statistic (:data:`blindspot.challenge_sets.formats.FORMATS`) beside the
preference protocol's figures: accuracy (hits / n, a tie is a miss) and the Kendall-like tau
under the ``ties`` option (``excluded``: MENLI's ``(hits - misses) / (hits + misses)``;
``discordant``: ties count against the metric, as ACES counts them). The mean over phenomena
(unweighted, as DEMETR and ACES average) and, for DEMETR, per severity follow.

``results.json`` (schema 1): ``{"schema_version", "protocol": "preference", "format", "tool",
"config", "datasets": {name: {"rows", "skipped", "phenomena": {name: {"n", "group"}},
"metrics": {metric: {..., "error", "signature", "per_phenomenon": {name: figures}, "mean": figures,
"by_group": {group: figures}, "examples": {name: [pair, ...]}}}}}}`` where ``figures`` holds
``n, hits, misses, ties, n_nan, accuracy, kendall_like`` and the benchmark's statistic by its
name (``detection_rate`` or ``aces_tau``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from blindspot.challenge_sets.formats import ChallengeFormat, ChallengeSet, get_format, read_challenge_set
from blindspot.protocols.interface import ProtocolResult
from blindspot.protocols.preference import Mode, kendall_like, tally
from blindspot.report.challenge_report import render_challenge_report
from blindspot.report.files import ReportFiles
from blindspot.runner.entries import error_text, signature
from blindspot.runner.entries import tool as _tool
from blindspot.runner.metric_spec import resolve_metrics
from blindspot.runner.scorers import scorer_for

SCHEMA_VERSION = 1
#: The columns of :meth:`ChallengeSet.as_dataset` each mode compares.
CHALLENGE_MODES = {
    "ref-based": Mode("ref-based", anchor="reference", good="good", bad="bad",
                      description="m(reference, good) > m(reference, bad)"),
    "ref-free": Mode("ref-free", anchor="source", good="good", bad="bad",
                     description="m(source, good) > m(source, bad)"),
}


def our_tau(counts: dict[str, Any], ties: str) -> float | None:
    """The preference protocol's Kendall-like tau under the ``ties`` policy (NaN pairs are
    left out either way)."""
    if ties == "excluded":
        return kendall_like(counts["hits"], counts["misses"])
    decided = counts["hits"] + counts["misses"] + counts["ties"]
    return (counts["hits"] - counts["misses"] - counts["ties"]) / decided if decided else None


def figures(good: Sequence[float], bad: Sequence[float], form: ChallengeFormat,
            ties: str) -> dict[str, Any]:
    """Counts, our accuracy and tau, and the benchmark's statistic of one group of pairs."""
    counts = tally(good, bad)
    return {**counts, "kendall_like": our_tau(counts, ties),
            form.statistic: form.benchmark(counts)}


def _mean(values: list[float | None]) -> float | None:
    kept = [v for v in values if v is not None]
    return sum(kept) / len(kept) if kept else None


def mean_figures(entries: list[dict[str, Any]], statistic: str) -> dict[str, Any]:
    """The unweighted mean over phenomena of each statistic, and the phenomena averaged."""
    return {"phenomena": len(entries),
            **{key: _mean([e[key] for e in entries])
               for key in ("accuracy", "kendall_like", statistic)}}


def _examples(challenge: ChallengeSet, good: list[float], bad: list[float],
              k: int) -> dict[str, list[dict[str, Any]]]:
    """Per phenomenon, the ``k`` failed pairs the bad translation won by most."""
    failed: dict[str, list[int]] = {}
    for index, item in enumerate(challenge.items):
        if not (math.isnan(good[index]) or math.isnan(bad[index])) and good[index] <= bad[index]:
            failed.setdefault(item.phenomenon, []).append(index)
    return {name: [{"id": challenge.items[i].id, "good": challenge.items[i].good,
                    "bad": challenge.items[i].bad, "good_score": good[i], "bad_score": bad[i]}
                   for i in sorted(rows, key=lambda i: (good[i] - bad[i], i))[:k]]
            for name, rows in failed.items() if k}


def metric_figures(challenge: ChallengeSet, good: list[float], bad: list[float],
                   form: ChallengeFormat, ties: str) -> dict[str, Any]:
    """Per phenomenon (in the file's order), their mean and, for DEMETR, per severity."""
    rows: dict[str, list[int]] = {}
    for index, item in enumerate(challenge.items):
        rows.setdefault(item.phenomenon, []).append(index)
    per = {name: figures([good[i] for i in idx], [bad[i] for i in idx], form, ties)
           for name, idx in rows.items()}
    groups: dict[str, list[dict[str, Any]]] = {}
    if form.group is not None:
        for name, idx in rows.items():
            groups.setdefault(challenge.items[idx[0]].group, []).append(per[name])
    return {"per_phenomenon": per, "mean": mean_figures(list(per.values()), form.statistic),
            "by_group": {g: mean_figures(e, form.statistic) for g, e in groups.items()}}


#: ``(scorer, spec, mode, dataset, batch_size, progress) -> (good scores, bad scores)``, higher
#: = better: the preference protocol's :func:`~blindspot.protocols.preference_run.score_pairs`,
#: passed in by the protocol (which imports this module).
PairScorer = Callable[[Any, Any, Mode, Any, int | None, bool], tuple[list[float], list[float]]]


def run_set(challenge: ChallengeSet, specs: list[Any], settings: dict[str, Any],
            form: ChallengeFormat, score_pairs: PairScorer, progress: bool) -> dict[str, Any]:
    """One set's entry: every metric's figures; a metric that fails gets an ``error``."""
    mode = CHALLENGE_MODES[settings["mode"].name]
    dataset = challenge.as_dataset()
    idf = list(dict.fromkeys(dataset[mode.anchor]))
    phenomena: dict[str, dict[str, Any]] = {}
    for item in challenge.items:
        counted = phenomena.setdefault(item.phenomenon, {"n": 0, "group": item.group})
        counted["n"] += 1
    metrics = {}
    for spec in specs:
        entry: dict[str, Any] = {"metric": spec.metric, "output": spec.output,
                                 "options": spec.as_json()["options"],
                                 "higher_is_better": spec.higher_is_better, "error": None,
                                 "signature": None}
        try:
            scorer = scorer_for(spec, idf)
            entry["signature"] = signature(spec, scorer)
            good, bad = score_pairs(scorer, spec, mode, dataset, settings["batch_size"],
                                    progress)
        except Exception as error:  # one metric failing is reported, the others still run
            metrics[spec.name] = {**entry, "error": error_text(error), "per_phenomenon": {},
                                  "mean": None, "by_group": {}, "examples": {}}
            continue
        metrics[spec.name] = {**entry, **metric_figures(challenge, good, bad, form,
                                                        settings["ties"]),
                              "examples": _examples(challenge, good, bad, settings["examples"])}
    return {"rows": len(challenge.items), "skipped": challenge.skipped,
            "phenomena": phenomena, "metrics": metrics}


def check_settings(settings: dict[str, Any]) -> None:
    """Refuse the MENLI-only options with a challenge-set format."""
    menli_only = [name for name in ("error_types", "combine_with") if settings.get(name)]
    if settings.get("fixed"):
        menli_only.append("fixed")
    if menli_only:
        raise ValueError(f"--protocol-option {', '.join(menli_only)} applies to MENLI-style "
                         f"sets only, not to --format {settings['format']}; leave it out")


@dataclass(kw_only=True)
class ChallengeResult(ProtocolResult):
    """results.json of a preference run on challenge sets (layout:
    :mod:`blindspot.report.challenge_report`): the set's format, the run's config and, per set,
    each metric's figures per phenomenon."""

    schema_version: int = SCHEMA_VERSION
    protocol: str = "preference"
    format: str
    config: dict[str, Any]
    datasets: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The results dict; ``format`` follows ``protocol`` (results.json's key order)."""
        saved = super().to_dict()
        return {k: saved[k] for k in ("schema_version", "protocol", "format")} | saved

    def render(self) -> ReportFiles:
        """results.json and report.md (:func:`render_challenge_report`)."""
        return render_challenge_report(self.to_dict())


def run_challenge(data: Any, metrics: Any, settings: dict[str, Any], score_pairs: PairScorer,
                  *, metric_options: Any = None, progress: bool = True) -> ChallengeResult:
    """Judge ``metrics`` on challenge-set files in ``settings["format"]`` (nothing written; the
    report is :meth:`ChallengeResult.render`). ``settings`` are the preference protocol's parsed
    options and ``score_pairs`` its pair scoring."""
    check_settings(settings)
    form = get_format(settings["format"])
    mode = CHALLENGE_MODES[settings["mode"].name]
    specs = resolve_metrics(metrics, metric_options)
    sources = list(data) if isinstance(data, (list, tuple)) else [data]
    sets = [read_challenge_set(form.name, source) for source in sources]  # all before scoring
    result = ChallengeResult(
        format=form.name, tool=_tool(),
        config={"format": form.name, "benchmark": form.paper, "statistic": form.statistic,
                "statistic_help": form.statistic_help, "group": form.group,
                "mode": mode.name, "preference": mode.description, "ties": settings["ties"],
                "examples": settings["examples"], "metrics": [s.as_json() for s in specs]})
    for index, challenge in enumerate(sets):
        key = challenge.name if challenge.name not in result.datasets else \
            f"{challenge.name}#{index + 1}"
        result.datasets[key] = run_set(challenge, specs, settings, form, score_pairs, progress)
    return result


__all__ = ["CHALLENGE_MODES", "ChallengeResult", "figures", "mean_figures", "metric_figures",
           "our_tau", "run_challenge"]
