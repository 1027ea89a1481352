"""Noised punctuation (blind-spots paper, fluency; Table 16 "Noised Punctuation").

Each punctuation mark . , ! ? : is replaced with probability p: "." -> ",", "," -> ".",
"!" -> ",", "?" -> ",", ":" -> ".". A mark counts only when it is not followed by a letter or a
digit, so the dots and colons inside "3.5", "10:30", "U.S" or a URL are not punctuation and stay
(the spec says "each of . , ! ? :" without saying whether such inner characters count; the paper
noises "punctuations"). Nothing is re-capitalised: the spec asks for none.
"""

from __future__ import annotations

import random
import re

from blindspot.perturbations._fluency_edits import every_task, pick_each
from blindspot.perturbations.perturbation import Perturbation, Ratio, Row, register
from blindspot.perturbations.text_utils import replace_spans

SWAPS = {".": ",", ",": ".", "!": ",", "?": ",", ":": "."}
_MARK = re.compile(r"[.,!?:](?![^\W_])")


def noise_punctuation(text: str, p: float, rng: random.Random) -> str | None:
    """``text`` with each punctuation mark swapped with probability p (None: no mark chosen)."""
    chosen = pick_each(_MARK.finditer(text), p, rng)
    edits = [(m.start(), m.end(), SWAPS[m.group()]) for m in chosen]
    return replace_spans(text, edits) if edits else None


@register
class NoisedPunctuation(Perturbation):
    name = "noised_punctuation"
    category = "fluency"
    description = "Swap each punctuation mark (. , ! ? :) for a wrong one with probability p."
    level_kind = Ratio(0.0, 1.0)
    levels = every_task((0.5, 1.0))

    def perturb(self, row: Row, level: float, rng: random.Random) -> str | None:
        return noise_punctuation(row.text, level, rng)
