"""Which metric a run judges, which of its outputs, with which options: ``rouge.rougeL``,
``bertscore.f1@minilm``, ``gpt_ppl@smollm2``, or a user's own metric: a loaded ``evaluate``
module, a plain function ``f(predictions, references=None, sources=None) -> list[float]``, a
function in a file (``my_metric.py:score``), a local module folder (``./my_module/``) or a Hub
module id (``org/name``).

A spec string is ``metric[.output][@model]``; further options come as a mapping. The facts of a
registered metric (its default output, which outputs are lower-is-better, the option that
selects outputs) are its scorer's declared attributes
(:func:`blindspot.scoring.facts.scorer_facts`). Every metric in this project reports
higher-is-better scores except TER (an edit rate), which the runner negates before judging, as
the protocol asks (PROTOCOLS.md: "higher = better for every metric"). A user's metric is
higher-is-better unless it declares ``higher_is_better = False`` (an attribute of the function
or of the module).
"""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from blindspot.models import OFFLINE_MODELS
from blindspot.runner.scorers import make_scorer
from blindspot.scoring.custom import check_function, function_name, is_module
from blindspot.scoring.facts import registered_metrics, scorer_facts
from blindspot.suggest import did_you_mean


def lower_is_better(metric: str, output: str | None = None) -> bool:
    """Whether a lower score of the registered ``metric`` (its ``output``, or any output when
    None) is better, as its scorer declares; False for a name that is not registered."""
    return metric in registered_metrics() and not scorer_facts(metric).higher_is_better(output)


_SPEC = re.compile(r"^(?P<metric>[A-Za-z0-9_\-]+)(?:\.(?P<output>[A-Za-z0-9_\-]+))?"
                   r"(?:@(?P<model>[^\s@]+))?$")


@dataclass(frozen=True)
class MetricSpec:
    """One metric of a run: a registered scorer (``metric``) or a user's ``module`` (a loaded
    evaluate module or a scoring function) whose direction ``declared_higher`` says."""

    metric: str
    output: str
    options: Mapping[str, Any] = field(default_factory=dict)
    module: Any = field(default=None, compare=False, repr=False)
    declared_higher: bool | None = None

    @property
    def name(self) -> str:
        """The display name: ``metric.output`` plus ``@model`` when a model is chosen."""
        option = _model_option(self.metric) if self.module is None else None
        model = self.options.get(option) if option is not None else None
        base = f"{self.metric}.{self.output}" if self.output else self.metric
        return base + (f"@{model}" if model else "")

    @property
    def higher_is_better(self) -> bool:
        if self.declared_higher is not None:
            return self.declared_higher
        return not lower_is_better(self.metric, self.output)

    def as_json(self) -> dict[str, Any]:
        """The spec as it goes into results.json and into every state key."""
        return {"name": self.name, "metric": self.metric, "output": self.output,
                "options": json.loads(json.dumps(dict(self.options), sort_keys=True, default=str)),
                "higher_is_better": self.higher_is_better,
                "module": None if self.module is None else _module_identity(self.module)}


def _module_identity(module: Any) -> str:
    """A user's module name and configuration, or a function's qualified name (the hash of its
    code is added by the scorer)."""
    if not is_module(module):
        return f"function:{getattr(module, '__qualname__', type(module).__name__)}"
    return f"{getattr(module, 'name', type(module).__name__)}:{getattr(module, 'config_name', '')}"


def _model_option(metric: str) -> str | None:
    """The scorer's option that names its model (``model_type`` for BERTScore...)."""
    return scorer_facts(metric).model_option if metric in registered_metrics() else None


#: What else the CLI and the Python API take besides registered names (never the Space).
_YOUR_OWN = ("or your own: a function my_metric.py:score, a module folder ./my_module/, a Hub "
             "module org/name")


def _check_known(metric: str, others: str) -> None:
    if metric not in registered_metrics():
        raise ValueError(f"unknown metric {metric!r}; valid metrics: "
                         f"{', '.join(sorted(registered_metrics()))} ({others})"
                         f"{did_you_mean(metric, registered_metrics())}")


def _scorer_outputs(metric: str, options: Mapping[str, Any]) -> tuple[str, ...]:
    return tuple(make_scorer(metric, options).outputs)


def _default_output(metric: str, outputs: tuple[str, ...]) -> str:
    """The scorer's declared default output, when its options compute it."""
    preferred = scorer_facts(metric).judged_output()
    return preferred if preferred in outputs else outputs[0]


def parse_metric_spec(text: str, options: Mapping[str, Any] | None = None) -> MetricSpec:
    """A spec string as a :class:`MetricSpec`; unknown metrics and outputs get a clear error."""
    match = _SPEC.match(text.strip())
    if not match:
        raise ValueError(f"bad metric spec {text!r}; write metric[.output][@model], e.g. "
                         "rouge.rougeL or bertscore.f1@minilm")
    chosen = dict(options or {})
    metric = match["metric"]
    _check_known(metric, _YOUR_OWN)
    if match["model"]:
        option = _model_option(metric)
        if option is None:
            raise ValueError(f"metric {metric!r} uses no model; drop '@{match['model']}' from "
                             f"{text!r}")
        chosen[option] = match["model"]
    outputs = _scorer_outputs(metric, chosen)
    output = match["output"] or _default_output(metric, outputs)
    selector = scorer_facts(metric).output_selector
    if output not in outputs and selector and selector not in chosen:
        try:  # an output the selector can ask for (rouge.rouge4, rouge.rougeW, rouge.rougeSU4)
            outputs = _scorer_outputs(metric, {**chosen, selector: [output]})
        except ValueError:
            pass
    if output not in outputs:
        raise ValueError(f"metric {metric!r} has no output {output!r}; its outputs are "
                         f"{', '.join(outputs)}{did_you_mean(output, outputs)}")
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
    _check_known(match["metric"], "paths and scripts are not accepted here")
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


