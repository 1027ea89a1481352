"""The question words the question-generation templates of Sai et al. (2021) change or drop."""

from __future__ import annotations

import re

QUESTION_WORDS = ("what", "when", "where", "which", "who", "whom", "whose", "why", "how")
_PATTERN = re.compile(r"\b(" + "|".join(QUESTION_WORDS) + r")\b", re.IGNORECASE)


def first_question_word(text: str) -> re.Match[str] | None:
    """The first wh-word of ``text`` (whole word, any case), or None."""
    return _PATTERN.search(text)
