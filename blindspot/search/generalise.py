"""Do the patterns a search found generalise? The blind-spots paper (Appendix J) turned the
patterns found against BERTScore into noise rules, applied them to the whole WMT set, and found
that they did not: the edits fool the metric only on some hypotheses.

Here the top-ranked patterns become a rule-based perturbation (:mod:`blindspot.search.rules`),
registered in the catalogue, and the rank protocol (:class:`blindspot.protocols.rank.RankProtocol`)
runs it on the whole dataset with the targeted metric and the panel, against the data's references as
every rank run does. The patterns *generalise* when the targeted metric fails the rank protocol
on them (it does not strictly lower its score as the rules add noise); the panel's verdicts and
relative changes on the same texts say whether the rules did make the texts worse.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from blindspot.protocols.interface import ProtocolRequest
from blindspot.protocols.rank import RankProtocol, RankResult
from blindspot.search.rules import register_rules, rules_from_results


def _top_level(result: Mapping[str, Any]) -> dict[str, Any] | None:
    """The per-sample view of the test's noisiest level (None when there is none)."""
    per_sample = result.get("per_sample") or []
    if isinstance(per_sample, Mapping):
        per_sample = [{"level": level, **view} for level, view in per_sample.items()]
    return max(per_sample, key=lambda v: float(v["level"]), default=None)


def _metric_view(result: Mapping[str, Any]) -> dict[str, Any]:
    top = _top_level(result)
    points = result.get("points") or []
    return {"status": result.get("status"), "relative_change": result.get("relative_change"),
            "noise_ratio": max((p.get("noise_ratio") or 0.0 for p in points), default=None),
            "fraction_noised_ge_gold": top.get("fraction_noised_ge_gold") if top else None,
            "error": result.get("error")}


def generalisation(results: Mapping[str, Any], data: Any, metrics: Sequence[Any], *,
                   task: str, columns: Mapping[str, str | None] | None = None,
                   split: str = "test", seeds: Sequence[int] = (1, 2, 3), top: int = 3,
                   progress: bool = True, state_dir: Path | None = None
                   ) -> tuple[dict[str, Any], RankResult]:
    """Register the rules of the ``top`` patterns and judge them with the rank protocol on all of
    ``data``; ``metrics`` are the target's and the panel's specs, target first. Returns the
    summary that results.json keeps and the rank run's whole result (its report folder)."""

    rules = rules_from_results(results, top)
    name = register_rules(rules, results["config"]["noise_ratio"])
    judged = RankProtocol().run(ProtocolRequest(
        data, list(metrics), task=task, tests=name, seeds=list(seeds), columns=columns,
        split=split, progress=progress, options={"state_dir": state_dir}))
    run = judged.to_dict()
    dataset = next(iter(run["datasets"].values()))
    views = {metric: _metric_view(entry["tests"].get(name, {"status": "error",
                                                            "error": entry.get("error")}))
             for metric, entry in dataset["metrics"].items()}
    target = metrics[0].name
    status = views[target]["status"]
    return ({"test": name, "rules": rules.as_json(), "rows": dataset["rows"],
             "seeds": [int(s) for s in seeds], "metrics": views,
             "generalises": None if status not in ("pass", "fail") else status == "fail"},
            judged)
