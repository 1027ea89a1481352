"""ROUGE-1/2/L/Lsum through rouge-score, with the output keys of evaluate's own ``rouge`` metric.

Each row is scored with ``RougeScorer.score_multi``: for each ROUGE type separately, the
reference with the highest F-measure is chosen and its precision, recall and F-measure are kept
(so with ``measure="recall"`` the recall reported is that of the best-F reference, exactly as
rouge-score defines multi-reference ROUGE). ``rougeLsum`` splits texts into sentences on newlines
("\\n"), as rouge-score expects; a text without newlines is one sentence, and Lsum then equals L.

Stemming (Porter, on words longer than three characters) is on by default, as in the
blind-spots paper's setting. Tokenising and stemming dominate the cost, so tokens are memoised
per text and stems per word: the scores are exactly rouge-score's, since both are pure functions.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from typing import Any

from blindspot.scoring.base import ScoreInput, Scorer, register_scorer

DEFAULT_ROUGE_TYPES = ("rouge1", "rouge2", "rougeL", "rougeLsum")
MEASURES = ("fmeasure", "precision", "recall")
_ROUGE_TYPE = re.compile(r"rouge([1-9][0-9]*|L|Lsum)$")


def _check_rouge_types(rouge_types: Any) -> tuple[str, ...]:
    """The ROUGE types as a tuple, or a ValueError naming ``rouge_types``."""
    if isinstance(rouge_types, str):
        rouge_types = [rouge_types]
    types = tuple(rouge_types)
    bad = [t for t in types if not isinstance(t, str) or not _ROUGE_TYPE.match(t)]
    if not types or bad:
        raise ValueError(f"rouge_types must be a non-empty list of 'rouge<N>' (N >= 1), 'rougeL' "
                         f"or 'rougeLsum', got {list(types) if types else rouge_types!r}")
    return types


class _MemoTokenizer:
    """rouge-score's default tokenisation, memoised per text, with a per-word stem cache.

    Implements the ``tokenize`` method that ``RougeScorer(tokenizer=...)`` calls.
    """

    def __init__(self, use_stemmer: bool, max_texts: int = 65536) -> None:
        from nltk.stem import porter
        from rouge_score import tokenize

        self._tokenize = tokenize.tokenize
        stemmer = porter.PorterStemmer() if use_stemmer else None
        self._stemmer = _CachedStemmer(stemmer) if stemmer is not None else None
        self.tokenize = functools.lru_cache(maxsize=max_texts)(self._tokenize_uncached)

    def _tokenize_uncached(self, text: str) -> list[str]:
        return self._tokenize(text, self._stemmer)


class _CachedStemmer:
    """A Porter stemmer whose ``stem`` remembers every word it has seen (stemming is pure)."""

    def __init__(self, stemmer: Any) -> None:
        self.stem = functools.lru_cache(maxsize=262144)(stemmer.stem)


@register_scorer
class Rouge(Scorer):
    """ROUGE F-measure (or precision / recall), best over references per ROUGE type.

    Options: ``rouge_types`` (default rouge1, rouge2, rougeL, rougeLsum), ``use_stemmer``
    (default True), ``measure`` ("fmeasure" default, "precision", "recall"). Outputs one key per
    ROUGE type, named as the type ("rouge1", ..., "rougeLsum"), each in [0, 1].
    """

    name = "rouge"
    model_option = None
    outputs = DEFAULT_ROUGE_TYPES
    uses_references = "required"
    default_batch_size = 256

    def __init__(self, rouge_types: Sequence[str] = DEFAULT_ROUGE_TYPES, use_stemmer: bool = True,
                 measure: str = "fmeasure") -> None:
        types = _check_rouge_types(rouge_types)
        if measure not in MEASURES:
            raise ValueError(f"measure must be one of {', '.join(MEASURES)}, got {measure!r}")
        if not isinstance(use_stemmer, bool):
            raise ValueError(f"use_stemmer must be True or False, got {use_stemmer!r}")
        super().__init__(rouge_types=list(types), use_stemmer=use_stemmer, measure=measure)
        self.outputs = types  # per instance: the keys follow the requested types
        self._scorer: Any = None

    def _rouge_scorer(self) -> Any:
        """rouge-score's scorer with the memoising tokenizer, built on first use."""
        if self._scorer is None:
            from rouge_score import rouge_scorer

            self._scorer = rouge_scorer.RougeScorer(
                list(self.outputs), use_stemmer=self.config["use_stemmer"],
                tokenizer=_MemoTokenizer(self.config["use_stemmer"]))
        return self._scorer

    def score_batch(self, batch: Sequence[ScoreInput]) -> list[dict[str, float]]:
        scorer, measure = self._rouge_scorer(), self.config["measure"]
        rows = []
        for item in batch:
            best = scorer.score_multi(list(item.references), item.hypothesis)
            rows.append({key: float(getattr(best[key], measure)) for key in self.outputs})
        return rows

    def score_corpus(self, inputs: Sequence[ScoreInput]) -> dict[str, float]:
        """The mean of the per-row scores (ROUGE has no pooled corpus statistic in rouge-score)."""
        rows = self.score_batch(inputs)
        return {key: (sum(r[key] for r in rows) / len(rows) if rows else 0.0)
                for key in self.outputs}

    def model_revision(self) -> str:
        from importlib.metadata import version

        return f"rouge-score-{version('rouge-score')}"
