"""Context negation (Sai et al. 2021, dialogue making sense: "negate a previous statement by the
same speaker", Table 5: "Bot: I enjoy having your daughter in my class. User: I'm glad to hear
that." -> "I don't enjoy having your daughter in my class.").

The response becomes the responding speaker's previous utterance (the context's second-to-last
turn, see ``_dialogue``) with every sentence negated by the ``negation`` test's negator (CheckList
``add_negation``, then its rule fallback): the bot contradicts itself. Rows whose context has
fewer than two turns, or whose utterance cannot be negated, are not applied. Deterministic.
"""

from __future__ import annotations

import random

from blindspot.parsing import get_parser
from blindspot.perturbations._checklist import CATEGORY, PAPER
from blindspot.perturbations._dialogue import same_speaker_previous
from blindspot.perturbations.negation import checklist_negator, negate_sentences
from blindspot.perturbations.perturbation import NoLevel, Perturbation, Row, register


def negate_text(text: str) -> str | None:
    """``text`` with each sentence negated; None when no sentence could be."""
    return negate_sentences(get_parser().parse(text))


@register
class ContextNegation(Perturbation):
    name = "context_negation"
    aliases = ("negate previous statement",)
    category = CATEGORY
    paper = PAPER
    description = "Reply with the speaker's previous utterance, negated (a self-contradiction)."
    level_kind = NoLevel()
    levels = {}  # dialogue only (the deviation protocol's templates)
    deterministic = True
    needs_source = True
    preloads = (checklist_negator,)

    def perturb(self, row: Row, level: str, rng: random.Random) -> str | None:
        previous = same_speaker_previous(row.source)
        return negate_text(previous) if previous else None
