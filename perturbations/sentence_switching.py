"""Sentence switching (blind-spots paper, consistency; Table 16 "Sentence Switching").

K random pairs of sentences (spaCy sentences) swap places, breaking the temporal/logical order;
the same pair is never drawn twice in a row (it would undo the swap) and two sentences that read
the same are never drawn as a pair. With only two sentences that may move, they are reversed
whatever K is. Each sentence keeps its own text; the whitespace between sentence slots
(spaces, newlines) stays where it was.

Open-ended variant (``task="open_ended"``, WikiText): the last sentence never moves, as in the
paper (Sec. 5.5: kept fixed because of MAUVE's sensitivity to the ending, cf. positioned error),
so a paragraph needs at least three sentences there.
"""

from __future__ import annotations

import random

from blindspot.perturbations._switching import swap_items
from blindspot.perturbations.perturbation import Count, Perturbation, Row, register
from blindspot.perturbations.text_utils import replace_spans, sentence_char_spans


def switched_order(rng: random.Random, sentences: list[str], k: int) -> list[int]:
    """The new order of ``sentences`` after ``k`` swaps (two sentences are simply reversed)."""
    if len(sentences) == 2:
        return [1, 0]
    return swap_items(rng, sentences, k, avoid_repeat=True)


@register
class SentenceSwitching(Perturbation):
    name = "sentence_switching"
    aliases = ("sentence switching", "sentence-switching", "switch sentences", "sentence swap")
    category = "consistency"
    description = ("Swap K random pairs of sentences (open-ended generation: the last sentence "
                   "stays last).")
    level_kind = Count(1)
    levels = {"summarization": (1, 2), "translation_paragraph": (1, 2, 3),
              "open_ended": (1, 2, 6)}
    swap = True
    needs_parse = True

    def perturb(self, row: Row, level: int, rng: random.Random) -> str | None:
        if row.parsed is None:
            return None
        text = row.parsed.text
        spans = sentence_char_spans(row.parsed)
        movable = spans[:-1] if self.task == "open_ended" else spans
        if len(movable) < 2:
            return None
        order = switched_order(rng, [text[s:e] for s, e in movable], level)
        edits = [(s, e, text[movable[src][0]:movable[src][1]])
                 for (s, e), src in zip(movable, order, strict=True)]
        return replace_spans(text, edits)
