"""The metrics of a search: the targeted metric as the search's objective, and a panel of other
metrics that judge the same perturbed texts (the evidence that the texts really got worse).

Every metric is built from a spec (``chrf``, ``rouge``, ``bertscore.f1@minilm``, a loaded evaluate
module) with the runner's :func:`~blindspot.runner.scorers.scorer_for` and scores through the
shared scoring layer (cache, deduplication). Scores are made higher-is-better (TER negated) and
compared as relative changes: ``(perturbed - gold) / |gold| * 100`` per example.

Two views of the same texts: ``gold`` scores the perturbed text against the gold (the search's own
objective, the gold playing the reference), ``references`` scores gold and perturbed texts against
the data's references (what the rank protocol does), when the data has them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from blindspot.runner.metric_spec import MetricSpec, resolve_metrics
from blindspot.runner.scorers import scorer_for, signed_scores
from blindspot.scoring.facts import default_panel
from blindspot.scoring.scorer import Scorer

#: the panel when none is given (the scorers' declared ``search_panel`` places); the targeted
#: metric's own family is left out of it
DEFAULT_PANEL = default_panel()


def panel_specs(target: MetricSpec, panel: Any = DEFAULT_PANEL,
                options: Any = None) -> list[MetricSpec]:
    """The panel's specs without the targeted metric's family (empty panels are allowed)."""
    if panel is None or (isinstance(panel, (str, list, tuple)) and not panel):
        return []
    return [s for s in resolve_metrics(panel, options) if s.metric != target.metric]


class MetricScores:
    """One metric of the search: its scorer and higher-is-better per-row scores."""

    def __init__(self, spec: MetricSpec, idf_corpus: Sequence[str] | None = None,
                 batch_size: int | None = None) -> None:
        self.spec = spec
        self.scorer: Scorer = scorer_for(spec, idf_corpus)
        if self.scorer.corpus_level:
            raise ValueError(f"metric {spec.name!r} scores only whole corpora; the search needs "
                             "a score per text (choose a per-row metric)")
        self.batch_size = batch_size

    def __call__(self, texts: Sequence[str], references: Sequence[Any] | None,
                 sources: Sequence[str | None]) -> list[float]:
        """Signed scores of ``texts`` against ``references`` (one item per text) and sources."""
        if not texts:
            return []
        use_source = self.scorer.uses_source != "none" and any(s is not None for s in sources)
        if self.scorer.uses_source == "required" and not use_source:
            raise ValueError(f"metric {self.spec.name!r} needs the source texts; give a source "
                             "column (--source-column)")
        return signed_scores(self.spec, self.scorer, texts, references,
                             list(sources) if use_source else None, self.batch_size)

    def against_gold(self, texts: Sequence[str], golds: Sequence[str],
                     sources: Sequence[str | None]) -> list[float]:
        """The search's objective: each text scored with its gold as the only reference."""
        return self(texts, [[g] for g in golds], sources)


def relative_change(gold: float, perturbed: float) -> float | None:
    """``(perturbed - gold) / |gold| * 100``; None when the gold scores 0 or NaN."""
    if not gold or math.isnan(gold) or math.isnan(perturbed):
        return None
    return (perturbed - gold) / abs(gold) * 100


def mean(values: Sequence[float | None]) -> float | None:
    """Mean of the values that are not None (None when there are none)."""
    kept = [v for v in values if v is not None]
    return sum(kept) / len(kept) if kept else None


def judge_texts(metric: MetricScores, golds: Sequence[str], perturbed: Sequence[str],
                sources: Sequence[str | None], references: Sequence[Any] | None = None
                ) -> list[dict[str, Any]]:
    """Per example: the metric's gold and perturbed scores and their relative change, against the
    golds (``references`` None) or against the given references."""
    refs = [[g] for g in golds] if references is None else list(references)
    scores = metric(list(golds) + list(perturbed), refs + refs, list(sources) * 2)
    n = len(golds)
    return [{"gold": g, "perturbed": p, "relative_change": relative_change(g, p)}
            for g, p in zip(scores[:n], scores[n:], strict=True)]
