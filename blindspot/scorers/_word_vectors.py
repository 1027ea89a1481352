"""Word vectors from an encoder's input embedding table: what the static-embedding metrics
(Embedding Average, Vector Extrema, Greedy Matching, WMD, Sentence Mover's Similarity) compare.

Sai et al. (2021) ran these metrics with GloVe vectors (Sharma et al.'s nlg-eval for the first
three, Fabbri et al.'s SummEval code for WMD and SMS). GloVe ships in no package here, so a word's
vector is read from the input embedding table of any encoder (``model_type``; offline: MiniLM's
30,522 x 384 word-piece table): the text is split into words by the encoder's own fast tokenizer
(BERT's splits on whitespace and punctuation, lower-cases for uncased models) and a word's vector
is the mean of the table rows of its word pieces, so no word is out of vocabulary (nlg-eval gives
GloVe's unknown words the mean vector instead). The table is static: a word has one vector
whatever its context, as GloVe's has.

The encoder object is the one BERTScore and MoverScore load (:func:`load_bertscore_encoder` at
its last layer), so a run with ``moverscore@minilm`` beside these metrics holds one copy.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from blindspot.models import load_bertscore_encoder, load_bertscore_tokenizer, model_revision, resolve_model
from blindspot.scorers._encoders import layer_count
from blindspot.scoring.base import ScoreInput, Scorer

#: offline default: GloVe, the papers' table, is no transformers checkpoint (see the modules' cards)
DEFAULT_MODEL = "minilm"


@dataclass(frozen=True)
class Words:
    """A text's words and their vectors: ``vectors`` is a (words, dim) float64 array."""

    words: tuple[str, ...]
    vectors: Any

    @property
    def empty(self) -> bool:
        return not self.words


class WordVectors:
    """The word vectors of a checkpoint's input embedding table (loaded on first use)."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._table: Any = None

    def tokenizer(self) -> Any:
        return load_bertscore_tokenizer(self.path, use_fast=True)

    def table(self) -> Any:
        """The (vocabulary, dim) input embedding matrix as a float64 numpy array."""
        if self._table is None:
            model = load_bertscore_encoder(self.path, layer_count(self.path))
            self._table = model.get_input_embeddings().weight.detach().cpu().double().numpy()
        return self._table

    def words(self, texts: Sequence[str]) -> dict[str, Words]:
        """Each distinct text's words and vectors (the mean of each word's piece rows)."""
        import numpy as np

        tokenizer, table = self.tokenizer(), self.table()
        unique = list(dict.fromkeys(texts))
        out: dict[str, Words] = {}
        if not unique:
            return out
        encoded = tokenizer(unique, add_special_tokens=False, truncation=False,
                            return_offsets_mapping=True)
        for row, text in enumerate(unique):
            ids = encoded["input_ids"][row]
            offsets = encoded["offset_mapping"][row]
            groups: dict[int, list[int]] = {}
            for position, word in enumerate(encoded.word_ids(row)):
                if word is not None:
                    groups.setdefault(word, []).append(position)
            words, vectors = [], []
            for positions in groups.values():
                start, end = offsets[positions[0]][0], offsets[positions[-1]][1]
                words.append(text[start:end])
                vectors.append(table[[ids[p] for p in positions]].mean(axis=0))
            array = np.array(vectors, dtype=np.float64).reshape(len(vectors), table.shape[1])
            out[text] = Words(tuple(words), array)
        return out


class WordVectorScorer(Scorer):
    """Base of the metrics that compare hypothesis and reference word vectors, one reference at
    a time; several references are averaged (the project's rule; nlg-eval keeps the best)."""

    model_option = "model_type"
    uses_references = "required"
    version = "1"
    default_batch_size = 256
    #: the metric's outputs for one (hypothesis, reference) pair
    outputs: tuple[str, ...]

    def __init__(self, model_type: str = DEFAULT_MODEL) -> None:
        path = resolve_model(model_type)
        super().__init__(model_type=path)
        self._vectors = WordVectors(path)

    def model_revision(self) -> str:
        return model_revision(self.config["model_type"])

    def word_vectors(self) -> WordVectors:
        return self._vectors

    def pair(self, hypothesis: Words, reference: Words) -> dict[str, float]:
        """The outputs for one hypothesis against one reference."""
        raise NotImplementedError

    def score_batch(self, batch: Sequence[ScoreInput]) -> list[dict[str, float]]:
        texts = [item.hypothesis for item in batch]
        texts += [ref for item in batch for ref in item.references]
        words = self.word_vectors().words(texts)
        rows = []
        for item in batch:
            pairs = [self.pair(words[item.hypothesis], words[ref]) for ref in item.references]
            rows.append({key: sum(p[key] for p in pairs) / len(pairs) for key in self.outputs})
        return rows


def cosine(a: Any, b: Any) -> float:
    """Cosine of two vectors; 0 when either is the zero vector."""
    import numpy as np

    norms = float(np.linalg.norm(a) * np.linalg.norm(b))
    return float(np.dot(a, b) / norms) if norms > 0 else 0.0
