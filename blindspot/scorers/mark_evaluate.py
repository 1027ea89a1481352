"""Mark-Evaluate Petersen (Mordido & Meinel, 2020) of a hypothesis against a reference: the
capture-recapture estimate of a population whose size is known, from contextual token vectors,
as the examination of BERTScore, BLEURT, NUBIA, MoverScore and Mark-Evaluate computed it (its
``markevaluate`` code, LazerLambda/ME, BERT version, one pair at a time).

Each text is the set of its tokens' vectors in each of the encoder's last ``layers`` hidden
states (5: every token once per layer), the text encoded alone without [CLS]/[SEP] (its word
pieces, cut to 512; the examination passes its segment ids where BERT takes the attention mask,
so every token attends to every other and the token types are 0) and identical vectors counted
once: ``S`` the reference's, ``S'`` the hypothesis'. Each vector's k-nearest-neighbour
hypersphere is centred on it with the distance to its k-th nearest neighbour in its own set as
radius (Euclidean); a vector is *inside* the other set when it lies in at least one of that
set's hyperspheres (distance at most the radius). With ``a`` the hypothesis vectors inside ``S``
and ``b`` the reference vectors inside ``S'``, the Petersen estimate marks ``M = |S| + a``,
captures ``C = |S'| + b`` and recaptures ``R = a + b``:

    N_hat = M * C / R,    score = 1 - min(1, |N_hat - N| / N)

with ``N`` the two texts' vector counts before duplicates are dropped (as the examination
counts them), so identical texts score 1 and texts whose vectors never fall inside the other's
spheres score 0 (``R = 0``: the examination's estimate is then 0). When either set has at most
``k`` vectors, k becomes one less than the smaller set's size for both (a single vector: radius
0). A text without a token scores 0, as in the examination. The score is in [0, 1], higher is
better, symmetric in its two texts.

Choices: the examination scored candidate-reference pairs with k = 1 on BERT-base fine-tuned on
MNLI; the default is ``textattack/bert-base-uncased-MNLI``. ``layers=1`` reads the last layer
only (the default before this agreed with the examination's code; Spearman 0.67 with it on 50
rows); Mordido & Meinel's own release embeds whole sentences with an SBERT model to compare
corpora. Several references: the mean.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from blindspot.scorers._token_vectors import LayerVectorScorer
from blindspot.scoring.scorer import Reference, ScoreInput, register_scorer

DEFAULT_MODEL = "textattack/bert-base-uncased-MNLI"


def knn_radii(points: Any, k: int) -> Any:
    """Distance from each point to its k-th nearest other point of the set (0 for k = 0)."""
    import numpy as np
    from scipy.spatial.distance import cdist

    if len(points) < 2 or k < 1:
        return np.zeros(len(points))
    distances = np.sort(cdist(points, points), axis=1)  # column 0 is the point itself
    return distances[:, k]


def inside(points: Any, centres: Any, radii: Any) -> int:
    """How many of ``points`` lie in at least one hypersphere (``centres``, ``radii``)."""
    from scipy.spatial.distance import cdist

    return int((cdist(points, centres) <= radii[None, :]).any(axis=1).sum())


def petersen_estimate(hypothesis: Any, reference: Any, k: int) -> float:
    """ME-Petersen's population estimate ``M * C / R`` (0 when nothing is recaptured)."""
    a = inside(hypothesis, reference, knn_radii(reference, k))
    b = inside(reference, hypothesis, knn_radii(hypothesis, k))
    marked, captured, recaptured = len(reference) + a, len(hypothesis) + b, a + b
    return marked * captured / recaptured if recaptured else 0.0


def me_petersen(hypothesis: Any, reference: Any, k: int = 1) -> float:
    """``1 - min(1, |N_hat - N| / N)`` for two sets of vectors (``N`` counts duplicates, the
    estimate does not); 0 when either has none."""
    import numpy as np

    if len(hypothesis) == 0 or len(reference) == 0:
        return 0.0
    total = len(hypothesis) + len(reference)
    hyp, ref = np.unique(hypothesis, axis=0), np.unique(reference, axis=0)
    k = min(k, len(hyp) - 1, len(ref) - 1)
    return 1.0 - min(1.0, abs(petersen_estimate(hyp, ref, k) - total) / total)


@register_scorer
class MarkEvaluatePetersen(LayerVectorScorer):
    """ME-Petersen of each hypothesis against each reference, averaged over references."""

    name = "mark_evaluate"
    outputs = ("me_petersen",)
    natural_ranges = {None: (0.0, 1.0)}
    version = "2"
    special_tokens_encoded = False
    reference = Reference(
        "LazerLambda/ME markevaluate (the examination's code, commit 28c65b2), its outputs "
        "recorded on MiniLM", max_abs_diff=1e-6, rows=12)

    def __init__(self, model_type: str = DEFAULT_MODEL, k: int = 1, layers: int = 5,
                 batch_size: int = 64, device: str | None = None) -> None:
        if not isinstance(k, int) or k < 1:
            raise ValueError(f"k must be a positive integer (neighbours per hypersphere), got {k!r}")
        path = self.setup(model_type, layers, True, batch_size, device)
        super().__init__(model_type=path, k=k, layers=layers)

    def score_batch(self, batch: Sequence[ScoreInput]) -> list[dict[str, float]]:
        texts = [item.hypothesis for item in batch]
        texts += [ref for item in batch for ref in item.references]
        vectors = {text: layers.reshape(-1, layers.shape[-1])
                   for text, (layers, _) in self.token_vectors(texts).items()}
        k = self.config["k"]
        return [{"me_petersen": sum(me_petersen(vectors[item.hypothesis], vectors[ref], k)
                                    for ref in item.references) / len(item.references)}
                for item in batch]
