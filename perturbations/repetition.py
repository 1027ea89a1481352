"""Repetition (blind-spots paper, targeted test, Appendix E).

Appends k copies of the gold's last 4 words, a synthetic version of the degeneration (repetition)
problem of language models (Holtzman et al., 2020); a robust metric scores Rep-k lower than gold.
Deterministic: it ignores the seed.

Ambiguity resolved: the paper's "last 4-gram" is counted here in whitespace words, as the project
spec says. The paper's own example (Table 12, "dissensions that occur." repeated) suggests the
authors counted model tokens, where the final period is a token of its own. A text of fewer than
4 words repeats all of its words. The copies are separated by single spaces; trailing whitespace of
the gold is dropped first so that no double space appears.
"""

from __future__ import annotations

import random

from blindspot.perturbations.perturbation import Count, Perturbation, Row, register

#: words of the repeated tail (the paper's 4-gram)
TAIL_WORDS = 4
#: Table 13 reports Rep-10/20/30 (sum, WMT, wiki); Rep-2 appears in Table 12 and 5 is also used
_PAPER_LEVELS = (10, 20, 30)


def repeat_tail(text: str, copies: int, tail: int = TAIL_WORDS) -> str | None:
    """``text`` followed by ``copies`` copies of its last ``tail`` whitespace words."""
    words = text.split()
    if not words:
        return None
    ending = " ".join(words[-tail:])
    return text.rstrip() + (" " + ending) * copies


@register
class Repetition(Perturbation):
    name = "repetition"
    aliases = ("rep-k",)
    category = "targeted"
    description = "Append k copies of the last 4 words (Rep-k), a synthetic degeneration error."
    level_kind = Count(1)
    whitespace_words = True
    levels = {task: _PAPER_LEVELS for task in
              ("summarization", "translation", "translation_paragraph", "open_ended")}
    deterministic = True
    #: App. E: "a robust metric should give a lower score for Rep-k compared to gold"
    verdict_rule = "below_gold"

    def perturb(self, row: Row, level: int, rng: random.Random) -> str | None:
        return repeat_tail(row.text, level)
