"""Word vectors: what the static-embedding metrics (Embedding Average, Vector Extrema, Greedy
Matching, WMD, Sentence Mover's Similarity) compare. Two kinds of table serve (``model_type``):

A text's words are NLTK's ``word_tokenize`` tokens, as Sharma et al.'s nlg-eval splits them
(the code of Sai et al.'s (2021) numbers for these metrics). Two kinds of table give their vectors:

* **a word table**, sentence-transformers' ``WordEmbeddings`` layout (a ``0_WordEmbeddings``
  folder: ``whitespacetokenizer_config.json`` with the vocabulary, the matrix as
  ``emb_layer.weight`` in ``model.safetensors`` or ``pytorch_model.bin``). The default,
  ``sentence-transformers/average_word_embeddings_glove.6B.300d``, is GloVe 6B 300d, nlg-eval's
  table (Fabbri et al.'s code for WMD and SMS used GloVe too). A word is looked up lower-cased
  when the table's tokenizer is (nlg-eval looks words up as they are written, so a capitalised
  word misses GloVe's lower-cased vocabulary there); a word outside the vocabulary gets the mean
  of all vectors (nlg-eval's rule). It needs the Hub once (or a local folder of that layout).
* **an encoder's input embedding table** (any other model; offline: ``minilm``, MiniLM's
  30,522 x 384 word-piece table): a word's vector is the mean of the table rows of the word
  pieces the encoder's tokenizer splits it into, so no word is out of vocabulary. The table is
  static: a word has one vector whatever its context, as GloVe's has.

For an encoder, the model object is the one BERTScore and MoverScore load (:func:`load_bertscore_encoder` at
its last layer), so a run with ``moverscore@minilm`` beside these metrics holds one copy.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from blindspot.models import load_bertscore_encoder, load_bertscore_tokenizer, model_revision, resolve_model
from blindspot.scorers._encoders import layer_count, unavailable
from blindspot.scoring.scorer import ScoreInput, Scorer

#: GloVe 6B 300d in sentence-transformers' word-table layout (nlg-eval's table)
DEFAULT_MODEL = "sentence-transformers/average_word_embeddings_glove.6B.300d"
#: the folder of a word table inside a sentence-transformers model
WORD_TABLE_FOLDER = "0_WordEmbeddings"


def word_table_folder(path: str) -> Path | None:
    """The ``0_WordEmbeddings`` folder of a local folder or Hub id in the word-table layout
    (fetched from the Hub when it is not local), or None for any other model (an encoder); a Hub
    id that cannot be fetched is a :class:`ModelNotAvailableError` naming the offline models."""
    folder = Path(path)
    if not folder.is_dir():
        from huggingface_hub import snapshot_download  # lazy: the Hub client, model edge

        try:
            folder = Path(snapshot_download(path, allow_patterns=[f"{WORD_TABLE_FOLDER}/*"]))
        except Exception as error:  # noqa: BLE001 (offline, an unknown id...: said in one line)
            raise unavailable(path, f"{type(error).__name__}: {str(error)[:160]}") from error
    for candidate in (folder / WORD_TABLE_FOLDER, folder):
        if (candidate / "whitespacetokenizer_config.json").is_file():
            return candidate
    return None


@dataclass(frozen=True)
class WordTable:
    """A word table: vocabulary index, (words, dim) matrix, lower-casing."""

    index: dict[str, int]
    matrix: Any
    lower: bool

    @classmethod
    def load(cls, folder: Path) -> WordTable:
        import torch

        config = json.loads((folder / "whitespacetokenizer_config.json").read_text("utf-8"))
        if (folder / "model.safetensors").is_file():
            from safetensors.torch import load_file

            weights = load_file(str(folder / "model.safetensors"))
        else:
            weights = torch.load(folder / "pytorch_model.bin", map_location="cpu",
                                 weights_only=True)
        matrix = weights["emb_layer.weight"].double().numpy()
        index = {word: i for i, word in enumerate(config["vocab"])}
        return cls(index, matrix, bool(config.get("do_lower_case", False)))

    def lookup(self, words: Sequence[str]) -> Words:
        """Given words and their rows (lower-cased when the table is); a word outside the
        vocabulary gets the mean of all rows."""
        import numpy as np

        unknown = self.matrix.mean(axis=0)
        rows = [self.matrix[self.index[key]] if key in self.index else unknown
                for key in ((w.lower() if self.lower else w) for w in words)]
        return Words(tuple(words), np.array(rows, dtype=np.float64).reshape(
            len(words), self.matrix.shape[1]))


@dataclass(frozen=True)
class Words:
    """A text's words and their vectors: ``vectors`` is a (words, dim) float64 array."""

    words: tuple[str, ...]
    vectors: Any

    @property
    def empty(self) -> bool:
        return not self.words


