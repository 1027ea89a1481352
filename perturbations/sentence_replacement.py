"""Sentence replacement (blind-spots paper, consistency; Table 16 "Sentence Replacement").

K random sentences of the hypothesis are replaced by random sentences of the gold hypotheses of
the same dataset (the ``pool`` resource: every gold text of the dataset), so the text keeps its
fluency but says something irrelevant. The algorithm is the release's (``con-replacesent`` of
github.com/cloudygoose/blindspot_nlg), written anew:

- min(K, n) of the text's n sentences are drawn uniformly without replacement, so a text of K
  sentences or fewer is replaced whole;
- each gets a sentence drawn uniformly from every sentence of every pool text (a sentence that
  occurs in several pool texts is that many times more likely), drawn again while the draw
  occurs in the original text (a substring of it: its own sentences, among others); two
  replaced sentences may get the same draw.

Release over spec: the spec kept at least one gold sentence (at most n - 1 replaced, a
one-sentence text not applicable), drew each candidate at most once per row and left out
candidates under three words; at K = 2 on CNN/DM that replaced fewer words than the release
(noise ratio about 0.62 where the release has 0.68). The release's rule is followed.

The candidate list is built once per instance, lazily: every pool text is sentence-split with
the shared parser (texts already parsed are cached) and the sentences are sorted, so a row's
result does not depend on the pool's order. Sentences are spaCy's, the release's NLTK Punkt's.

Open-ended variant (``task="open_ended"``, WikiText): the last sentence is never replaced, so it
needs two sentences.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any

from blindspot.parsing import ParsedText, get_parser
from blindspot.perturbations.perturbation import Count, Perturbation, Row, is_usable_text, register
from blindspot.perturbations.text_utils import replace_spans, sentence_char_spans

MIN_WORDS = 3
_RANDOM_DRAWS = 8


def sentences_of(parsed: ParsedText) -> list[str]:
    """The text's sentences, without surrounding whitespace."""
    return [parsed.text[s:e] for s, e in sentence_char_spans(parsed)]


def is_candidate(sentence: str) -> bool:
    """Whether a pool sentence is a whole enough sentence to stand in for another."""
    return len(sentence.split()) >= MIN_WORDS and any(c.isalpha() for c in sentence)


def build_candidates(pool: Sequence[Any], whole_only: bool = True) -> tuple[str, ...]:
    """The sorted sentences of the usable texts of ``pool``.

    ``whole_only`` (random sentence addition): each sentence once, only whole ones
    (:func:`is_candidate`). Otherwise (sentence replacement, as the release): every sentence of
    every pool text, repeats kept.
    """
    texts = [t for t in pool if is_usable_text(t)]
    distinct = list(dict.fromkeys(texts))
    parses = dict(zip(distinct, get_parser().parse_many(distinct), strict=True))
    if whole_only:
        found = {s for t in distinct for s in sentences_of(parses[t])}
        return tuple(sorted(s for s in found if is_candidate(s)))
    return tuple(sorted(s for t in texts for s in sentences_of(parses[t])))


def draw_sentence(rng: random.Random, candidates: Sequence[str],
                  allowed: Callable[[str], bool]) -> str | None:
    """A uniformly drawn candidate that is ``allowed`` (None when none is); after a few
    unlucky draws, the first allowed candidate from a random start."""
    n = len(candidates)
    if n == 0:
        return None
    for _ in range(_RANDOM_DRAWS):
        sentence = candidates[rng.randrange(n)]
        if allowed(sentence):
            return sentence
    start = rng.randrange(n)
    for offset in range(n):
        sentence = candidates[(start + offset) % n]
        if allowed(sentence):
            return sentence
    return None


@register
class SentenceReplacement(Perturbation):
    name = "sentence_replacement"
    aliases = ("sentence replacement", "sentence-replacement", "replace sentences")
    category = "consistency"
    description = ("Replace K random sentences by random sentences of other gold hypotheses "
                   "(open-ended generation: the last sentence is kept).")
    level_kind = Count(1)
    levels = {"summarization": (1, 2), "translation_paragraph": (1, 2, 3),
              "open_ended": (1, 2, 3, 4, 5, 6)}
    needs_parse = True
    requires = ("pool",)

    def __init__(self, task: str | None = None, **resources: Any) -> None:
        super().__init__(task, **resources)
        self._candidates: tuple[str, ...] | None = None

    @property
    def candidates(self) -> tuple[str, ...]:
        """The pool's candidate sentences, built on first use."""
        if self._candidates is None:
            self._candidates = build_candidates(list(self.resources["pool"]), whole_only=False)
        return self._candidates

    def perturb(self, row: Row, level: int, rng: random.Random) -> str | None:
        if row.parsed is None:
            return None
        spans = sentence_char_spans(row.parsed)
        replaceable = len(spans) - 1 if self.task == "open_ended" else len(spans)
        if replaceable < 1:
            return None
        text = row.parsed.text
        edits = []
        for position in sorted(rng.sample(range(replaceable), min(level, replaceable))):
            sentence = draw_sentence(rng, self.candidates, lambda s: s not in text)
            if sentence is None:
                break
            edits.append((*spans[position], sentence))
        return replace_spans(text, edits) if edits else None
