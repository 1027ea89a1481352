"""Article removal (blind-spots paper, fluency; Table 16 "Article Removal").

Each whitespace token that is exactly an article (a, an, the; any case) is dropped with
probability p. A token with punctuation attached ("(The", "the,") is not an article token, as in
the spec's whitespace-token definition. Sentence starts are re-capitalised only where a dropped
"The"/"A" opened a sentence, so the rest of the text is left exactly as it was.
"""

from __future__ import annotations

import random

from blindspot.perturbations._fluency_edits import Words, every_task, pick_each
from blindspot.perturbations.perturbation import Perturbation, Ratio, Row, register

ARTICLES = frozenset({"a", "an", "the"})


def remove_articles(text: str, p: float, rng: random.Random) -> str | None:
    """``text`` with each article token dropped with probability p; None when none is dropped."""
    words = Words.of(text)
    drop = set(pick_each((i for i, w in enumerate(words.words) if w.lower() in ARTICLES), p, rng))
    if not drop or len(drop) == len(words.words):
        return None
    return words.without(drop, recapitalise=True)


@register
class ArticleRemoval(Perturbation):
    name = "article_removal"
    category = "fluency"
    description = "Drop each article (a/an/the) with probability p; re-capitalise sentence starts."
    level_kind = Ratio(0.0, 1.0)
    whitespace_words = True
    levels = every_task((0.5, 1.0))

    def perturb(self, row: Row, level: float, rng: random.Random) -> str | None:
        return remove_articles(row.text, level, rng)
