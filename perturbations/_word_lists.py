"""Open-class word lists by part of speech, for the MENLI addition and mismatch attacks.

MENLI replaces a word "with another word having the same POS tag randomly selected from our
collected words for that POS tag" (after Chen et al. 2021) and does not publish the collection.
Ours is built offline from two files that ship with ``pattern``: Brill's lexicon
(``en-lexicon.txt``: each word's most likely Penn tag, learnt from the Brown corpus and the Penn
Treebank; Brill 1992) and pattern's frequency list (``en-frequency.txt``: about 12,000 frequent
English words). A word of the frequency list that is lower-case, alphabetic, at least three
letters long and not a spaCy stop word joins

- ``noun`` when its Brill tag is NN (singular common noun; plurals are made with lemminflect),
- ``adjective`` when its tag is JJ,
- ``verb`` (as its lemma, by lemminflect) when its tag is VB, VBD, VBG, VBN, VBP or VBZ, unless
  the lemma is a stop word or "shall" (auxiliaries are not content verbs).

That gives about 4,300 nouns, 1,800 adjectives and 1,100 verbs, kept in frequency order so a draw
depends only on the row's random stream. Words are inflected to the place they go with
lemminflect (the verb switching test's :func:`inflect`).
"""

from __future__ import annotations

import random
from functools import lru_cache

from blindspot.parsing import Token
from blindspot.perturbations.text_utils import match_case
from blindspot.perturbations.verb_switching import VERB_TAGS, inflect
from blindspot.pkgpath import package_dir

_BRILL_TAGS = {"noun": frozenset({"NN"}), "adjective": frozenset({"JJ"}), "verb": VERB_TAGS}
_NOT_CONTENT_VERBS = frozenset({"shall"})
_DRAWS = 20


def _pattern_file(name: str) -> list[str]:
    root = package_dir("pattern")
    if root is None:
        raise RuntimeError("the MENLI word lists need the 'pattern' package (patternfork-nosql-fix); "
                           "install the requirements (make env)")
    with open(root / "text" / "en" / name, encoding="utf-8") as handle:
        return handle.read().splitlines()


@lru_cache(maxsize=1)
def brill_tags() -> dict[str, str]:
    """Brill's lexicon: word -> its most likely Penn tag."""
    tags: dict[str, str] = {}
    for line in _pattern_file("en-lexicon.txt"):
        parts = line.split()
        if len(parts) >= 2 and not line.startswith(";;;"):
            tags.setdefault(parts[0], parts[1])
    return tags


@lru_cache(maxsize=3)
def word_list(pos: str) -> tuple[str, ...]:
    """The ``noun``, ``adjective`` or ``verb`` list (frequency order, no duplicates)."""
    from lemminflect import getLemma
    from spacy.lang.en.stop_words import STOP_WORDS

    if pos not in _BRILL_TAGS:
        raise ValueError(f"unknown word list {pos!r}; choose one of {sorted(_BRILL_TAGS)}")
    tags = brill_tags()
    words: list[str] = []
    for line in _pattern_file("en-frequency.txt"):
        word = line.split(" ", 1)[0]
        if not (word.isalpha() and word.islower() and len(word) > 2) or word in STOP_WORDS:
            continue
        if tags.get(word) not in _BRILL_TAGS[pos]:
            continue
        if pos == "verb":
            word = (getLemma(word, upos="VERB") or (word,))[0]
            if word in STOP_WORDS or word in _NOT_CONTENT_VERBS or not word.isalpha():
                continue
        words.append(word)
    return tuple(dict.fromkeys(words))


def random_word(pos: str, place: Token, rng: random.Random) -> str | None:
    """A random word of list ``pos`` inflected to ``place``'s tag and cased like it.

    Never the word of ``place`` itself (same lemma); None when a few draws find no inflection.
    """
    words = word_list(pos)
    for _ in range(_DRAWS):
        word = rng.choice(words)
        if word == place.lemma.lower() or word == place.text.lower():
            continue
        form = word if place.tag in ("NN", "JJ") else inflect(word, place.tag)
        if form:
            return match_case(place.text, form)
    return None
