"""The three static word-embedding metrics of Sai et al. (2021), as Sharma et al.'s nlg-eval
defines them, on the word vectors of :mod:`blindspot.scorers._word_vectors`:

* **Embedding Average** (Landauer & Dumais, 1997): the cosine of the two texts' mean word
  vectors (nlg-eval normalises the sum; the cosine is the same);
* **Vector Extrema** (Forgues et al., 2014): each text is the vector whose every dimension is
  the word value of largest magnitude in that dimension (the maximum, or the minimum when its
  absolute value is larger; a tie keeps the maximum); the score is the cosine of the two;
* **Greedy Matching** (Rus & Lintean, 2012): each word of one text is matched to the word of
  the other text with the highest cosine; the mean of those best cosines is taken in both
  directions, and the score is their average.

All three are cosines in [-1, 1] (1 for identical texts), higher is better. A text without any
word (empty, or only whitespace) scores 0 against a text with words and 1 against another empty
one. Several references: the mean over references (nlg-eval keeps the maximum). With one
reference each, nlg-eval's ``eval_emb_metrics`` (the code of Sai et al.'s numbers) gives the same
scores to its 6 printed decimals on the same words and vectors.
"""

from __future__ import annotations

from typing import Any

from blindspot.scorers._word_vectors import Words, WordVectorScorer, cosine
from blindspot.scoring.scorer import Reference, register_scorer

COSINE_RANGE: dict[str | None, tuple[float, float]] = {None: (-1.0, 1.0)}


def extrema(vectors: Any) -> Any:
    """Per dimension, the value of largest magnitude over the rows (the maximum on a tie)."""
    import numpy as np

    array = np.asarray(vectors)
    high, low = array.max(axis=0), array.min(axis=0)
    return np.where(np.abs(low) > np.abs(high), low, high)


def greedy_matching(hypothesis: Any, reference: Any) -> float:
    """Mean best cosine of each word to the other text, averaged over both directions."""
    import numpy as np

    a = np.asarray(hypothesis)
    b = np.asarray(reference)
    a = a / np.maximum(np.linalg.norm(a, axis=1, keepdims=True), 1e-30)
    b = b / np.maximum(np.linalg.norm(b, axis=1, keepdims=True), 1e-30)
    cos = np.clip(a @ b.T, -1.0, 1.0)
    return float((cos.max(axis=1).mean() + cos.max(axis=0).mean()) / 2)


class CosineMetric(WordVectorScorer):
    """A metric whose one output compares the two texts' word-vector arrays (``compare``)."""

    natural_ranges = COSINE_RANGE
    reference = Reference(
        "Maluuba/nlg-eval word2vec/evaluate.py (commit 2ab4528), its outputs recorded on MiniLM's "
        "input embeddings", max_abs_diff=1e-6, rows=11,
        differs="several references: ours is the mean, nlg-eval's the maximum")

    @staticmethod
    def compare(hypothesis: Any, reference: Any) -> float:
        raise NotImplementedError

    def pair(self, hypothesis: Words, reference: Words) -> dict[str, float]:
        if hypothesis.empty or reference.empty:
            score = 1.0 if hypothesis.empty and reference.empty else 0.0
        else:
            score = self.compare(hypothesis.vectors, reference.vectors)
        return {self.outputs[0]: score}


def average_cosine(hypothesis: Any, reference: Any) -> float:
    """Cosine of the two mean vectors."""
    return cosine(hypothesis.mean(axis=0), reference.mean(axis=0))


def extrema_cosine(hypothesis: Any, reference: Any) -> float:
    """Cosine of the two extrema vectors."""
    return cosine(extrema(hypothesis), extrema(reference))


@register_scorer
class EmbeddingAverage(CosineMetric):
    """Cosine of the hypothesis' and the reference's mean word vectors."""

    name = "embedding_average"
    outputs = ("embedding_average",)
    compare = staticmethod(average_cosine)


@register_scorer
class VectorExtrema(CosineMetric):
    """Cosine of the hypothesis' and the reference's extrema vectors."""

    name = "vector_extrema"
    outputs = ("vector_extrema",)
    compare = staticmethod(extrema_cosine)


@register_scorer
class GreedyMatching(CosineMetric):
    """Greedy word-to-word cosine matching, averaged over both directions."""

    name = "greedy_matching"
    outputs = ("greedy_matching",)
    compare = staticmethod(greedy_matching)
