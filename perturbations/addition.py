"""Addition (MENLI adequacy attack ``add``).

MENLI: "We randomly add a noun after an existing one and connect them with 'and'. For example,
'I love dogs' -> 'I love dogs and cats.'" A random common noun of the text (spaCy NOUN tagged NN
or NNS) gets " and <noun>" right after it, the new noun drawn from our noun list (see
``_word_lists``) and put in the same number ("dogs" -> "dogs and cats", "price" -> "price and
promise"). A compound modifier may be picked, as in the shipped MENLI set ("gold prices" -> "gold
and generation prices"). A text without a common noun is not changed. The level is "-"; the
noise ratio is 2 / n (two words inserted).
"""

from __future__ import annotations

from blindspot.parsing import Token
from blindspot.perturbations._menli import RandomWordAttack
from blindspot.perturbations.perturbation import register


@register
class Addition(RandomWordAttack):
    name = "addition"
    menli_error = "add"
    aliases = ("add", "add noun", "addition error", "menli add")
    description = "Insert 'and <noun>' after a random noun ('dogs' -> 'dogs and cats')."
    upos = "NOUN"
    tags = frozenset({"NN", "NNS"})
    word_list = "noun"

    def edit(self, target: Token, new: str) -> tuple[int, int, str]:
        end = target.idx + len(target.text)
        return end, end, " " + added_phrase(target.text, new)


def added_phrase(noun: str, new: str) -> str:
    """'and <new>' in lower case, or in capitals after a noun written in capitals ("GOLD")."""
    phrase = f"and {new.lower()}"
    return phrase.upper() if len(noun) > 1 and noun.isupper() else phrase