class WordVectors:
    """The word vectors of a word table or of an encoder's input embedding table (loaded on
    first use)."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._table: Any = None
        self._word_table: WordTable | None = None
        self._kind: str | None = None

    def word_table(self) -> WordTable | None:
        """The word table, or None when the model is an encoder."""
        if self._kind is None:
            folder = word_table_folder(self.path)
            self._kind = "encoder" if folder is None else "table"
            if folder is not None:
                self._word_table = WordTable.load(folder)
        return self._word_table

    def tokenizer(self) -> Any:
        return load_bertscore_tokenizer(self.path, use_fast=True)

    def table(self) -> Any:
        """The (vocabulary, dim) input embedding matrix as a float64 numpy array."""
        if self._table is None:
            model = load_bertscore_encoder(self.path, layer_count(self.path))
            self._table = model.get_input_embeddings().weight.detach().cpu().double().numpy()
        return self._table

    def lookup(self, words: Sequence[str]) -> Words:
        """Given words (already split) and their vectors: a word table's rows, or the mean of
        the table rows of each word's pieces."""
        import numpy as np

        word_table = self.word_table()
        if word_table is not None:
            return word_table.lookup(words)
        table = self.table()
        pieces = self.tokenizer()(list(words), add_special_tokens=False)["input_ids"] if words \
            else []
        unknown = [self.tokenizer().unk_token_id]
        rows = [table[ids or unknown].mean(axis=0) for ids in pieces]
        return Words(tuple(words), np.array(rows, dtype=np.float64).reshape(len(words),
                                                                            table.shape[1]))

    def words(self, texts: Sequence[str]) -> dict[str, Words]:
        """Each distinct text's words (NLTK's ``word_tokenize``, as nlg-eval splits them) and
        their vectors (:meth:`lookup`)."""
        import nltk  # lazy: importing nltk takes seconds

        return {text: self.lookup(nltk.word_tokenize(text)) for text in dict.fromkeys(texts)}


class WordVectorScorer(Scorer):
    """Base of the metrics that compare hypothesis and reference word vectors, one reference at
    a time; several references are averaged (the project's rule; nlg-eval keeps the best)."""

    model_option = "model_type"
    uses_references = "required"
    version = "2"
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


def module_inputs(returns: str) -> str:
    """The ``Args``/``Returns`` text of a word-vector metric's evaluate module (``returns``: its
    outputs, indented as they appear under ``Returns:``)."""
    return f"""
Args:
    predictions (list of str): hypotheses.
    references (list of str or list of list of str): one or several references per hypothesis
        (several are averaged).
    model_type (str): the word vectors: a word table in sentence-transformers' layout (default
        "{DEFAULT_MODEL}", GloVe 6B 300d, as the
        papers), or any encoder, whose input embedding table serves ("minilm" offline).
    use_aggregator (bool): mean over rows (default) or per-row lists.
Returns:
{returns}
"""


def cosine(a: Any, b: Any) -> float:
    """Cosine of two vectors; 0 when either is the zero vector."""
    import numpy as np

    norms = float(np.linalg.norm(a) * np.linalg.norm(b))
    return float(np.dot(a, b) / norms) if norms > 0 else 0.0
