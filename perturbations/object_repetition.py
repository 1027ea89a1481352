"""Object repetition (Sai et al. 2021, image captioning thoroughness: "repeat (append) object",
Table 5: "A lady riding a horse." -> "A lady riding a horse and a lady .").

The first noun (spaCy NOUN or PROPN) with its left determiner/adjective/compound modifiers is
appended as " and <phrase>" before the text's final punctuation (lower-cased first letter unless
a proper noun). Deterministic.
"""

from __future__ import annotations

import random
import re

from blindspot.perturbations._checklist import CATEGORY, NO_LEVEL, PAPER
from blindspot.perturbations.perturbation import NoLevel, Perturbation, Row, register
from blindspot.perturbations.text_utils import lowercase_first

_LEFT = frozenset({"det", "amod", "compound", "nummod"})
_END = re.compile(r"\s*([.!?]+)\s*$")


@register
class ObjectRepetition(Perturbation):
    name = "object_repetition"
    aliases = ("repeat object",)
    category = CATEGORY
    paper = PAPER
    description = "Append ' and <the first noun phrase>' (A lady riding a horse and a lady.)."
    level_kind = NoLevel()
    levels = NO_LEVEL
    deterministic = True
    needs_parse = True

    def perturb(self, row: Row, level: str, rng: random.Random) -> str | None:
        if row.parsed is None:
            return None
        tokens = row.parsed.tokens
        head = next((t for t in tokens if t.pos in ("NOUN", "PROPN")), None)
        if head is None:
            return None
        first = head.i
        while first > 0 and tokens[first - 1].dep in _LEFT and tokens[first - 1].head == head.i:
            first -= 1
        phrase = row.text[tokens[first].idx:head.idx + len(head.text)]
        if tokens[first].pos != "PROPN":
            phrase = lowercase_first(phrase)
        match = _END.search(row.text)
        body, end = (row.text[:match.start()], match.group(1)) if match else (row.text.rstrip(), "")
        return f"{body} and {phrase}{end}"
