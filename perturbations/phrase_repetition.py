"""Phrase repetition (examination paper, "Repetition"; category ``examination``).

"A sequence at the end of the sentence is chosen and repeatedly added to the sentence ... With
increasing intensity, the chosen sequence is repeated more often ... At the maximum degree, the
sequence is repeated as many times as there are tokens in the reference sentence."

The phrase is the text's last (up to) 4 whitespace words before its final punctuation, cut after
the last of them that ends in punctuation (the paper's phrase holds no punctuation: "quick, he's"
gives "he's"). At intensity p (the paper's steps .25 .5 .75 1) it is inserted floor(p * n) times
before the final punctuation, n being the number of words of the text:
"... and in great form." -> "... and in great form and in great form ... and in great form."
In the paper the candidate is an impaired copy of the reference, so "the reference sentence" is
the unperturbed text itself: n is counted on the gold being perturbed (here in whitespace words;
the paper's code counted spaCy tokens, punctuation included). Deterministic. A text whose
floor(p * n) is 0 comes back not applied.

It reuses the blind-spots ``repetition`` test's :func:`~blindspot.perturbations.repetition.
repeat_tail`; the differences are the count (a share of the text's length instead of a fixed k),
the place (before the final punctuation, not after it) and the punctuation-free phrase.
"""

from __future__ import annotations

import random
import re

from blindspot.perturbations._examination import ExaminationTest
from blindspot.perturbations._fluency_edits import floor_count_of
from blindspot.perturbations.perturbation import Row, register
from blindspot.perturbations.repetition import TAIL_WORDS, repeat_tail

#: the text's closing punctuation (". ! ?", an ellipsis, then closing quotes or brackets)
_FINAL = re.compile(r"\s*[.!?\u2026]+[\"'\u201d\u2019)\]]*$")
#: a word that ends in punctuation (a phrase never reaches across it)
_ENDS_IN_PUNCT = re.compile(r"[^\w\s]$")


def split_final_punctuation(text: str) -> tuple[str, str]:
    """The text (right-stripped) cut before its closing punctuation: ``(body, final)``."""
    stripped = text.rstrip()
    match = _FINAL.search(stripped)
    cut = match.start() if match else len(stripped)
    return stripped[:cut], stripped[cut:]


def phrase_length(words: list[str], size: int = TAIL_WORDS) -> int:
    """How many final words form the phrase: up to ``size``, none across a punctuated word."""
    tail = words[-size:]
    cut = max((i + 1 for i, word in enumerate(tail[:-1]) if _ENDS_IN_PUNCT.search(word)),
              default=0)
    return len(tail) - cut


def repeat_final_phrase(text: str, p: float) -> str | None:
    """``text`` with its final phrase repeated floor(p * n) times before its final punctuation."""
    body, final = split_final_punctuation(text)
    words = body.split()
    copies = floor_count_of(len(text.split()), p)
    repeated = repeat_tail(body, copies, phrase_length(words)) if words and copies else None
    return repeated + final if repeated is not None else None


@register
class PhraseRepetition(ExaminationTest):
    name = "phrase_repetition"
    aliases = ("examination repetition", "repetition intensity")
    description = ("Repeat the final phrase (<= 4 words) floor(p*n) times before the final "
                   "punctuation; p = 1: as many times as the text has words.")
    whitespace_words = True
    deterministic = True

    def perturb(self, row: Row, level: float, rng: random.Random) -> str | None:
        return repeat_final_phrase(row.text, level)
