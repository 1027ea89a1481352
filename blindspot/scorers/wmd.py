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

from blindspot.scorers._word_vectors import Words, WordVectorScorer, module_inputs
from blindspot.scoring.card import ModuleCard
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


_WMD_CARD = ModuleCard(
    title="Word Mover's Distance", emoji="🚛",
    summary=("word mover's distance between the word bags of hypothesis and reference, and its "
             "similarity exp(-WMD), on blindspot's cached scoring layer."),
    description="""\
Word Mover's Distance on blindspot's cached scoring layer.

Word Mover's Distance (Kusner et al., 2015): each text is a normalised bag of words (each distinct
word weighs its count over the word count); WMD is the earth mover's distance between the two bags
with the Euclidean distance of the word vectors as the cost, solved exactly (POT's `ot.emd2`).
`wms` is the similarity `exp(-wmd)` (Clark et al., 2019), the form Fabbri et al.'s SummEval code,
which Sai et al. ran, reports.

Runs offline on MiniLM (``model_type="minilm"``, its input embeddings as word vectors). Several
references per hypothesis are averaged. See ``blindspot/scorers/`` for every choice and why.""",
    examples="""\
>>> import evaluate
>>> metric = evaluate.load("blindspot/wmd")
>>> out = metric.compute(predictions=["The cat sat on the mat.", "Stocks fell sharply.",
...                                   "A dog barks. It is loud."],
...                      references=["The cat sat on the mat.", "Markets dropped today.",
...                                  "The dog barks loudly. Neighbours woke up."],
...                      model_type="minilm", use_aggregator=False)
>>> [round(s, 2) for s in out["wms"]]
[1.0, 0.32, 0.49]
""",
    inputs=module_inputs(
    """    wms: exp(-wmd) in (0, 1], higher is better (judged by blindspot); wmd: the distance, >= 0,
        lower is better (NaN when exactly one of the texts has no word)."""),
    citation="""\
@inproceedings{kusner2015wmd,
    title = "From Word Embeddings To Document Distances",
    author = "Kusner, Matt and Sun, Yu and Kolkin, Nicholas and Weinberger, Kilian",
    booktitle = "Proceedings of ICML 2015",
    year = "2015",
}
""",
    sections="""\
## Metric description
Word Mover's Distance (Kusner et al., 2015): each text is a normalised bag of words (each distinct
word weighs its count over the word count); WMD is the earth mover's distance between the two bags
with the Euclidean distance of the word vectors as the cost, solved exactly (POT's `ot.emd2`).
`wms` is the similarity `exp(-wmd)` (Clark et al., 2019), the form Fabbri et al.'s SummEval code,
which Sai et al. ran, reports.

The implementation is written from the papers' definitions; it uses no code of the authors'.

## How to use
```python
import evaluate
metric = evaluate.load("blindspot/wmd")
metric.compute(predictions=["The cat sat on the mat."], references=["The cat is on the mat."], model_type="minilm")
metric.compute(predictions=[...], references=[...], use_aggregator=False)  # per-row lists
```
Offline: model_type="minilm" (MiniLM's input embeddings as word vectors; the default, GloVe, needs the Hub once). In a blind-spot run: `blindspot run --data demo --metrics wmd@minilm`.

## Output
```
wms: exp(-wmd) in (0, 1], higher is better (judged by blindspot); wmd: the distance, >= 0,
        lower is better (NaN when exactly one of the texts has no word).
```

## Paper default and variants
Sai et al. ran WMD through Fabbri et al.'s code with GloVe vectors; Kusner et al. removed stop words, which is not done here. The default table is GloVe 6B 300d as sentence-transformers publishes it (`sentence-transformers/average_word_embeddings_glove.6B.300d`, fetched from the Hub once); the words are NLTK's `word_tokenize` tokens (nlg-eval's), looked up lower-cased, and a word outside GloVe's vocabulary gets the mean vector (nlg-eval's rule). Any encoder's input embedding table serves as well (`model_type`, e.g. `minilm` offline), a word's vector being the mean of its word pieces' rows.

## Blind spots the papers found
Sai et al. (2021) include WMD among the embedding-based metrics of their checklists. By construction (a transport between bags of words) it cannot see word order.
""",  # noqa: E501
    requirements=("bert-score==0.3.13", "torch", "transformers", "pot", "scipy"),
)


@register_scorer
class WordMoversDistance(WordVectorScorer):
    """WMD and its similarity ``exp(-WMD)``; ``wms`` is judged (higher is better)."""

    name = "wmd"
    card = _WMD_CARD
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
