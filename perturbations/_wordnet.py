"""NLTK's WordNet reader as the perturbations use it: English WordNet 3.0, loaded once per process.

NLTK's ``WordNetCorpusReader`` builds, in its constructor, a synset map from WordNet 3.0 to the
loaded version (``map_wn``: ``index.sense`` read twice, 3 of its 5 seconds here). It builds it even
when the loaded WordNet is 3.0 itself (it compares the version "3.0" with the corpus name
"wordnet"), and only the Open Multilingual Wordnet's other languages read it: synsets, lemmas and
relations in English never do. :class:`EnglishWordNetReader` leaves that map out.
"""

from __future__ import annotations

import nltk
from nltk.corpus import LazyCorpusLoader
from nltk.corpus.reader import CorpusReader
from nltk.corpus.reader.wordnet import WordNetCorpusReader

from blindspot.assets.wordnet import install_wordnet


class EnglishWordNetReader(WordNetCorpusReader):
    """``WordNetCorpusReader`` without the 3.0-to-3.0 synset map (``map30`` is None)."""

    def map_wn(self, version: str = "wordnet") -> dict[str, str] | None:
        return None if version == "wordnet" else super().map_wn(version)


def load_wordnet() -> EnglishWordNetReader:
    """The reader over the offline copy (assembled, or repaired, first), made
    ``nltk.corpus.wordnet`` too: ``pattern`` (CheckList's negation) reads that name at import,
    and so shares this one load instead of making its own."""
    install_wordnet()  # a no-op when the copy is complete and correct
    try:
        root = nltk.data.find("corpora/wordnet")
    except LookupError:
        raise RuntimeError("WordNet is not installed for NLTK; run `python -m blindspot.assets`"
                           ) from None
    # the multilingual data NLTK's own loader names (lazy: read only if another language is asked)
    multilingual = LazyCorpusLoader("omw-2.0", CorpusReader, r".*/wn-data-.*\.tab", encoding="utf8")
    reader = EnglishWordNetReader(root, multilingual)
    nltk.corpus.wordnet = reader
    return reader
