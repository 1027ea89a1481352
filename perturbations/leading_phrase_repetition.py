"""Leading-phrase repetition (Sai et al. 2021: "repeat phrases" of MT adequacy, dialogue avoid-repetition
and data-to-text relevance, Table 5: "My relatives are in town." -> "My relatives are in town,
my relatives .").

The first ceil(p * n) whitespace words (p = 0.25 by default, the spec's "first 25 % of tokens")
are appended after a comma, before the text's final sentence mark; the copy loses its own
trailing punctuation and its first letter is lower-cased unless the first word is a proper noun
or "I" (spaCy: PROPN, NNP or an entity), as in the paper's example. Deterministic.
Not the examination paper's ``phrase_repetition``, which repeats the *final* phrase many times.
"""

from __future__ import annotations

import random
import re

from blindspot.perturbations._checklist import CATEGORY, PAPER
from blindspot.perturbations._fluency_edits import count_of, every_task
from blindspot.perturbations.perturbation import Perturbation, Ratio, Row, register
from blindspot.perturbations.text_utils import lowercase_first

_END = re.compile(r"\s*([.!?]+[\"'\u201d\u2019)\]]*)\s*$")


def repeat_phrase(text: str, p: float, keep_case: bool = False) -> str | None:
    """``text`` with its first ceil(p * n) words repeated at the end."""
    words = text.split()
    if not words:
        return None
    k = max(1, min(len(words), count_of(len(words), p)))
    phrase = " ".join(words[:k]).rstrip(",.;:!?")
    if not phrase:
        return None
    if not keep_case:
        phrase = lowercase_first(phrase)
    match = _END.search(text)
    body, end = (text[:match.start()], match.group(1)) if match else (text.rstrip(), "")
    return f"{body.rstrip(',;: ')}, {phrase}{end}"


@register
class LeadingPhraseRepetition(Perturbation):
    name = "leading_phrase_repetition"
    aliases = ("repeat phrases", "checklist phrase repetition")
    category = CATEGORY
    paper = PAPER
    description = "Append the first 25 % of the words after a comma (a repeated phrase)."
    level_kind = Ratio(0.0, 1.0)
    whitespace_words = True
    levels = every_task((0.25,))
    deterministic = True
    needs_parse = True

    def perturb(self, row: Row, level: float, rng: random.Random) -> str | None:
        if row.parsed is None:
            return None
        first = row.parsed.tokens[0] if row.parsed.tokens else None
        proper = first is not None and (first.pos == "PROPN" or first.tag in ("NNP", "NNPS")
                                        or bool(first.ent_type) or first.text == "I")
        return repeat_phrase(row.text, level, keep_case=proper)
