"""The evaluate-module base of the metrics whose idf weights come from the references of a call
(BERTScore, MoverScore): ``compute`` hands the call's references to the scorer as its idf corpus.

Module scripts import this module (``import blindspot.scorers._idf_metric as idf_base``), not the
class, so that ``evaluate.load`` finds the script's own class first.
"""

from __future__ import annotations

from typing import Any

import blindspot.scoring.module as base
from blindspot.scorers._encoders import with_idf_corpus


class IdfCorpusMetric(base.ScorerMetric):
    """A :class:`~blindspot.scoring.module.ScorerMetric` that passes ``idf_references`` (idf is
    on when the caller does not say if the scorer's ``idf`` option defaults to on)."""

    def _compute(self, predictions: list[str], references: list[Any] | None = None,
                 **options: Any) -> dict[str, Any]:
        idf_default = self._scorer_class().idf_default()
        return super()._compute(predictions, references,
                                **with_idf_corpus(options, references, idf_default))
