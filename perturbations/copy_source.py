"""Copy-source (blind-spots paper, targeted test, Appendix D).

The hypothesis is replaced by the source text: the article for summarization, the German or
Chinese source for translation. Metrics that reward similarity to the source, or that do not
check the hypothesis' language or length, can score the copy above the gold (Table 11).
Deterministic; the test takes no level ("-") and needs the source column. Not run on open-ended
generation, which has no source.
"""

from __future__ import annotations

import random

from blindspot.perturbations.perturbation import NoLevel, Perturbation, Row, is_usable_text, register


@register
class CopySource(Perturbation):
    name = "copy_source"
    category = "targeted"
    description = "Replace the hypothesis by the source text (article or foreign-language source)."
    level_kind = NoLevel()
    levels = {task: ("-",) for task in ("summarization", "translation", "translation_paragraph")}
    deterministic = True
    needs_source = True
    #: App. D: a fail when the copy scores at or above gold
    verdict_rule = "below_gold"

    def perturb(self, row: Row, level: str, rng: random.Random) -> str | None:
        return row.source if is_usable_text(row.source) else None
