"""Name error (MENLI adequacy attack).

MENLI: "We use the tool of Ribeiro et al. (2020) to replace exactly one name with a random one of
the same gender" (CheckList's ``Perturb.change_names``). As there, a candidate is a spaCy PERSON
entity whose first word is a first name of CheckList's name lists (``checklist/data/names.json``:
'women' and 'men'; a name on both counts as a man's, as in CheckList), and the new name is drawn
from the 100 most common first names of that gender (CheckList draws from the same 100). One
person (a distinct PERSON entity text) is chosen at random and its first name is replaced in
every mention of that same entity text, so exactly one person is renamed, consistently ("under
Ronald Reagan and Margaret Thatcher" -> "under Sean Reagan and Margaret Thatcher"); the surname
is kept, so the text stays maximally similar to the original. The level is "-". The lists are
read from the installed CheckList package's data file (no CheckList import, which takes seconds).
"""

from __future__ import annotations

import json
import random
from functools import lru_cache

from blindspot.perturbations._menli import MenliAttack, row_parse
from blindspot.perturbations.perturbation import Row, register
from blindspot.perturbations.text_utils import match_case, replace_spans
from blindspot.pkgpath import package_dir

#: CheckList draws replacement names from the first 90 + n (n = 10) of each list
POOL_SIZE = 100


@lru_cache(maxsize=1)
def checklist_names() -> dict[str, list[str]]:
    """CheckList's first-name lists by gender ('women', 'men') and its 'last' names."""
    root = package_dir("checklist")
    if root is None:
        raise RuntimeError("the name error attack needs the 'checklist' package (its name lists); "
                           "install the requirements (make env)")
    with open(root / "data" / "names.json", encoding="utf-8") as handle:
        return json.load(handle)


@lru_cache(maxsize=1)
def gender_of_first_name() -> dict[str, str]:
    """First name -> 'women' or 'men' (a name on both lists is a man's, as in CheckList)."""
    names = checklist_names()
    gender = dict.fromkeys(names["women"], "women")
    gender.update(dict.fromkeys(names["men"], "men"))
    return gender


def other_name(name: str, gender: str, rng: random.Random) -> str:
    """A random first name of ``gender`` among the 100 most common, other than ``name``."""
    pool = [n for n in checklist_names()[gender][:POOL_SIZE] if n != name]
    return rng.choice(pool)


@register
class PersonNameError(MenliAttack):
    name = "name_error"
    menli_error = "name"
    aliases = ("name", "change names", "name change", "person name change")
    description = "Replace one person's first name by a random first name of the same gender."
    needs_parse = True
    preloads = (gender_of_first_name,)

    def perturb(self, row: Row, level: str, rng: random.Random) -> str | None:
        parsed = row_parse(row)
        if parsed is None:
            return None
        genders = gender_of_first_name()
        people = [(parsed.span_text(start, end).strip(), parsed.tokens[start])
                  for start, end, label in parsed.ents if label == "PERSON"]
        people = [(who, first) for who, first in people if first.text.capitalize() in genders]
        if not people:
            return None
        chosen = rng.choice(sorted({who for who, _first in people}))
        first_name = next(first for who, first in people if who == chosen).text.capitalize()
        new = other_name(first_name, genders[first_name], rng)
        edits = [(first.idx, first.idx + len(first.text), match_case(first.text, new))
                 for who, first in people if who == chosen]
        return replace_spans(parsed.text, edits)
