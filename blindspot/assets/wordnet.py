"""Assemble NLTK's ``wordnet`` corpus from the WordNet 3.0 files that ship inside ``pattern``.

NLTK's downloader cannot reach its servers here. ``pattern`` carries the same WordNet 3.0
dictionary, with ``data.noun`` split in two parts; NLTK also wants the ``*.exc`` exception lists,
a ``wordnet_ic`` file pattern reads at import, and a ``sentiwordnet`` folder.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

from blindspot.pkgpath import package_dir

_POS = ("noun", "verb", "adj", "adv")
# pattern reads one information-content file at import; an empty one crashes it.
_IC_STUB = "wnver::eOS9lXC6GvMWznF1wkZofDdtbBU\n1740n 1.0 ROOT\n1740v 1.0 ROOT\n"


def nltk_data_dir() -> Path:
    """``sys.prefix/nltk_data``: NLTK searches it by itself, no environment variable needed."""
    return Path(sys.prefix) / "nltk_data"


def _pattern_dict() -> Path:
    root = package_dir("pattern")
    if root is None:
        raise RuntimeError("package 'pattern' (patternfork-nosql-fix) is not installed; run make env")
    return root / "text" / "en" / "wordnet" / "dict"


def _joined_noun_data(source: Path) -> bytes:
    """``data.noun`` from pattern's two parts: the first part lacks its final newline, and
    WordNet's synset offsets are byte offsets, so without it every synset of the second part
    is one byte off (``No WordNet synset found for pos=n at offset=...``)."""
    parts = sorted(p for p in source.iterdir() if p.name.startswith("data.noun"))
    chunks = [part.read_bytes() for part in parts]
    return b"".join(c if c.endswith(b"\n") else c + b"\n" for c in chunks)


def install_wordnet(target: Path | None = None) -> Path:
    """Write ``corpora/wordnet`` (and its companions) under ``target``; returns the wordnet folder."""
    root = target or nltk_data_dir()
    wordnet = root / "corpora" / "wordnet"
    source = _pattern_dict()
    noun = _joined_noun_data(source)
    done = (wordnet / "data.noun").exists() and (wordnet / "index.sense").exists()
    if done and (wordnet / "data.noun").stat().st_size == len(noun):
        return wordnet
    wordnet.mkdir(parents=True, exist_ok=True)
    for path in source.iterdir():
        if path.is_file() and not path.name.startswith("data.noun"):
            shutil.copyfile(path, wordnet / path.name)
    partial = wordnet / f".data.noun.{os.getpid()}.tmp"
    partial.write_bytes(noun)
    os.replace(partial, wordnet / "data.noun")  # readers in other processes never see a part
    for pos in _POS:
        exc = wordnet / f"{pos}.exc"
        if not exc.exists():
            exc.write_text("")
    if not (wordnet / "lexnames").exists():
        (wordnet / "lexnames").write_text("")
    ic = root / "corpora" / "wordnet_ic"
    ic.mkdir(parents=True, exist_ok=True)
    (ic / "ic-brown.dat").write_text(_IC_STUB)
    (root / "corpora" / "sentiwordnet").mkdir(parents=True, exist_ok=True)
    return wordnet
