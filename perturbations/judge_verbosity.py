"""Verbosity (LLM judges): the gold padded with restatements that add no content.

A judge that prefers longer answers grades a text higher for saying the same thing again. This
test appends ``level`` sentences to the gold, each a content-free lead-in followed by one of the
gold's own sentences, in order (the first sentence first, wrapping round), so the padded text
holds no fact the gold lacks. The verdict rule is ``not_above_gold``: a padded gold must score no
higher than the gold. Deterministic: it ignores the seed. A gold of no sentence (no letter) is
left alone by the base class.
"""

from __future__ import annotations

import random
import re

from blindspot.perturbations.perturbation import Count, Perturbation, Row, register

#: lead-ins that say nothing of their own; the n-th restatement uses the n-th (wrapping round)
LEAD_INS = ("In other words,", "To put it another way,", "That is to say,", "Put simply,",
            "Once more,")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def sentences(text: str) -> list[str]:
    """The text's sentences, split after ., ! or ? and a space."""
    return [s for s in _SENTENCE_END.split(text.strip()) if s]


#: sentence openings that are not names: lower-cased after a lead-in
_COMMON_OPENINGS = frozenset({"A", "An", "The", "It", "This", "That", "These", "Those", "There",
                              "He", "She", "They", "We", "In", "On", "At", "After", "Most"})


def restate(sentence: str, lead_in: str) -> str:
    """``sentence`` after ``lead_in``; its first word lower-cased when it is a common opening
    (a name keeps its capital)."""
    first = sentence.split(maxsplit=1)[0]
    start = sentence[:1].lower() if first in _COMMON_OPENINGS else sentence[:1]
    return f"{lead_in} {start}{sentence[1:]}"


def pad(text: str, count: int) -> str:
    """``text`` with ``count`` restatements of its own sentences appended."""
    own = sentences(text)
    added = [restate(own[i % len(own)], LEAD_INS[i % len(LEAD_INS)]) for i in range(count)]
    return " ".join([text.strip(), *added])


@register
class JudgeVerbosity(Perturbation):
    name = "judge_verbosity"
    category = "judge"
    paper = "LLM-judge audits: verbosity bias (Zheng et al., 2023, Judging LLM-as-a-Judge)"
    description = ("Append restatements of the gold's own sentences after content-free lead-ins "
                   "('In other words, ...'): longer, no new content; must score no higher")
    level_kind = Count(1, 20)
    levels = {task: (1, 2, 4) for task in
              ("summarization", "translation", "translation_paragraph", "open_ended")}
    deterministic = True
    verdict_rule = "not_above_gold"

    def perturb(self, row: Row, level: int, rng: random.Random) -> str | None:
        return pad(row.text, level)
