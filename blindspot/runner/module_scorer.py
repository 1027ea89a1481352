"""Any loaded ``evaluate`` module as a :class:`~blindspot.scoring.base.Scorer`, so a user's own
metric is judged exactly like ours (deduplicated, batched, cached).

Modules that return one score per row (``use_aggregator=False`` or a list-valued output) are
scored a batch at a time; modules that only return a corpus mean are scored one row per call.
The cache identity includes the module's name, configuration and the hash of its script, so an
edited module never reuses old scores.
"""

from __future__ import annotations

import hashlib
import inspect
from collections.abc import Sequence
from typing import Any

from blindspot.scoring.base import ScoreInput, Scorer


def _script_hash(module: Any) -> str:
    try:
        source = inspect.getsource(type(module))
    except (OSError, TypeError):
        return ""
    return hashlib.sha256(source.encode("utf-8")).hexdigest()[:16]


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

    def __init__(self, module: Any, output: str = "", **options: Any) -> None:
        super().__init__(module=getattr(module, "name", type(module).__name__),
                         config_name=getattr(module, "config_name", None), output=output,
                         script=_script_hash(module), **options)
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
