"""Sentence replacement (blind-spots paper, consistency; Table 16 "Sentence Replacement").

K random sentences of the hypothesis are replaced by random sentences of the *other* gold
hypotheses of the same dataset (the ``pool`` resource: every gold text of the dataset), so the
text keeps its fluency but says something irrelevant.

The candidate sentences are built once per instance, lazily: every pool text is sentence-split
with the shared parser (texts already parsed are cached), sentences are deduplicated and sorted,
so a row's result does not depend on the pool's order. A candidate is never a sentence the row
already contains, and a row never receives the same candidate twice.

Spec ambiguities resolved:
- At most n - 1 of a text's n sentences are replaced (K is capped), so some of the gold always
  remains; a one-sentence text is not applicable (the paper needs multi-sentence text for this
  test; a fully replaced text would be another test, a random other gold).
- Open-ended variant (``task="open_ended"``, WikiText): the last sentence is never replaced.
- Candidates need a letter and at least three words: sentence-splitter fragments ("S.", a lone
  quote) would make a weaker, different noise than "a random irrelevant sentence".
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from blindspot.parsing import ParsedText, get_parser
from blindspot.perturbations.base import Count, Perturbation, Row, is_usable_text, register
from blindspot.perturbations.text_utils import replace_spans, sentence_char_spans

MIN_WORDS = 3
_RANDOM_DRAWS = 8


def sentences_of(parsed: ParsedText) -> list[str]:
    """The text's sentences, without surrounding whitespace."""
    return [parsed.text[s:e] for s, e in sentence_char_spans(parsed)]


def is_candidate(sentence: str) -> bool:
    """Whether a pool sentence is a whole enough sentence to stand in for another."""
    return len(sentence.split()) >= MIN_WORDS and any(c.isalpha() for c in sentence)


def build_candidates(pool: Sequence[Any]) -> tuple[str, ...]:
    """The sorted, deduplicated candidate sentences of every usable text of ``pool``."""
    texts = [t for t in dict.fromkeys(pool) if is_usable_text(t)]
    found = {s for parsed in get_parser().parse_many(texts) for s in sentences_of(parsed)}
    return tuple(sorted(s for s in found if is_candidate(s)))


def draw_sentence(rng: random.Random, candidates: Sequence[str], taken: set[str]) -> str | None:
    """A uniformly drawn candidate not in ``taken``; a scan from a random start if draws fail."""
    n = len(candidates)
    if n == 0:
        return None
    for _ in range(_RANDOM_DRAWS):
        sentence = candidates[rng.randrange(n)]
        if sentence not in taken:
            return sentence
    start = rng.randrange(n)
    for offset in range(n):
        sentence = candidates[(start + offset) % n]
        if sentence not in taken:
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
            self._candidates = build_candidates(list(self.resources["pool"]))
        return self._candidates

    def perturb(self, row: Row, level: int, rng: random.Random) -> str | None:
        if row.parsed is None:
            return None
        spans = sentence_char_spans(row.parsed)
        if len(spans) < 2:
            return None
        replaceable = len(spans) - 1 if self.task == "open_ended" else len(spans)
        positions = sorted(rng.sample(range(replaceable), min(level, len(spans) - 1)))
        text = row.parsed.text
        taken = {text[s:e] for s, e in spans}
        edits = []
        for position in positions:
            sentence = draw_sentence(rng, self.candidates, taken)
            if sentence is None:
                break
            taken.add(sentence)
            edits.append((*spans[position], sentence))
        return replace_spans(text, edits) if edits else None
