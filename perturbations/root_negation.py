"""Root negation (examination paper, "Negation"; category ``examination``).

"Sentences were negated ... The CheckList library's experimental negation function was utilized
... Specifically, the root of the dependency grammar tree is negated."

Every sentence of the row is negated with CheckList's ``Perturb.add_negation`` (which negates the
sentence's dependency root), through the blind-spots ``negation`` test's
:func:`~blindspot.perturbations.negation.checklist_negation` on the stored parse. The differences
from that test: every sentence (its level p = 1), no level to choose, and no rule fallback -- the
paper kept only the sentences CheckList could negate, so a sentence CheckList refuses stays as it
is, and a row with no negated sentence comes back not applied. Deterministic.
"""

from __future__ import annotations

import random

from blindspot.perturbations._examination import ExaminationTest
from blindspot.perturbations._fluency_edits import every_task, parse_of
from blindspot.perturbations.negation import checklist_negation, checklist_negator, negate_sentences
from blindspot.perturbations.perturbation import NoLevel, Row, register


def negate_roots(row: Row) -> str | None:
    """The row with every sentence CheckList can negate negated; None when it negates none."""
    parsed = parse_of(row.text, row.parsed)
    return None if parsed is None else negate_sentences(parsed, checklist_negation)


@register
class RootNegation(ExaminationTest):
    name = "root_negation"
    aliases = ("examination negation", "negate root")
    description = "Negate the dependency root of every sentence with CheckList (no fallback)."
    level_kind = NoLevel()
    levels = every_task(("-",))
    deterministic = True
    needs_parse = True
    preloads = (checklist_negator,)

    def perturb(self, row: Row, level: str, rng: random.Random) -> str | None:
        return negate_roots(row)
