"""The shared scoring layer: validate, deduplicate, sort by length, cache, batch.

Scoring N rows with U distinct (hypothesis, references, source) inputs costs U model
evaluations, and none at all for inputs already in the persistent score cache. Every metric
module, the meta-evaluator and the Space go through :func:`score_rows`.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from blindspot.progress import progress_bar
from blindspot.scoring.cache import ScoreCache, default_score_cache
from blindspot.scoring.scorer import ScoreInput, Scorer

_USE_DEFAULT = object()


def _as_references(value: Any, index: int) -> tuple[str, ...]:
    if isinstance(value, str):
        return (value,)
    if isinstance(value, (list, tuple)) and all(isinstance(r, str) for r in value):
        return tuple(value)
    raise ValueError(f"references[{index}] must be a string or a list of strings, got "
                     f"{type(value).__name__}")


def build_inputs(scorer: Scorer | type[Scorer], predictions: Sequence[Any],
                 references: Sequence[Any] | None = None,
                 sources: Sequence[Any] | None = None) -> list[ScoreInput]:
    """Rows as :class:`ScoreInput`, or a ValueError naming the argument that is wrong."""
    if predictions is None or isinstance(predictions, str):
        raise ValueError("predictions must be a list of strings (one hypothesis per row)")
    predictions = list(predictions)
    for name, other in (("references", references), ("sources", sources)):
        if other is not None and (isinstance(other, str) or len(other) != len(predictions)):
            got = "a string" if isinstance(other, str) else f"{len(other)} items"
            raise ValueError(f"{name} must have one item per prediction: {len(predictions)} "
                             f"predictions but {got}")
    if references is None and scorer.uses_references == "required":
        raise ValueError(f"metric {scorer.name!r} needs references; pass references=[...]")
    if sources is None and scorer.uses_source == "required":
        raise ValueError(f"metric {scorer.name!r} needs the source texts; pass sources=[...]")
    inputs = []
    for i, hyp in enumerate(predictions):
        if not isinstance(hyp, str):
            raise ValueError(f"predictions[{i}] must be a string, got {type(hyp).__name__}; "
                             f"replace missing hypotheses by \"\"")
        refs = _as_references(references[i], i) if references is not None else ()
        if scorer.uses_references == "required" and not refs:
            raise ValueError(f"references[{i}] is empty; metric {scorer.name!r} needs at least one")
        src = sources[i] if sources is not None else None
        if src is not None and not isinstance(src, str):
            raise ValueError(f"sources[{i}] must be a string, got {type(src).__name__}")
        inputs.append(ScoreInput(hyp, refs if scorer.uses_references != "none" else (),
                                 src if scorer.uses_source != "none" else None))
    return inputs


def input_keys(scorer: Scorer, inputs: Sequence[ScoreInput]) -> dict[ScoreInput, str]:
    """Each distinct input (first-seen order) and its cache key."""
    identity = scorer.identity()
    return {item: scorer.cache_key(item, identity) for item in dict.fromkeys(inputs)}


def pending_batches(scorer: Scorer, keys: dict[ScoreInput, str], known: set[str],
                    batch_size: int | None = None) -> list[list[ScoreInput]]:
    """The batches that score the inputs whose key is not ``known``: longest first, so batches
    pad little. Any engine that batches this way computes exactly the same numbers."""
    todo = sorted((item for item, key in keys.items() if key not in known), key=ScoreInput.cost,
                  reverse=True)
    if not todo:
        return []
    size = batch_size or scorer.batch_rows()
    return [todo[start: start + size] for start in range(0, len(todo), size)]


def scores_in_turn(scorer: Scorer, batches: Iterable[Sequence[ScoreInput]]
                   ) -> Iterator[list[dict[str, float]]]:
    """Each batch's scores, in order, as :meth:`~Scorer.score_batch` gives them.

    For a scorer that :meth:`~Scorer.prepares_ahead`, the host part of the next batch
    (tokenizing) runs in one worker thread while this batch is scored: the device is not left
    waiting between batches. The first batch is prepared here (it may load the model, which the
    worker then finds loaded). A batch whose preparation fails raises when its turn comes, after
    every batch before it has been yielded.
    """
    if not scorer.prepares_ahead():
        for batch in batches:
            yield checked_scores(scorer, batch, scorer.score_batch(batch))
        return
    todo = iter(batches)
    current = next(todo, None)
    if current is None:
        return
    prepared = scorer.prepare_batch(current)
    # leaving the block (the caller stopped early) waits for the one preparation in flight
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"prepare-{scorer.name}") as pool:
        while current is not None:
            following = next(todo, None)
            ahead = None if following is None else pool.submit(scorer.prepare_batch, following)
            yield checked_scores(scorer, current, scorer.score_prepared(current, prepared))
            current, prepared = following, None if ahead is None else ahead.result()


def checked_scores(scorer: Scorer, batch: Sequence[ScoreInput],
                   scores: list[dict[str, float]]) -> list[dict[str, float]]:
    """``scores``, or a RuntimeError when the scorer gave not one per input of ``batch``."""
    if len(scores) != len(batch):
        raise RuntimeError(f"{scorer.name}: score_batch returned {len(scores)} scores for "
                           f"{len(batch)} inputs")
    return scores


def corpus_key(scorer: Scorer, inputs: Sequence[ScoreInput]) -> str:
    """The cache key of a corpus-level score of the whole of ``inputs``."""
    return scorer.cache_key(ScoreInput("\x1e".join(i.as_json() for i in inputs)))


def score_rows(scorer: Scorer, predictions: Sequence[Any], references: Sequence[Any] | None = None,
               sources: Sequence[Any] | None = None, *, cache: Any = _USE_DEFAULT,
               batch_size: int | None = None, progress: bool = False) -> dict[str, list[float]]:
    """Per-row scores (one list per output key), computing each distinct input once.

    ``cache``: a :class:`ScoreCache`, None (no cache) or, by default, the process-wide cache.
    """
    inputs = build_inputs(scorer, predictions, references, sources)
    store: ScoreCache | None = default_score_cache() if cache is _USE_DEFAULT else cache
    keys = input_keys(scorer, inputs)
    found = store.get_many(list(keys.values())) if store is not None else {}
    results: dict[ScoreInput, dict[str, float]] = {
        item: found[key] for item, key in keys.items() if key in found}
    batches = pending_batches(scorer, keys, set(found), batch_size)
    bar = _progress(sum(map(len, batches)), scorer.name, progress)
    for batch, scores in zip(batches, scores_in_turn(scorer, batches), strict=True):
        results.update(zip(batch, scores, strict=True))
        if store is not None:
            store.put_many((keys[item], score) for item, score in zip(batch, scores, strict=True))
        if bar is not None:
            bar.update(len(batch))
    if bar is not None:
        bar.close()
    return {key: [results[item][key] for item in inputs] for key in scorer.outputs}


def score_corpus(scorer: Scorer, predictions: Sequence[Any], references: Sequence[Any] | None = None,
                 sources: Sequence[Any] | None = None, *, cache: Any = _USE_DEFAULT
                 ) -> dict[str, float]:
    """Corpus-level scores of the whole set (cached by the whole set's content)."""
    inputs = build_inputs(scorer, predictions, references, sources)
    store: ScoreCache | None = default_score_cache() if cache is _USE_DEFAULT else cache
    key = corpus_key(scorer, inputs)
    if store is not None:
        hit = store.get_many([key])
        if key in hit:
            return hit[key]
    result = scorer.score_corpus(inputs)
    if store is not None:
        store.put_many([(key, result)])
    return result


def _progress(total: int, name: str, enabled: bool) -> Any:
    if not enabled or total == 0:
        return None
    return progress_bar(total=total, desc=f"scoring {name}", unit="input", file=sys.stderr)
