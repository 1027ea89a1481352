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

from blindspot.scorers._word_vectors import Words, WordVectorScorer, cosine, module_inputs
from blindspot.scoring.card import ModuleCard
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


_EMBEDDING_AVERAGE_CARD = ModuleCard(
    title="Embedding Average", emoji="📐",
    summary=("cosine of the mean word vectors of hypothesis and reference (Sai et al.'s EAvg, "
             "nlg-eval's definition), on blindspot's cached scoring layer."),
    description="""\
Embedding Average on blindspot's cached scoring layer.

Embedding Average (Landauer & Dumais, 1997), as Sharma et al.'s nlg-eval computes it and Sai et al.
(2021) ran it: each text is the mean of its word vectors, and the score is the cosine of the two
means.

Runs offline on MiniLM (``model_type="minilm"``, its input embeddings as word vectors). Several
references per hypothesis are averaged. See ``blindspot/scorers/`` for every choice and why.""",
    examples="""\
>>> import evaluate
>>> metric = evaluate.load("blindspot/embedding_average")
>>> out = metric.compute(predictions=["The cat chased the dog.", "Stocks fell sharply."],
...                      references=["The dog chased the cat.", "Markets dropped today."],
...                      model_type="minilm", use_aggregator=False)
>>> [round(s, 2) for s in out["embedding_average"]]
[1.0, 0.4]
""",
    inputs=module_inputs(
    """    embedding_average: cosine in [-1, 1], higher is better; 1 for identical texts."""),
    citation="""\
@article{landauer1997solution,
    title = "A solution to {P}lato's problem: The latent semantic analysis theory of acquisition, induction, and representation of knowledge",
    author = "Landauer, Thomas K. and Dumais, Susan T.",
    journal = "Psychological Review",
    volume = "104",
    number = "2",
    pages = "211--240",
    year = "1997",
}
""",  # noqa: E501
    sections="""\
## Metric description
Embedding Average (Landauer & Dumais, 1997), as Sharma et al.'s nlg-eval computes it and Sai et al.
(2021) ran it: each text is the mean of its word vectors, and the score is the cosine of the two
means.

The implementation is written from the papers' definitions; it uses no code of the authors'.

## How to use
```python
import evaluate
metric = evaluate.load("blindspot/embedding_average")
metric.compute(predictions=["The cat sat on the mat."], references=["The cat is on the mat."], model_type="minilm")
metric.compute(predictions=[...], references=[...], use_aggregator=False)  # per-row lists
```
Offline: model_type="minilm" (MiniLM's input embeddings as word vectors; the default, GloVe, needs the Hub once). In a blind-spot run: `blindspot run --data demo --metrics embedding_average@minilm`.

## Output
```
embedding_average: cosine in [-1, 1], higher is better; 1 for identical texts.
```

## Paper default and variants
Sai et al. used nlg-eval with GloVe 6B 300d vectors; several references kept the maximum (the mean here, the project's rule). The default table is GloVe 6B 300d as sentence-transformers publishes it (`sentence-transformers/average_word_embeddings_glove.6B.300d`, fetched from the Hub once); the words are NLTK's `word_tokenize` tokens (nlg-eval's), looked up lower-cased, and a word outside GloVe's vocabulary gets the mean vector (nlg-eval's rule). Any encoder's input embedding table serves as well (`model_type`, e.g. `minilm` offline), a word's vector being the mean of its word pieces' rows.

## Blind spots the papers found
Sai et al. (2021): Embedding Average and Greedy Matching are quite robust to numbers written as words, an important criterion in data-to-text. By construction (a mean of word vectors) the score cannot see word order: a jumbled sentence scores as the original.
""",  # noqa: E501
    requirements=("bert-score==0.3.13", "torch", "transformers"),
)


@register_scorer
class EmbeddingAverage(CosineMetric):
    """Cosine of the hypothesis' and the reference's mean word vectors."""

    name = "embedding_average"
    card = _EMBEDDING_AVERAGE_CARD
    outputs = ("embedding_average",)
    compare = staticmethod(average_cosine)


