"""What the perturbation-checklist tests (Sai et al., EMNLP 2021) share: their category, paper,
levels, word choice on a parse, and WordNet look-ups (synonyms, antonyms, siblings).

WordNet comes from NLTK's reader over the offline copy that ``python -m blindspot.assets``
assembles; candidate lists are sorted so a row's result depends only on its random stream.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable
from functools import lru_cache
from typing import Any

from blindspot.parsing import ParsedText, Token
from blindspot.perturbations._fluency_edits import every_task
from blindspot.perturbations.text_utils import match_case, replace_spans

CATEGORY = "checklist"
PAPER = "Sai et al. 2021, Perturbation CheckLists for Evaluating NLG Evaluation Metrics"
#: one level ("-") on every task of the blind-spots catalogue
NO_LEVEL = every_task(("-",))
#: spaCy coarse POS -> WordNet POS
WORDNET_POS = {"NOUN": "n", "VERB": "v", "ADJ": "a", "ADV": "r"}


@lru_cache(maxsize=1)
def checklist_perturb() -> Any:
    """CheckList's ``Perturb`` (a multi-second import), imported once per process on first use.

    Its import loads WordNet through ``pattern``, which reads ``nltk.corpus.wordnet``: that is
    :func:`wordnet`'s reader, loaded first, so the process loads WordNet once, and quickly."""
    wordnet()
    from checklist.perturb import Perturb

    return Perturb


@lru_cache(maxsize=1)
def wordnet() -> Any:
    """NLTK's WordNet reader over the offline copy, loaded once per process
    (:func:`blindspot.perturbations._wordnet.load_wordnet`)."""
    from blindspot.perturbations._wordnet import load_wordnet  # lazy: importing nltk takes seconds

    return load_wordnet()


def _single_words(names: Iterable[str], exclude: str) -> list[str]:
    """Sorted distinct one-word lemma names other than ``exclude`` (case-insensitive)."""
    words = {n.lower() for n in names if n.isalpha()}
    words.discard(exclude.lower())
    return sorted(words)


@lru_cache(maxsize=20_000)
def synonyms(lemma: str, pos: str) -> tuple[str, ...]:
    """One-word synonyms of ``lemma`` in its most frequent WordNet sense (first synset)."""
    synsets = wordnet().synsets(lemma, pos=pos)
    if not synsets:
        return ()
    return tuple(_single_words((lem.name() for lem in synsets[0].lemmas()), lemma))


@lru_cache(maxsize=20_000)
def antonyms(lemma: str, pos: str) -> tuple[str, ...]:
    """One-word WordNet antonyms of ``lemma`` over all its senses of that POS."""
    names = (a.name() for s in wordnet().synsets(lemma, pos=pos) for lem in s.lemmas()
             if lem.name().lower() == lemma.lower() for a in lem.antonyms())
    return tuple(_single_words(names, lemma))


@lru_cache(maxsize=20_000)
def siblings(lemma: str, pos: str) -> tuple[str, ...]:
    """Co-hyponyms ("hyponyms of hypernyms", Sai et al. App. B) of the first sense of ``lemma``.

    Adjectives have no hypernyms in WordNet: a satellite adjective's siblings are the other
    satellites of its head (red -> green, both "similar to" chromatic); a head adjective (small)
    has none here, so the row is not applied rather than given a near-synonym.
    """
    synsets = wordnet().synsets(lemma, pos=pos)
    if not synsets:
        return ()
    first = synsets[0]
    own = {lem.name().lower() for lem in first.lemmas()}
    if pos in ("a", "s"):
        parents = first.similar_tos() if first.pos() == "s" else []
        kin = [s for p in parents for s in p.similar_tos() if s != first]
    else:
        kin = [s for p in first.hypernyms() for s in p.hyponyms() if s != first]
    names = (lem.name() for s in kin for lem in s.lemmas())
    return tuple(w for w in _single_words(names, lemma) if w not in own)


def inflect_like(token: Token, lemma: str) -> str:
    """``lemma`` inflected to the token's fine tag (plural nouns, past verbs...), cased like it."""
    # lazy: lemminflect imports spaCy, and spaCy torch (seconds), which `blindspot list` and the
    # catalogue never need
    from lemminflect import getInflection

    forms = getInflection(lemma, tag=token.tag) if token.tag else None
    word = forms[0] if forms else lemma
    return match_case(token.text, word)


def content_tokens(parsed: ParsedText, pos: Iterable[str]) -> list[Token]:
    """Alphabetic, non-stop-word tokens of the given coarse POS tags."""
    wanted = set(pos)
    return [t for t in parsed.tokens if t.pos in wanted and t.text.isalpha() and not t.is_stop]


def replace_one_word(parsed: ParsedText, rng: random.Random, pos: Iterable[str],
                     candidates: Callable[[str, str], tuple[str, ...]]) -> str | None:
    """Replace one uniformly chosen token (of ``pos``, having candidates) by a random candidate."""
    options = []
    for token in content_tokens(parsed, pos):
        words = candidates(token.lemma.lower(), WORDNET_POS[token.pos])
        if words:
            options.append((token, words))
    if not options:
        return None
    token, words = options[rng.randrange(len(options))]
    new = inflect_like(token, words[rng.randrange(len(words))])
    edits = [(token.idx, token.idx + len(token.text), new)]
    before = parsed.tokens[token.i - 1] if token.i > 0 else None
    if before is not None and before.text.lower() in ("a", "an") and before.i + 1 == token.i:
        article = "an" if new[:1].lower() in "aeiou" else "a"
        edits.append((before.idx, before.idx + len(before.text), match_case(before.text, article)))
    return replace_spans(parsed.text, edits)


def drop_tokens(parsed: ParsedText, drop: Callable[[Token], bool]) -> str | None:
    """The text without the tokens ``drop`` selects, each with the whitespace before it
    (or after it, at the start); None when nothing is dropped.

    Not :func:`~blindspot.perturbations._fluency_edits.remove_tokens`, on purpose: a gap before
    kept punctuation keeps its space and kept words keep their case ("The bank is willing to
    approve the loan." -> "The is to the ."; remove_tokens closes the gap, "The is to the.", and
    capitalises a kept word after a dropped sentence start).
    """
    pieces: list[str] = []
    dropped = False
    for token in parsed.tokens:
        if drop(token):
            dropped = True
            if pieces and not pieces[-1][-1:].isspace():
                pieces[-1] += token.ws
            continue
        pieces.append(token.text + token.ws)
    if not dropped:
        return None
    text = "".join(pieces)
    return text.rstrip() if parsed.text == parsed.text.rstrip() else text
