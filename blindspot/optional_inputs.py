"""An ``evaluate`` module base for metrics whose references or sources may be left out.

``evaluate`` checks every declared input against the module's features and cannot encode a
missing column (``references=None`` fails inside ``add_batch``), so a metric that takes
references *or* sources (MENLI: ref->hyp or src->hyp; UniEval: relevance against the reference or
the source) could not be called without one of them through :class:`ScorerMetric`. This base fills
a left-out column with encodable placeholders for ``evaluate`` and hands ``None`` on to the
scoring layer, whose own checks then say clearly which argument a configuration needs.
"""

from __future__ import annotations

from typing import Any

import blindspot.scoring.module as base

_MISSING_KEY = "_blindspot_missing_inputs"


class OptionalInputsMetric(base.ScorerMetric):
    """A :class:`ScorerMetric` that may be called without ``references`` or ``sources``."""

    def compute(self, *, predictions: Any = None, references: Any = None,
                **kwargs: Any) -> dict[str, Any] | None:
        """Scores of the rows; ``references`` and ``sources`` may be left out where the chosen
        options do not need them (evaluate appends the module's input description here)."""
        rows = predictions if isinstance(predictions, (list, tuple)) else None
        names = self._feature_names()
        missing = []
        if rows is not None and "references" in names and references is None:
            references = [[] for _ in rows]
            missing.append("references")
        if rows is not None and "sources" in names and kwargs.get("sources") is None:
            kwargs["sources"] = ["" for _ in rows]
            missing.append("sources")
        return super().compute(predictions=predictions, references=references,
                               **kwargs, **{_MISSING_KEY: tuple(missing)})

    def _compute(self, predictions: list[str], references: list[Any] | None = None,
                 sources: list[str] | None = None, **options: Any) -> dict[str, Any]:
        missing = options.pop(_MISSING_KEY, ())
        return super()._compute(predictions,
                                None if "references" in missing else references,
                                None if "sources" in missing else sources, **options)
