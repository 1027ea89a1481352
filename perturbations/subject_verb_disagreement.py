"""Subject-verb disagreement (MENLI fluency attack; Sai et al. 2021).

MENLI: "Make the subject and verb disagree (e.g. 'He like dogs.')"; the spec names the pairs
was<->were, is<->are, has<->have, does<->do. Every finite form of these verbs (spaCy tag VBZ, VBP
or VBD, so "to have" and "will do" are left alone) is flipped to its partner, as in the shipped
MENLI WMT20 set ("this is ... has risen" -> "this are ... have risen"); a contracted negation
follows its verb ("doesn't" -> "don't", "isn't" -> "aren't"). The case of each word is kept. A
text without such a verb is not changed. Deterministic; the level is "-".
"""

from __future__ import annotations

import random

from blindspot.parsing import ParsedText, Token
from blindspot.perturbations._menli import TokenEditAttack
from blindspot.perturbations.perturbation import register
from blindspot.perturbations.text_utils import match_case

AGREEMENT_PAIRS = {"was": "were", "were": "was", "is": "are", "are": "is", "has": "have",
                   "have": "has", "does": "do", "do": "does"}
FINITE_TAGS = frozenset({"VBZ", "VBP", "VBD"})


@register
class SubjectVerbDisagreement(TokenEditAttack):
    name = "subject_verb_disagreement"
    menli_error = "subject_verb_dis"
    aliases = ("subject_verb_dis", "subject-verb disagreement", "svd", "sv disagreement")
    description = "Flip every finite was/were, is/are, has/have, does/do to break agreement."
    deterministic = True

    def new_text(self, parsed: ParsedText, token: Token, rng: random.Random) -> str | None:
        partner = AGREEMENT_PAIRS.get(token.text.lower())
        if partner is None or token.tag not in FINITE_TAGS:
            return None
        return match_case(token.text, partner)
