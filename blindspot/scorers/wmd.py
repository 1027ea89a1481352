"""Word Mover's Distance (Kusner et al., 2015) between hypothesis and reference, on the word
vectors of :mod:`blindspot.scorers._word_vectors`, and its similarity form.

Each text is a normalised bag of words: every distinct word weighs its count over the text's
word count. WMD is the earth mover's distance between the two bags with the Euclidean distance
of the word vectors as the cost, solved exactly by POT's network simplex (``ot.emd2``), as
MoverScore's here. ``wms`` is the word mover's similarity ``exp(-wmd)`` of Clark et al. (2019),
the form Fabbri et al.'s SummEval code (Sai et al.'s implementation) reports: in (0, 1], 1 for
texts with the same words in any order, higher is better; ``wmd`` itself is a distance (0 for
the same bag, lower is better).

Choices: no stop word is removed (Kusner et al. removed them; the metric as Sai et al. ran it
compares every word); the vectors are not normalised (gensim's ``wmdistance`` scales them to
unit length unless ``norm=False``, with which it agrees with this to 1e-9); a text without words
is at distance 0 from another such text; against a text with words its similarity is 0 and its
distance undefined (NaN: no mass to move; the judged output is ``wms``). Several references:
the mean.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from typing import Any

from blindspot.scorers._word_vectors import Words, WordVectorScorer
from blindspot.scoring.scorer import Reference, register_scorer


def bag(items: Sequence[tuple[str, Any]]) -> tuple[Any, Any]:
    """(weights, points) of a normalised bag: each distinct key once, weighing its share."""
    import numpy as np

    counts = Counter(key for key, _ in items)
    first: dict[str, Any] = {}
    for key, vector in items:
        first.setdefault(key, vector)
    total = sum(counts.values())
    weights = np.array([counts[key] / total for key in first], dtype=np.float64)
    return weights, np.array([first[key] for key in first], dtype=np.float64)


def earth_movers_distance(a: tuple[Any, Any], b: tuple[Any, Any]) -> float:
    """Exact EMD between two weighted point sets (weights summing to 1) under the Euclidean
    distance of their points."""
    import ot
    from scipy.spatial.distance import cdist

    (wa, pa), (wb, pb) = a, b
    cost = cdist(pa, pb)
    return float(ot.emd2(wa, wb, cost, numItermax=1_000_000))


def word_bag(words: Words) -> tuple[Any, Any]:
    """The normalised bag of a text's words."""
    return bag(list(zip(words.words, words.vectors, strict=True)))


@register_scorer
class WordMoversDistance(WordVectorScorer):
    """WMD and its similarity ``exp(-WMD)``; ``wms`` is judged (higher is better)."""

    name = "wmd"
    outputs = ("wms", "wmd")
    default_output = "wms"
    lower_is_better = frozenset({"wmd"})
    natural_ranges = {"wms": (0.0, 1.0)}
    reference = Reference(
        "gensim 4.4 KeyedVectors.wmdistance (norm=False) on the same words and vectors",
        max_abs_diff=1e-9, rows=10,
        differs="gensim's default norm=True scales every vector to unit length first; ours "
                "moves raw vectors, as Kusner et al. (and gensim's norm=False)")

    def pair(self, hypothesis: Words, reference: Words) -> dict[str, float]:
        if hypothesis.empty or reference.empty:
            if not (hypothesis.empty and reference.empty):
                return {"wms": 0.0, "wmd": math.nan}
            distance = 0.0
        else:
            distance = earth_movers_distance(word_bag(hypothesis), word_bag(reference))
        return {"wms": math.exp(-distance), "wmd": distance}
