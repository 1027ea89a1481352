"""Sentence repetition (Sai et al. 2021, summarization non-redundancy: "repeat sentences",
Table 5).

A copy of one uniformly chosen sentence (spaCy sentences) is appended at the end of the text,
after a space, so the summary says the same thing twice. One-sentence texts repeat that sentence.
"""

from __future__ import annotations

import random

from blindspot.perturbations._checklist import CATEGORY, NO_LEVEL, PAPER
from blindspot.perturbations.perturbation import NoLevel, Perturbation, Row, register
from blindspot.perturbations.text_utils import sentence_char_spans


@register
class SentenceRepetition(Perturbation):
    name = "sentence_repetition"
    aliases = ("repeat sentences",)
    category = CATEGORY
    paper = PAPER
    description = "Append a copy of one random sentence of the text."
    level_kind = NoLevel()
    levels = NO_LEVEL
    needs_parse = True

    def perturb(self, row: Row, level: str, rng: random.Random) -> str | None:
        if row.parsed is None:
            return None
        spans = sentence_char_spans(row.parsed)
        if not spans:
            return None
        start, end = spans[rng.randrange(len(spans))]
        return row.text.rstrip() + " " + row.text[start:end]
