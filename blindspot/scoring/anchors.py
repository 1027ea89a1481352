"""Sanity anchors beside a blind-spot report's verdicts: what a few reference texts score.

A verdict says "truncation costs 2 points"; the anchors say what 2 points are for this metric:
the score of the reference as hypothesis, of the gold, of an unrelated gold (another row's), of
the copied source, of an empty string, of the gold's words shuffled and of random characters,
each the mean over the first :data:`ANCHOR_ROWS` gold rows, in the metric's own units.
:func:`sanity_anchors` takes the gold rows and a scorer; the rank run calls it once per metric
and dataset (``results.json``: ``datasets.<name>.metrics.<metric>.anchors``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from blindspot.faults import ScorerUnavailable
from blindspot.scoring.probe import CheckRows, anchor_hypotheses, as_reference_lists, direct_scores

#: Rows the anchors are averaged over: a handful, so a run's cost barely changes.
ANCHOR_ROWS = 8
#: the anchors (:func:`~blindspot.scoring.probe.anchor_hypotheses`): each scores up to
#: ``ANCHOR_ROWS`` rows, which a metric with a call budget counts before a run starts
ANCHOR_COUNT = 7
ANCHOR_SEED = 0
#: the anchors that corrupt the gold past reading: a metric that scores both as the gold does
#: tells texts apart no better than a constant
CORRUPTED = ("shuffled_words", "random_characters")


def sanity_anchors(scorer: Any, spec: Any, hypotheses: Sequence[str],
                   references: Sequence[Any] | None = None,
                   sources: Sequence[str] | None = None, *, rows: int = ANCHOR_ROWS,
                   seed: int = ANCHOR_SEED,
                   score_batch: Callable[[list[Any]], list[dict[str, float]]] | None = None
                   ) -> dict[str, float | None] | None:
    """Each anchor's mean score over the first ``rows`` rows (None where the data lacks what the
    anchor needs, or the metric cannot score it, or, for a metric that reads only the hypothesis,
    for the unrelated gold); None for a corpus-level metric or fewer than two rows."""
    keep = min(rows, len(hypotheses))
    if scorer.corpus_level or keep < 2:
        return None
    checked = CheckRows(list(hypotheses[:keep]),
                        as_reference_lists(None if references is None else references[:keep]),
                        None if sources is None else list(sources[:keep]))
    means: dict[str, float | None] = {}
    texts_of = anchor_hypotheses(checked, seed)
    if scorer.uses_references == "none" and scorer.uses_source == "none":
        texts_of["unrelated_gold"] = None  # nothing to be unrelated to: the golds reshuffled
    for name, texts in texts_of.items():
        try:
            scores = None if texts is None else direct_scores(
                scorer, spec, checked.with_hypotheses(texts), batch_size=keep,
                score_batch=score_batch)
        except ScorerUnavailable:  # the metric's server is down: the run stops, not the anchor
            raise
        except Exception:  # an anchor the metric cannot score (an empty text) is left out
            scores = None
        mean = None if scores is None else sum(scores) / len(scores)
        means[name] = mean if mean is not None and math.isfinite(mean) else None
    return means


__all__ = ["ANCHOR_ROWS", "sanity_anchors"]


def uninformative(low: float, high: float, anchors: Mapping[str, float | None] | None,
                  tolerance: float) -> str | None:
    """Why a metric's numbers say nothing about the texts (a flag beside its verdicts), or None:
    it gave every text of the run one score (``low == high``, over the gold and perturbed rows),
    or the gold and its heavily corrupted copies (:data:`CORRUPTED`) score alike, within the
    run's ``tolerance``. An LLM judge that answers every prompt with the same digit is the
    common case; its agreement and stability would otherwise read as perfect."""
    if math.isfinite(low) and low == high:
        return (f"uninformative: it gave every text of the run the same score ({low:g}), so its "
                "verdicts say nothing about the texts")
    gold = (anchors or {}).get("gold")
    corrupted = [(anchors or {}).get(name) for name in CORRUPTED]
    if gold is None or any(value is None for value in corrupted):
        return None
    if all(abs(value - gold) <= tolerance for value in corrupted if value is not None):
        return (f"uninformative: the gold scores {gold:g} and its words shuffled and random "
                f"characters score {corrupted[0]:g} and {corrupted[1]:g} (within the tolerance "
                f"{tolerance:g}): it does not tell a text from a heavily corrupted one")
    return None
