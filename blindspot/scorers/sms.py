"""Sentence Mover's Similarity (Clark et al., 2019): a text is a bag of sentences, each the
mean of its word vectors (:mod:`blindspot.scorers._word_vectors`) weighing its share of the
text's words; the score is ``exp(-EMD)`` between the hypothesis' and the reference's bags, the
Euclidean distance of the sentence vectors as the cost (POT's exact ``ot.emd2``).

``s_wms`` is the paper's S+WMS: one bag holding both the words (each distinct word weighing its
count over the word count) and the sentences, each kind carrying half of the mass, so a word
may be moved onto a sentence. Both are in (0, 1], 1 for identical texts, higher is better.

Sentences are spaCy's (``en_core_web_sm``, the project's cached parser); Clark et al. used GloVe
vectors and spaCy's sentence splitter too. A text without words is at distance 0 from another
such text and scores 0 against a text with words. Several references: the mean.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from blindspot.parsing import get_parser
from blindspot.scorers._word_vectors import Words, WordVectorScorer
from blindspot.scorers.wmd import bag, earth_movers_distance
from blindspot.scoring.scorer import ScoreInput, register_scorer


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


@register_scorer
class SentenceMoversSimilarity(WordVectorScorer):
    """SMS (sentences) and S+WMS (words and sentences); ``sms`` is judged."""

    name = "sms"
    outputs = ("sms", "s_wms")
    natural_ranges = {None: (0.0, 1.0)}

    def sentences(self, texts: Sequence[str]) -> dict[str, list[Words]]:
        """Each distinct text's sentences, as words with vectors."""
        unique = list(dict.fromkeys(texts))
        parsed = get_parser().parse_many(unique)
        split = {text: list(p.sentence_texts) for text, p in zip(unique, parsed, strict=True)}
        words = self.word_vectors().words([s for parts in split.values() for s in parts])
        return {text: [words[s] for s in parts] for text, parts in split.items()}

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