_VECTOR_EXTREMA_CARD = ModuleCard(
    title="Vector Extrema", emoji="📏",
    summary=("cosine of the extrema vectors (per dimension, the word value of largest magnitude) "
             "of hypothesis and reference, on blindspot's cached scoring layer."),
    description="""\
Vector Extrema on blindspot's cached scoring layer.

Vector Extrema (Forgues et al., 2014), as nlg-eval computes it: each text is the vector whose every
dimension is the word value of largest magnitude in that dimension (the maximum, or the minimum
when its absolute value is larger); the score is the cosine of the two.

Runs offline on MiniLM (``model_type="minilm"``, its input embeddings as word vectors). Several
references per hypothesis are averaged. See ``blindspot/scorers/`` for every choice and why.""",
    examples="""\
>>> import evaluate
>>> metric = evaluate.load("blindspot/vector_extrema")
>>> out = metric.compute(predictions=["A man plays the guitar.", "It is raining."],
...                      references=["A person plays an instrument.",
...                                  "The sun is shining."],
...                      model_type="minilm", use_aggregator=False)
>>> [round(s, 2) for s in out["vector_extrema"]]
[0.61, 0.45]
""",
    inputs=module_inputs(
    """    vector_extrema: cosine in [-1, 1], higher is better; 1 for identical texts."""),
    citation="""\
@inproceedings{forgues2014bootstrapping,
    title = "Bootstrapping Dialog Systems with Word Embeddings",
    author = "Forgues, Gabriel and Pineau, Joelle and Larchev{\\^e}que, Jean-Marie and Tremblay, R{\\'e}al",
    booktitle = "NIPS Workshop on Modern Machine Learning and Natural Language Processing",
    year = "2014",
}
""",
    sections="""\
## Metric description
Vector Extrema (Forgues et al., 2014), as nlg-eval computes it: each text is the vector whose every
dimension is the word value of largest magnitude in that dimension (the maximum, or the minimum
when its absolute value is larger); the score is the cosine of the two.

The implementation is written from the papers' definitions; it uses no code of the authors'.

## How to use
```python
import evaluate
metric = evaluate.load("blindspot/vector_extrema")
metric.compute(predictions=["The cat sat on the mat."], references=["The cat is on the mat."], model_type="minilm")
metric.compute(predictions=[...], references=[...], use_aggregator=False)  # per-row lists
```
Offline: model_type="minilm" (MiniLM's input embeddings as word vectors; the default, GloVe, needs the Hub once). In a blind-spot run: `blindspot run --data demo --metrics vector_extrema@minilm`.

## Output
```
vector_extrema: cosine in [-1, 1], higher is better; 1 for identical texts.
```

## Paper default and variants
Sai et al. used nlg-eval with GloVe 6B 300d vectors. nlg-eval's choice keeps the minimum only when it is negative and its magnitude exceeds the maximum, and returns 0 for a dimension whose minimum is exactly 0; here a dimension keeps the value of largest magnitude (the maximum on a tie). The default table is GloVe 6B 300d as sentence-transformers publishes it (`sentence-transformers/average_word_embeddings_glove.6B.300d`, fetched from the Hub once); the words are NLTK's `word_tokenize` tokens (nlg-eval's), looked up lower-cased, and a word outside GloVe's vocabulary gets the mean vector (nlg-eval's rule). Any encoder's input embedding table serves as well (`model_type`, e.g. `minilm` offline), a word's vector being the mean of its word pieces' rows.

## Blind spots the papers found
Sai et al. (2021) include Vector Extrema among the embedding-based metrics of their checklists. By construction (per-dimension extremes over the words) the score cannot see word order, and one extreme word can dominate a dimension.
""",  # noqa: E501
    requirements=("bert-score==0.3.13", "torch", "transformers"),
)


