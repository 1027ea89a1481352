"""Stop-word removal (blind-spots paper, fluency; Table 16 "Stop-word Removal").

Each spaCy stop word (``is_stop``, spaCy's English list, which includes clitics such as "n't" and
"'s") is dropped with probability p, with the space before it ("did n't go" keeps one space:
"did go"). A word that becomes a sentence start because the capitalised stop word before it went
is capitalised; nothing else is re-cased.
"""

from __future__ import annotations

import random

from blindspot.parsing import Token
from blindspot.perturbations._fluency_edits import every_task, remove_random_tokens
from blindspot.perturbations.perturbation import Perturbation, Ratio, Row, register


def is_stopword(token: Token) -> bool:
    """A word of spaCy's English stop list."""
    return token.is_stop


@register
class StopwordRemoval(Perturbation):
    name = "stopword_removal"
    aliases = ("stop_word_removal",)
    category = "fluency"
    description = "Drop each spaCy stop word with probability p."
    level_kind = Ratio(0.0, 1.0)
    levels = every_task((0.1, 0.2, 0.3, 0.4, 0.5, 0.6))
    needs_parse = True

    def perturb(self, row: Row, level: float, rng: random.Random) -> str | None:
        return remove_random_tokens(row.text, row.parsed, is_stopword, level, rng)