def _declared_direction(custom: Any, name: str) -> bool | None:
    """The ``higher_is_better`` a user's metric declares (None: not declared, higher is better)."""
    declared = getattr(custom, "higher_is_better", None)
    if declared is not None and not isinstance(declared, bool):
        raise ValueError(f"metric {name!r} declares higher_is_better={declared!r}; set it to "
                         "True or False")
    return declared


def spec_from_module(module: Any, output: str | None = None,
                     options: Mapping[str, Any] | None = None) -> MetricSpec:
    """A user's metric as a spec: a scoring function, or a loaded evaluate module (ours go
    through their scorer, others are wrapped)."""
    if not is_module(module):
        name = function_name(module)
        check_function(module, repr(name))
        return MetricSpec(name, output or "", dict(options or {}), module=module,
                          declared_higher=_declared_direction(module, name))
    scorer_name = getattr(module, "scorer_name", None)
    if scorer_name:  # one of this project's modules: use its scorer directly (score cache)
        outputs = _scorer_outputs(scorer_name, options or {})
        chosen = output or _default_output(scorer_name, outputs)
        if chosen not in outputs:
            raise ValueError(f"metric {scorer_name!r} has no output {chosen!r}; its outputs "
                             f"are {', '.join(outputs)}")
        return MetricSpec(scorer_name, chosen, dict(options or {}))
    name = str(getattr(module, "name", None) or type(module).__name__)
    return MetricSpec(name, output or "", dict(options or {}), module=module,
                      declared_higher=_declared_direction(module, name))


#: ``path/to/file.py:function``: a scoring function in a Python file.
_FUNCTION_IN_FILE = re.compile(r"^(?P<file>.+\.py):(?P<function>[A-Za-z_]\w*)$")


def _looks_like_path(text: str) -> bool:
    return (text.startswith((".", "/", "~")) or text.endswith(("/", ".py"))
            or Path(text).expanduser().exists())


def _nearby(path: Path) -> str:
    """"Did you mean" for a missing file or folder: the closest name beside it."""
    beside = [str(path.parent / p.name) for p in path.parent.iterdir()] if path.parent.is_dir() else []
    return did_you_mean(str(path), beside)


def load_function(path: Path, function: str, text: str) -> Any:
    """The function ``function`` defined in the Python file ``path`` (``text`` as written)."""
    if not path.is_file():
        raise ValueError(f"metric {text!r}: no file {str(path)!r}; give path/to/file.py:function "
                         "with a file that exists (relative to the current folder)"
                         f"{_nearby(path)}")
    name = f"blindspot_user_metric_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ValueError(f"metric {text!r}: {str(path)!r} is not a Python file; give "
                         "path/to/file.py:function")
    module = importlib.util.module_from_spec(spec)
    # importable while it runs (dataclasses look their module up), then not: cloudpickle then
    # ships its functions by value to engine workers, which cannot import the user's file
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as error:  # noqa: BLE001  (the user's code: any error is reported)
        raise ValueError(f"metric {text!r}: importing {str(path)!r} failed with "
                         f"{type(error).__name__}: {error}; fix the file and run again") from None
    finally:
        del sys.modules[name]
    if not hasattr(module, function):
        defined = sorted(n for n, v in vars(module).items()
                         if callable(v) and not n.startswith("_")
                         and getattr(v, "__module__", None) == name)
        raise ValueError(f"metric {text!r}: {str(path)!r} defines no {function!r}; its "
                         f"functions are {', '.join(defined) or 'none'}{did_you_mean(function, defined)}")
    check_function(getattr(module, function), repr(text))
    return getattr(module, function)


def _load_module(text: str, where: str, hint: str = "") -> Any:
    """An evaluate module from a local folder/script or a Hub module id."""
    import evaluate  # lazy: importing evaluate costs seconds, most runs name registered metrics

    try:
        return evaluate.load(text)
    except Exception as error:  # noqa: BLE001  (evaluate raises many kinds)
        raise ValueError(f"metric {text!r}: could not load it as an evaluate module {where} "
                         f"({type(error).__name__}: {str(error).strip()[:300]}){hint}") from None


def custom_spec(text: str) -> MetricSpec | None:
    """The spec of a user's metric named by ``text`` (a function in a file, a local module folder
    or script, a Hub module id), or None when ``text`` names a registered metric."""
    function = _FUNCTION_IN_FILE.match(text)
    if function:
        path = Path(function["file"]).expanduser()
        return spec_from_module(load_function(path, function["function"], text))
    match = _SPEC.match(text)
    if match and match["metric"] in registered_metrics():
        return None  # a registered name wins over a same-named folder in the current one
    if _looks_like_path(text):
        path = Path(text).expanduser()
        if not path.exists():
            raise ValueError(f"metric {text!r}: no file or folder {str(path)!r}; give a module "
                             "folder (./my_module/), a module script (my_module.py) or a "
                             f"function (my_metric.py:score){_nearby(path)}")
        hint = (f"; to judge a function in it, write {text}:FUNCTION" if path.suffix == ".py"
                else "")
        return spec_from_module(_load_module(str(path), "from that path", hint))
    if _HUB_ID.match(text) and "/" in text:
        return spec_from_module(_load_module(text, "from the Hub (offline? it must be cached)"))
    return None


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
            custom = custom_spec(item.strip()) if item.strip() else None
            if custom is not None:
                specs.append(custom)
            elif item.strip():
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