@register_scorer
class VectorExtrema(CosineMetric):
    """Cosine of the hypothesis' and the reference's extrema vectors."""

    name = "vector_extrema"
    card = _VECTOR_EXTREMA_CARD
    outputs = ("vector_extrema",)
    compare = staticmethod(extrema_cosine)


_GREEDY_MATCHING_CARD = ModuleCard(
    title="Greedy Matching", emoji="🧲",
    summary=("each word matched to its most similar word of the other text (cosine of word "
             "vectors), averaged both ways, on blindspot's cached scoring layer."),
    description="""\
Greedy Matching on blindspot's cached scoring layer.

Greedy Matching (Rus & Lintean, 2012), as nlg-eval computes it: every word of one text is matched to
the word of the other text with the highest cosine; the mean of those best cosines is taken in
both directions and the score is their average.

Runs offline on MiniLM (``model_type="minilm"``, its input embeddings as word vectors). Several
references per hypothesis are averaged. See ``blindspot/scorers/`` for every choice and why.""",
    examples="""\
>>> import evaluate
>>> metric = evaluate.load("blindspot/greedy_matching")
>>> out = metric.compute(predictions=["The movie was great fun.", "He left early."],
...                      references=["The film was very enjoyable.", "She stayed late."],
...                      model_type="minilm", use_aggregator=False)
>>> [round(s, 2) for s in out["greedy_matching"]]
[0.74, 0.55]
""",
    inputs=module_inputs(
    """    greedy_matching: in [-1, 1], higher is better; 1 for identical texts."""),
    citation="""\
@inproceedings{rus-lintean-2012-comparison,
    title = "A Comparison of Greedy and Optimal Assessment of Natural Language Student Input Using Word-to-Word Similarity Metrics",
    author = "Rus, Vasile and Lintean, Mihai",
    booktitle = "Proceedings of the Seventh Workshop on Building Educational Applications Using {NLP}",
    pages = "157--162",
    year = "2012",
}
""",  # noqa: E501
    sections="""\
## Metric description
Greedy Matching (Rus & Lintean, 2012), as nlg-eval computes it: every word of one text is matched to
the word of the other text with the highest cosine; the mean of those best cosines is taken in
both directions and the score is their average.

The implementation is written from the papers' definitions; it uses no code of the authors'.

## How to use
```python
import evaluate
metric = evaluate.load("blindspot/greedy_matching")
metric.compute(predictions=["The cat sat on the mat."], references=["The cat is on the mat."], model_type="minilm")
metric.compute(predictions=[...], references=[...], use_aggregator=False)  # per-row lists
```
Offline: model_type="minilm" (MiniLM's input embeddings as word vectors; the default, GloVe, needs the Hub once). In a blind-spot run: `blindspot run --data demo --metrics greedy_matching@minilm`.

## Output
```
greedy_matching: in [-1, 1], higher is better; 1 for identical texts.
```

## Paper default and variants
Sai et al. used nlg-eval with GloVe 6B 300d vectors; several references kept the maximum (the mean here). The default table is GloVe 6B 300d as sentence-transformers publishes it (`sentence-transformers/average_word_embeddings_glove.6B.300d`, fetched from the Hub once); the words are NLTK's `word_tokenize` tokens (nlg-eval's), looked up lower-cased, and a word outside GloVe's vocabulary gets the mean vector (nlg-eval's rule). Any encoder's input embedding table serves as well (`model_type`, e.g. `minilm` offline), a word's vector being the mean of its word pieces' rows.

## Blind spots the papers found
Sai et al. (2021): Greedy Matching is quite robust to numbers written as words. By construction (each word matched on its own) the score cannot see word order.
""",  # noqa: E501
    requirements=("bert-score==0.3.13", "torch", "transformers"),
)


@register_scorer
class GreedyMatching(CosineMetric):
    """Greedy word-to-word cosine matching, averaged over both directions."""

    name = "greedy_matching"
    card = _GREEDY_MATCHING_CARD
    outputs = ("greedy_matching",)
    compare = staticmethod(greedy_matching)
