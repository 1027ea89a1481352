"""Word drop (examination paper, "Word Drop"; category ``examination``).

"A random drop of words mimics general quality deterioration. The larger the intensity, the larger
the drop probability gets. At the highest level, only a few tokens are left."

The transform is the blind-spots suite's ``token_drop`` (:func:`~blindspot.perturbations.token_drop.
drop_words`: k = min(ceil(n * p), n - 1) of the n whitespace words deleted, one word always kept)
at the paper's intensities p = .25 .5 .75 1 instead of .05 ... .5; at p = 1 a single word is left,
the paper's "only a few tokens". It is registered under its own name only so that the
``examination`` suite runs it at these levels. Differences from the paper's code, on purpose: the
paper drew floor(p * m) of the m spaCy tokens that are not punctuation (punctuation stayed), per
sentence; here the row's whitespace words are the unit (punctuation attached to a word goes with
it) and the count is the ceiling, as in ``token_drop``, so the noise ratio is exactly k / n.
"""

from __future__ import annotations

import random

from blindspot.perturbations._examination import ExaminationTest
from blindspot.perturbations.perturbation import Row, register
from blindspot.perturbations.token_drop import drop_words


@register
class WordDrop(ExaminationTest):
    name = "word_drop"
    aliases = ("word-drop", "dropped words")
    description = "Delete ceil(n*p) random words at intensity p (p = 1 keeps a single word)."
    whitespace_words = True

    def perturb(self, row: Row, level: float, rng: random.Random) -> str | None:
        return drop_words(row.text, level, rng)
