"""A user's own metric as a :class:`~blindspot.scoring.scorer.Scorer`, so it is judged exactly like
ours (deduplicated, batched, cached): a loaded ``evaluate`` module (:class:`ModuleScorer`) or a
plain function ``f(predictions, references=None, sources=None) -> list[float]``
(:class:`FunctionScorer`); :func:`custom_scorer` picks the one that fits.

Modules that return one score per row (``use_aggregator=False`` or a list-valued output) are
scored a batch at a time; modules that only return a corpus mean are scored one row per call.
The cache identity includes the metric's name, configuration and the hash of its code (the
module's script file, the function's file or source, :func:`code_hash`), so an edited metric never
reuses old scores.
"""

from __future__ import annotations

import hashlib
import inspect
import marshal
import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from blindspot.scoring.scorer import ScoreInput, Scorer


def code_hash(code: Any) -> str:
    """The hash of what computes a custom metric's scores: the bytes of the file that defines
    ``code`` (a function, or an evaluate module's class: helpers and constants in that file
    count too), else its source text, else its bytecode; a function's defaults and closure
    values are added, so ``make_metric(0.5)`` and ``make_metric(0.7)`` never share scores."""
    target = code if inspect.isfunction(code) or inspect.isclass(code) else type(code)
    digest = hashlib.sha256()
    try:
        file = inspect.getsourcefile(target)
    except TypeError:
        file = None
    if file and Path(file).is_file():
        digest.update(Path(file).read_bytes())
    else:
        try:
            digest.update(inspect.getsource(target).encode("utf-8"))
        except (OSError, TypeError):
            body = getattr(target, "__code__", None)
            digest.update(marshal.dumps(body) if body is not None else repr(target).encode())
    if inspect.isfunction(target):
        cells = [c.cell_contents for c in target.__closure__ or ()]
        digest.update(repr((target.__qualname__, target.__defaults__, target.__kwdefaults__,
                            cells)).encode("utf-8"))
    return digest.hexdigest()[:16]


def _feature_names(module: Any) -> set[str]:
    """The input columns a module declares (its features, or a list of alternatives)."""
    features = getattr(module, "features", None)
    alternatives = features if isinstance(features, list) else [features]
    return {name for f in alternatives if f for name in f}


def _as_float(value: Any, key: str) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        raise ValueError(f"output {key!r} is not a number ({type(value).__name__}); choose a "
                         "numeric output with metric.output") from None


class ModuleScorer(Scorer):
    """Scores rows with ``module.compute``; ``output`` picks the key of its result to judge."""

    name = "evaluate_module"
    outputs: tuple[str, ...] = ()
    uses_references = "optional"
    uses_source = "optional"
    model_option = None
    default_batch_size = 64

    def device_kind(self) -> None:
        return None  # where a user's module computes is its own affair

    def __init__(self, module: Any, output: str = "", **options: Any) -> None:
        super().__init__(module=getattr(module, "name", type(module).__name__),
                         config_name=getattr(module, "config_name", None), output=output,
                         script=code_hash(module), **options)
        self.module = module
        self.output = output
        declared = _feature_names(module)
        # what the module takes, as its features say (a module without features gets everything)
        self.uses_references = "required" if "references" in declared or not declared else "none"
        self.uses_source = "optional" if "sources" in declared or not declared else "none"
        self.outputs = (output or "score",)
        self.options = options

    def _call(self, batch: Sequence[ScoreInput], **extra: Any) -> dict[str, Any]:
        kwargs: dict[str, Any] = {"predictions": [i.hypothesis for i in batch], **self.options,
                                  **extra}
        if self.uses_references != "none":
            kwargs["references"] = [list(i.references) if len(i.references) > 1 else
                                    i.references[0] for i in batch]
        if self.uses_source != "none" and any(i.source is not None for i in batch):
            kwargs["sources"] = [i.source or "" for i in batch]
        result = self.module.compute(**kwargs)
        if not isinstance(result, dict) or not result:
            raise ValueError(f"module {self.config['module']!r} returned {result!r}, not a dict "
                             "of scores")
        return result

    def _pick(self, result: dict[str, Any]) -> Any:
        key = self.output or next(iter(result))
        if key not in result:
            raise ValueError(f"module {self.config['module']!r} has no output {key!r}; its "
                             f"outputs are {', '.join(map(str, result))}")
        return result[key]

    def score_batch(self, batch: Sequence[ScoreInput]) -> list[dict[str, float]]:
        key = self.outputs[0]
        try:
            values = self._pick(self._call(batch, use_aggregator=False))
        except TypeError:  # the module takes no use_aggregator
            values = None
        if isinstance(values, (list, tuple)) and len(values) == len(batch):
            return [{key: _as_float(v, key)} for v in values]
        # a corpus mean only: one call per row is the only way to get per-row scores
        return [{key: _as_float(self._pick(self._call([item])), key)} for item in batch]


#: The inputs a scoring function may take by name, besides the predictions (its first parameter).
FUNCTION_INPUTS: tuple[str, ...] = ("references", "sources")


def is_module(custom: Any) -> bool:
    """Whether a user's metric is an evaluate module (it has ``compute``), not a function."""
    return hasattr(custom, "compute")


def function_name(function: Callable[..., Any]) -> str:
    """The display name of a scoring function: its ``__name__`` (``lambda`` for a lambda)."""
    name = getattr(function, "__name__", type(function).__name__)
    return "".join(c for c in name if c.isalnum() or c in "_-") or "function"


