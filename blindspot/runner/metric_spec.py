"""Which metric a run judges, which of its outputs, with which options: ``rouge.rougeL``,
``bertscore.f1@minilm``, ``gpt_ppl@smollm2``, or a loaded ``evaluate`` module.

A spec string is ``metric[.output][@model]``; further options come as a mapping. Every metric in
this project reports higher-is-better scores except TER (an edit rate), which the runner negates
before judging, as the protocol asks (PROTOCOLS.md: "higher = better for every metric").
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from blindspot.models import OFFLINE_MODELS
from blindspot.suggest import did_you_mean

#: The output judged when a spec names none: the figure the papers report for that metric.
DEFAULT_OUTPUTS: dict[str, str] = {
    "rouge": "rougeL", "bertscore": "f1", "bartscore": "f", "unieval": "overall",
    "mauve": "mauve",
}
#: Scorers that can compute only the judged output: metric -> the option that selects outputs.
OUTPUT_SELECTORS: dict[str, str] = {"rouge": "rouge_types"}
#: (metric, output) pairs where a lower score is better; they are negated before judging.
LOWER_IS_BETTER: frozenset[tuple[str, str]] = frozenset({("ter", "ter")})



def lower_is_better(metric: str, output: str | None = None) -> bool:
    """Whether a lower score of ``metric`` (its ``output``, or any output when None) is better."""
    return any(m == metric and (output is None or o == output) for m, o in LOWER_IS_BETTER)


_SPEC = re.compile(r"^(?P<metric>[A-Za-z0-9_\-]+)(?:\.(?P<output>[A-Za-z0-9_\-]+))?"
                   r"(?:@(?P<model>[^\s@]+))?$")


@dataclass(frozen=True)
class MetricSpec:
    """One metric of a run: a registered scorer (``metric``) or a loaded evaluate ``module``."""

    metric: str
    output: str
    options: Mapping[str, Any] = field(default_factory=dict)
    module: Any = field(default=None, compare=False, repr=False)

    @property
    def name(self) -> str:
        """The display name: ``metric.output`` plus ``@model`` when a model is chosen."""
        model = self.options.get(_model_option(self.metric)) if self.module is None else None
        base = f"{self.metric}.{self.output}" if self.output else self.metric
        return base + (f"@{model}" if model else "")

    @property
    def higher_is_better(self) -> bool:
        return not lower_is_better(self.metric, self.output)

    def as_json(self) -> dict[str, Any]:
        """The spec as it goes into results.json and into every state key."""
        return {"name": self.name, "metric": self.metric, "output": self.output,
                "options": json.loads(json.dumps(dict(self.options), sort_keys=True, default=str)),
                "higher_is_better": self.higher_is_better,
                "module": None if self.module is None else _module_identity(self.module)}


def _module_identity(module: Any) -> str:
    """A foreign module's name and configuration (its script's hash is added by the scorer)."""
    return f"{getattr(module, 'name', type(module).__name__)}:{getattr(module, 'config_name', '')}"


def _model_option(metric: str) -> str | None:
    """The scorer's option that names its model (``model_type`` for BERTScore...)."""
    from blindspot.scoring.base import SCORERS

    cls = SCORERS.get(metric)
    return cls.model_option if cls is not None else None


def _check_known(metric: str) -> None:
    import blindspot.scorers  # noqa: F401  (registers every scorer)
    from blindspot.scoring.base import SCORERS

    if metric not in SCORERS:
        raise ValueError(f"unknown metric {metric!r}; valid metrics: {', '.join(sorted(SCORERS))}"
                         f"{did_you_mean(metric, SCORERS)}")


def _scorer_outputs(metric: str, options: Mapping[str, Any]) -> tuple[str, ...]:
    from blindspot.runner.scorers import make_scorer

    return tuple(make_scorer(metric, options).outputs)


def _default_output(metric: str, outputs: tuple[str, ...]) -> str:
    preferred = DEFAULT_OUTPUTS.get(metric)
    return preferred if preferred in outputs else outputs[0]


