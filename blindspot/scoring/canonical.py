"""What the canonical ``evaluate`` modules compute, for our modules of the same name to give the
same numbers for the same call (``evaluate.load("bleu")`` -> ``evaluate.load("blindspot/bleu")``).

* ``bleu``: the classic corpus BLEU of the TensorFlow NMT scripts on 13a-tokenized text (0-1,
  uniform weights, brevity penalty against the SHORTEST reference of each row, optional
  add-one smoothing of Lin & Och 2004), implemented here after the published algorithm;
* ``sacrebleu``, ``chrf``, ``ter``: sacrebleu's corpus scores with the canonical modules' argument
  names mapped to sacrebleu's (the tables below);
* ``rouge``: rouge-score's ``BootstrapAggregator`` mid value of the per-row F-measures.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from rouge_score.scoring import BootstrapAggregator, Score
from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a

#: canonical ``ter`` argument -> sacrebleu ``TER`` argument
TER_ARGUMENTS: Mapping[str, str] = {"normalized": "normalized", "ignore_punct": "no_punct",
                                    "support_zh_ja_chars": "asian_support",
                                    "case_sensitive": "case_sensitive"}
#: canonical ``sacrebleu`` argument -> sacrebleu ``BLEU`` argument
SACREBLEU_ARGUMENTS: Mapping[str, str] = {"smooth_method": "smooth_method",
                                          "smooth_value": "smooth_value", "force": "force",
                                          "lowercase": "lowercase", "tokenize": "tokenize",
                                          "use_effective_order": "effective_order"}


def renamed(options: Mapping[str, Any], table: Mapping[str, str]) -> dict[str, Any]:
    """Canonical-module options under the wrapped library's names (None values dropped, so the
    library's own defaults apply, as the canonical modules leave them)."""
    return {table[key]: value for key, value in options.items() if value is not None}


def reference_lists(references: Sequence[Any]) -> list[list[str]]:
    """References as one list per prediction (a lone string is a one-item list)."""
    return [[refs] if isinstance(refs, str) else list(refs) for refs in references]


def reference_streams(references: Sequence[Any]) -> list[list[str]]:
    """sacrebleu's layout (one stream per reference position); like the canonical modules, every
    prediction must have the same number of references."""
    lists = reference_lists(references)
    width = len(lists[0]) if lists else 0
    if any(len(refs) != width for refs in lists):
        raise ValueError("sacrebleu's corpus scores need the same number of references for each "
                         "prediction; pad the shorter lists or score per row with "
                         "use_aggregator=False")
    return [[refs[k] for refs in lists] for k in range(width)]


# -- classic BLEU ------------------------------------------------------------------------------

@lru_cache(maxsize=1)
def _tokenizer_13a() -> Tokenizer13a:
    return Tokenizer13a()


def tokenize_13a(text: str) -> list[str]:
    """The canonical ``bleu`` module's default tokenizer: mteval-v13a (sacrebleu's), split on
    whitespace."""
    return _tokenizer_13a()(text).split()


def ngram_counts(tokens: Sequence[str], max_order: int) -> Counter[tuple[str, ...]]:
    """Every n-gram of orders 1..max_order in ``tokens`` with its count."""
    return Counter(tuple(tokens[i: i + n]) for n in range(1, max_order + 1)
                   for i in range(len(tokens) - n + 1))


@dataclass(frozen=True)
class ClassicBleu:
    """The canonical ``bleu`` module's outputs."""

    bleu: float
    precisions: list[float]
    brevity_penalty: float
    length_ratio: float
    translation_length: int
    reference_length: int


def classic_bleu(translations: Sequence[Sequence[str]], references: Sequence[Sequence[Sequence[str]]],
                 max_order: int = 4, smooth: bool = False) -> ClassicBleu:
    """Corpus BLEU of tokenized translations against their tokenized references.

    Clipped n-gram matches (each n-gram counted at most as often as in the reference that has
    it most) over all rows per order; precision = matches / possible n-grams (with ``smooth``:
    (matches + 1) / (possible + 1)); the geometric mean of the precisions (0 when any is 0);
    brevity penalty exp(1 - r / c) when the translation length c is not above r, the sum of
    each row's shortest reference length (c / r is taken as 1e-5 when either is 0).
    """
    matches = [0] * max_order
    possible = [0] * max_order
    reference_length = translation_length = 0
    for refs, translation in zip(references, translations, strict=True):
        reference_length += min(len(r) for r in refs)
        translation_length += len(translation)
        merged: Counter[tuple[str, ...]] = Counter()
        for ref in refs:
            merged |= ngram_counts(ref, max_order)
        for ngram, count in (ngram_counts(translation, max_order) & merged).items():
            matches[len(ngram) - 1] += count
        for order in range(1, max_order + 1):
            possible[order - 1] += max(len(translation) - order + 1, 0)
    if smooth:
        precisions = [(m + 1.0) / (p + 1.0) for m, p in zip(matches, possible, strict=True)]
    else:
        precisions = [m / p if p > 0 else 0.0 for m, p in zip(matches, possible, strict=True)]
    weight = 1.0 / max_order  # uniform weights, applied to each log precision
    geo_mean = (math.exp(sum(weight * math.log(p) for p in precisions))
                if min(precisions) > 0 else 0.0)
    # an empty side gives a ratio of 1e-5, so a penalty of ~0, instead of a division by zero
    ratio = (translation_length / reference_length
             if translation_length and reference_length else 1e-5)
    penalty = 1.0 if ratio > 1.0 else math.exp(1 - 1.0 / ratio)
    return ClassicBleu(geo_mean * penalty, precisions, penalty, ratio, translation_length,
                       reference_length)


def bleu_of_texts(predictions: Sequence[str], references: Sequence[Any],
                  tokenizer: Callable[[str], list[str]] = tokenize_13a, max_order: int = 4,
                  smooth: bool = False) -> ClassicBleu:
    """:func:`classic_bleu` of untokenized texts, as the canonical ``bleu`` module takes them."""
    return classic_bleu([tokenizer(p) for p in predictions],
                        [[tokenizer(r) for r in refs] for refs in reference_lists(references)],
                        max_order=max_order, smooth=smooth)


# -- ROUGE ---------------------------------------------------------------------------------------

def bootstrap_mid(rows: Mapping[str, Sequence[float]]) -> dict[str, float]:
    """rouge-score's ``BootstrapAggregator`` mid value of per-row scores (what the canonical
    ``rouge`` returns with ``use_aggregator=True``; it draws from numpy's global random state).

    Each row goes in as a Score whose three fields are the row's value: the aggregator resamples
    rows and takes percentiles field by field, so the mid of a field depends only on that field."""
    aggregator = BootstrapAggregator()
    keys = list(rows)
    for values in zip(*(rows[key] for key in keys), strict=True):
        aggregator.add_scores({key: Score(v, v, v) for key, v in zip(keys, values, strict=True)})
    result = aggregator.aggregate()
    return {key: float(result[key].mid.fmeasure) for key in keys}