def _usage(parameter: inspect.Parameter | None, any_keyword: bool) -> str:
    """How a function uses an input: "required", "optional" (a default, or **kwargs), "none"."""
    if parameter is None:
        return "optional" if any_keyword else "none"
    return "required" if parameter.default is inspect.Parameter.empty else "optional"


def check_function(function: Any, where: str) -> dict[str, str]:
    """How ``function`` takes each input (:data:`FUNCTION_INPUTS`), or a ValueError saying what to
    change: it must be callable, take the predictions (first, or by the name ``predictions``) and
    require nothing else."""
    if not callable(function):
        raise ValueError(f"metric {where} is a {type(function).__name__}, not a metric; give a "
                         "registered name, a loaded evaluate module or a function "
                         "f(predictions, references=None, sources=None) -> list[float]")
    try:
        parameters = list(inspect.signature(function).parameters.values())
    except (TypeError, ValueError):
        raise ValueError(f"metric {where}: its signature cannot be read; wrap it in a def "
                         "f(predictions, references=None, sources=None)") from None
    positional = [p for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    any_keyword = any(p.kind is p.VAR_KEYWORD for p in parameters)
    by_name = any(p.name == "predictions" for p in parameters)
    if not by_name and not positional and not any(p.kind is p.VAR_POSITIONAL for p in parameters):
        raise ValueError(f"metric {where} takes no argument; it must take the predictions "
                         "first: f(predictions, references=None, sources=None)")
    first = "predictions" if by_name else (positional[0].name if positional else None)
    named = {p.name: p for p in parameters if p.kind is not p.VAR_KEYWORD and p.name != first}
    extra = [n for n, p in named.items() if n not in FUNCTION_INPUTS
             and p.kind is not p.VAR_POSITIONAL and p.default is inspect.Parameter.empty]
    if extra:
        raise ValueError(f"metric {where} requires argument {extra[0]!r}, which blindspot does "
                         f"not pass; name its arguments predictions, references=None, "
                         f"sources=None (or give {extra[0]!r} a default)")
    usage = {name: _usage(named.get(name), any_keyword) for name in FUNCTION_INPUTS}
    return {**usage, "predictions": "by name" if by_name else "first"}


def _row_text(item: ScoreInput) -> str:
    text = item.hypothesis if len(item.hypothesis) <= 60 else item.hypothesis[:57] + "..."
    return repr(text)


class FunctionScorer(Scorer):
    """Scores a batch of rows with one call of ``function(predictions, references=...,
    sources=...)``: only the inputs its signature names are passed (``references[i]`` is always
    the list of row i's reference strings, ``sources[i]`` its source string), and its answer must
    be one finite number per prediction (a clear error names the metric and the row otherwise)."""

    name = "function"
    outputs: tuple[str, ...] = ("score",)
    model_option = None
    default_batch_size = 64

    def device_kind(self) -> None:
        return None  # where a user's function computes is its own affair

    def __init__(self, function: Callable[..., Any], output: str = "") -> None:
        self.name = function_name(function)
        usage = check_function(function, repr(self.name))
        super().__init__(function=getattr(function, "__qualname__", self.name),
                         code=code_hash(function))
        self.function = function
        self.uses_references = usage["references"]
        self.uses_source = usage["sources"]
        self.predictions_by_name = usage["predictions"] == "by name"
        self.outputs = (output or "score",)

    def _arguments(self, batch: Sequence[ScoreInput]) -> dict[str, Any]:
        """The inputs the function takes, when the rows have them (one per prediction)."""
        given: dict[str, Any] = {}
        if self.uses_references != "none" and any(i.references for i in batch):
            given["references"] = [list(i.references) for i in batch]
        if self.uses_source != "none" and any(i.source is not None for i in batch):
            given["sources"] = [i.source for i in batch]
        return given

    def score_batch(self, batch: Sequence[ScoreInput]) -> list[dict[str, float]]:
        try:
            predictions = [i.hypothesis for i in batch]
            values = (self.function(predictions=predictions, **self._arguments(batch))
                      if self.predictions_by_name else
                      self.function(predictions, **self._arguments(batch)))
        except Exception as error:  # noqa: BLE001  (the user's code: any error is reported)
            raise ValueError(f"metric {self.name!r} raised {type(error).__name__}: "
                             f"{str(error).strip()[:300]}") from error
        if isinstance(values, (str, bytes, dict)) or not hasattr(values, "__len__"):
            raise ValueError(f"metric {self.name!r} returned a {type(values).__name__}; it must "
                             f"return a list of {len(batch)} numbers, one per prediction")
        if len(values) != len(batch):
            raise ValueError(f"metric {self.name!r} returned {len(values)} scores for "
                             f"{len(batch)} predictions; it must return one per prediction")
        key = self.outputs[0]
        return [{key: self._checked(value, item)} for value, item in zip(values, batch, strict=True)]

    def _checked(self, value: Any, item: ScoreInput) -> float:
        try:
            number = float(value)
        except (TypeError, ValueError):
            number = None
        if isinstance(value, bool) or number is None or not math.isfinite(number):
            raise ValueError(f"metric {self.name!r} returned {value!r} for the row whose "
                             f"prediction is {_row_text(item)}; it must return a finite number "
                             "for every prediction")
        return number


def custom_scorer(custom: Any, output: str = "", **options: Any) -> Scorer:
    """The scorer of a user's metric: a loaded evaluate module (it has ``compute``) or a plain
    scoring function."""
    if is_module(custom):
        return ModuleScorer(custom, output, **options)
    if options:
        raise ValueError(f"metric {function_name(custom)!r} is a function: it takes no options "
                         f"(got {', '.join(options)}); give it defaults in its own code")
    return FunctionScorer(custom, output)
