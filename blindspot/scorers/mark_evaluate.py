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

from blindspot.scorers._token_vectors import LayerVectorScorer, module_inputs
from blindspot.scoring.card import ModuleCard
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


_MARK_EVALUATE_CARD = ModuleCard(
    title="Mark-Evaluate Petersen", emoji="🏷️",
    summary=("Mark-Evaluate Petersen (Mordido & Meinel, 2020): capture-recapture estimate of the "
             "known population of two texts' token vectors, on blindspot's cached scoring layer."),
    description="""\
Mark-Evaluate Petersen on blindspot's cached scoring layer.

Mark-Evaluate Petersen (Mordido & Meinel, 2020) applied to a candidate-reference pair, as the
examination of BERTScore, BLEURT, NUBIA, MoverScore and Mark-Evaluate did (its code, LazerLambda/ME):
the two texts' sets of contextual token vectors (each text encoded alone without [CLS]/[SEP], every
token once in each of the last five layers) are the population; a vector is captured when it lies in a
k-nearest-neighbour hypersphere of the other set; the Petersen estimate `N_hat = M * C / R` (marked
`M = |S| + a`, captured `C = |S'| + b`, recaptured `R = a + b`, with `a` and `b` the vectors of each
set inside the other's spheres) is compared with the known size `N = |S| + |S'|`:
`score = 1 - min(1, |N_hat - N| / N)`; `layers=1` reads the last layer only.

Runs offline on MiniLM (``model_type="minilm"``). Several
references per hypothesis are averaged. See ``blindspot/scorers/`` for every choice and why.""",
    examples="""\
>>> import evaluate
>>> metric = evaluate.load("blindspot/mark_evaluate")
>>> out = metric.compute(predictions=["The cat sat on the mat.",
...                                   "mat the on sat cat The.", "The dog sat on the mat.",
...                                   "Quantum computers factor large numbers quickly."],
...                      references=["The cat sat on the mat.", "The cat sat on the mat.",
...                                  "The cat sat on the mat.",
...                                  "My grandmother bakes bread every Sunday morning."],
...                      model_type="minilm", use_aggregator=False)
>>> [round(s, 2) for s in out["me_petersen"]]
[1.0, 0.56, 0.99, 0.0]
""",
    inputs=module_inputs(
    """model_type (str): encoder: Hub id, local folder or offline short name "minilm" (default
        "textattack/bert-base-uncased-MNLI").
    k (int): neighbours per hypersphere (default 1, as the examination).
    layers (int): how many of the last hidden states give vectors (default 5, as the examination).""",
    """    me_petersen: in [0, 1], higher is better; 1 for identical texts, 0 when no vector of
        either text falls inside the other's hyperspheres."""),
    citation="""\
@inproceedings{mordido-meinel-2020-mark,
    title = "Mark-Evaluate: Assessing Language Generation using Population Estimation Methods",
    author = "Mordido, Gon{\\c{c}}alo and Meinel, Christoph",
    booktitle = "Proceedings of COLING 2020",
    year = "2020",
}
""",
    sections="""\
## Metric description
Mark-Evaluate Petersen (Mordido & Meinel, 2020) applied to a candidate-reference pair, as the
examination of BERTScore, BLEURT, NUBIA, MoverScore and Mark-Evaluate did (its code, LazerLambda/ME):
the two texts' sets of contextual token vectors (each text encoded alone without [CLS]/[SEP], every
token once in each of the last five layers) are the population; a vector is captured when it lies in a
k-nearest-neighbour hypersphere of the other set; the Petersen estimate `N_hat = M * C / R` (marked
`M = |S| + a`, captured `C = |S'| + b`, recaptured `R = a + b`, with `a` and `b` the vectors of each
set inside the other's spheres) is compared with the known size `N = |S| + |S'|`:
`score = 1 - min(1, |N_hat - N| / N)`; `layers=1` reads the last layer only.

The implementation is written from the paper and the facts of the examination's code (LazerLambda/ME), whose outputs it reproduces (tests/test_reference_models.py); it uses no code of theirs.

## How to use
```python
import evaluate
metric = evaluate.load("blindspot/mark_evaluate")
metric.compute(predictions=["The cat sat on the mat."], references=["The cat is on the mat."], model_type="minilm")
metric.compute(predictions=[...], references=[...], use_aggregator=False)  # per-row lists
```
Offline: model_type="minilm". In a blind-spot run: `blindspot run --data demo --metrics mark_evaluate@minilm`.

## Output
```
me_petersen: in [0, 1], higher is better; 1 for identical texts, 0 when no vector of
        either text falls inside the other's hyperspheres.
```

## Paper default and variants
The examination used k = 1 and BERT-base fine-tuned on MNLI; Mordido & Meinel's release embeds whole sentences with an SBERT model to compare corpora. The estimate reaches N whenever every vector is captured, so on short texts (few vectors, wide spheres) the score saturates near 1.

## Blind spots the papers found
The examination: ME-P is the most sensitive to word order (0.47 at the first level of word swaps, 0.01 for a random permutation) and to word drop and repetition, yet no metric, ME-P included, falls for negation.
""",  # noqa: E501
    requirements=("bert-score==0.3.13", "scipy", "torch", "transformers"),
)


@register_scorer
class MarkEvaluatePetersen(LayerVectorScorer):
    """ME-Petersen of each hypothesis against each reference, averaged over references."""

    name = "mark_evaluate"
    card = _MARK_EVALUATE_CARD
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
