"""The shared scoring layer: every metric as a :class:`Scorer`, scored through one engine that
deduplicates, sorts by length, batches and caches (:func:`score_rows`, :func:`score_corpus`)."""

from blindspot.scoring.cache import ScoreCache, default_score_cache
from blindspot.scoring.engine import build_inputs, score_corpus, score_rows
from blindspot.scoring.scorer import SCORERS, ScoreInput, Scorer, get_scorer, register_scorer

__all__ = ["SCORERS", "ScoreCache", "ScoreInput", "Scorer", "build_inputs", "default_score_cache",
           "get_scorer", "register_scorer", "score_corpus", "score_rows"]