def parse_metric_spec(text: str, options: Mapping[str, Any] | None = None) -> MetricSpec:
    """A spec string as a :class:`MetricSpec`; unknown metrics and outputs get a clear error."""
    match = _SPEC.match(text.strip())
    if not match:
        raise ValueError(f"bad metric spec {text!r}; write metric[.output][@model], e.g. "
                         "rouge.rougeL or bertscore.f1@minilm")
    chosen = dict(options or {})
    metric = match["metric"]
    _check_known(metric)
    if match["model"]:
        option = _model_option(metric)
        if option is None:
            raise ValueError(f"metric {metric!r} uses no model; drop '@{match['model']}' from "
                             f"{text!r}")
        chosen[option] = match["model"]
    outputs = _scorer_outputs(metric, chosen)
    output = match["output"] or _default_output(metric, outputs)
    if output not in outputs:
        raise ValueError(f"metric {metric!r} has no output {output!r}; its outputs are "
                         f"{', '.join(outputs)}{did_you_mean(output, outputs)}")
    selector = OUTPUT_SELECTORS.get(metric)
    if selector and selector not in chosen:  # compute only what is judged (ROUGE: 6x faster)
        chosen[selector] = [output]
    return MetricSpec(metric, output, chosen)


#: A Hub model id (``name`` or ``org/name``), never a path: no leading dot or slash, no ``..``.
_HUB_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]*(?:/[A-Za-z0-9][A-Za-z0-9_.\-]*)?$")


def check_visitor_metric(text: str, allow_hub_models: bool = False) -> str:
    """``text`` when a visitor of the public Space may run it, else a ValueError saying why.

    The allow-list: a registered metric name (with an output), and as its ``@model`` only an
    offline model's short name (:data:`blindspot.models.OFFLINE_MODELS`) or, when the operator
    started the Space with ``--allow-hub-models``, a Hub id. A local path never passes.
    """
    match = _SPEC.match(str(text).strip())
    if not match:
        raise ValueError(f"bad metric spec {text!r}; write metric[.output][@model] with a "
                         "registered metric name, e.g. rouge.rougeL or bertscore.f1@minilm "
                         "(paths and scripts are not accepted here)")
    _check_known(match["metric"])
    model = match["model"]
    if model is None or model.lower() in OFFLINE_MODELS:
        return str(text).strip()
    offline = ", ".join(sorted({m.name for m in OFFLINE_MODELS.values()}))
    hub_id = _HUB_ID.match(model) and ".." not in model and not Path(model).exists()
    if allow_hub_models and hub_id:
        return str(text).strip()
    other = ("or a Hub id such as org/name (no local path)" if allow_hub_models else
             "(Hub models and local paths are off on this Space: its operator can allow Hub "
             "ids with `blindspot space --allow-hub-models`)")
    raise ValueError(f"model {model!r} of metric spec {text!r} is not allowed here; name an "
                     f"offline model: {offline} {other}")


def spec_from_module(module: Any, output: str | None = None,
                     options: Mapping[str, Any] | None = None) -> MetricSpec:
    """A loaded evaluate module as a spec: ours go through their scorer, others are wrapped."""
    scorer_name = getattr(module, "scorer_name", None)
    if scorer_name:  # one of this project's modules: use its scorer directly (score cache)
        outputs = _scorer_outputs(scorer_name, options or {})
        chosen = output or _default_output(scorer_name, outputs)
        if chosen not in outputs:
            raise ValueError(f"metric {scorer_name!r} has no output {chosen!r}; its outputs "
                             f"are {', '.join(outputs)}")
        return MetricSpec(scorer_name, chosen, dict(options or {}))
    name = getattr(module, "name", None) or type(module).__name__
    return MetricSpec(str(name), output or "", dict(options or {}), module=module)


def resolve_metrics(metrics: Any, options: Mapping[str, Mapping[str, Any]] | None = None
                    ) -> list[MetricSpec]:
    """Specs from a comma-separated string, a spec, a module, or a list of any of those.

    ``options`` maps a metric name to extra scorer options (``{"bertscore": {"idf": True}}``).
    """
    items = metrics.split(",") if isinstance(metrics, str) else (
        list(metrics) if isinstance(metrics, (list, tuple)) else [metrics])
    specs: list[MetricSpec] = []
    for item in items:
        if isinstance(item, MetricSpec):
            specs.append(item)
        elif isinstance(item, str):
            if item.strip():
                metric = item.strip().split("@")[0].split(".")[0]
                specs.append(parse_metric_spec(item, (options or {}).get(metric)))
        else:
            specs.append(spec_from_module(item))
    if not specs:
        raise ValueError("no metric given; name at least one, e.g. metrics='rouge,bertscore@minilm'")
    names = [s.name for s in specs]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise ValueError(f"metric(s) given twice: {', '.join(dupes)}")
    return specs
