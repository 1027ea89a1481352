"""A rule-based perturbation made from the patterns a search found, registered in the catalogue
at run time so that the rank protocol can run it on a whole dataset.

The blind-spots paper (Appendix J) turned the patterns it found against BERTScore (pronoun swaps
and the like) into general noise rules and found that they did not generalise to the whole WMT
set: the adversarial edits fool the metric only on some hypotheses. :func:`register_rules` makes
that experiment one call for any metric.

Rules, from the top-ranked patterns of a search (the edits of those patterns, as found):

* replacements become a substitution table (lower-cased word -> the words it was replaced by, most
  frequent first; ties alphabetical); a row's word is replaced by one of them, chosen by the
  row's random stream, in the word's capitalisation with its punctuation kept;
* deletions become a list of words to delete;
* a ``number_shift`` pattern becomes a rule for every number: digits get their last group + 1
  (``1940`` -> ``1941``, ``21:30`` -> ``21:31``), number words the next one (``seven`` ->
  ``eight``; ``twenty`` -> ``nineteen``).

The perturbation's level r is a ratio, as the other word-level tests: ceil(r * n) of the row's
words that a rule matches (n = its word count) are changed, at positions drawn from the row's
random stream; a row with no matching word is left unchanged (``applied=False``). Its levels are
r/2, r and 2r for the search's target noise ratio r, on every task. The name is
``search_<metric>_<hash of the rules>``, so the same rules always get the same name.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import re
import sys
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from blindspot.perturbations.perturbation import REGISTRY, TASKS, Perturbation, Ratio, Row, register
from blindspot.search.candidates import match_case, split_word
from blindspot.search.patterns import NUMBER_WORDS, ORDINAL_WORDS, core, is_number

CATEGORY = "search"
_LAST_DIGITS = re.compile(r"(\d+)(?!.*\d)")


def shift_number(word: str) -> str | None:
    """``word``'s core shifted by one (digits: last group + 1; number words: the next), or None."""
    parts = split_word(word)
    lower = parts.core.lower()
    for table in (NUMBER_WORDS, ORDINAL_WORDS):
        if lower in table:
            index = table.index(lower)
            new = table[index + 1] if index + 1 < len(table) else table[index - 1]
            return parts.with_core(match_case(parts.core, new))
    match = _LAST_DIGITS.search(parts.core)
    if match is None:
        return None
    digits = match.group(1)
    shifted = str(int(digits) + 1).zfill(len(digits))
    return parts.with_core(parts.core[:match.start(1)] + shifted + parts.core[match.end(1):])


@dataclass(frozen=True)
class PatternRules:
    """What the generated perturbation does: substitutions, deletions, and number shifts."""

    metric: str
    patterns: tuple[str, ...]
    substitutions: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    deletions: tuple[str, ...] = ()
    number_shift: bool = False

    def as_json(self) -> dict[str, Any]:
        return {"metric": self.metric, "patterns": list(self.patterns),
                "substitutions": {k: list(v) for k, v in sorted(self.substitutions.items())},
                "deletions": sorted(self.deletions), "number_shift": self.number_shift}

    def name(self) -> str:
        """``search_<metric>_<8 hex digits of the rules>``: stable for the same rules."""
        digest = hashlib.sha256(json.dumps(self.as_json(), sort_keys=True).encode()).hexdigest()
        metric = re.sub(r"[^a-z0-9]+", "_", self.metric.lower()).strip("_")
        return f"search_{metric}_{digest[:8]}"

    def matches(self, word: str) -> bool:
        lower = core(word)
        return bool(lower) and (lower in self.substitutions or lower in self.deletions
                                or (self.number_shift and is_number(lower)))

    def apply(self, word: str, rng: random.Random) -> str | None:
        """The new word (None: delete it) for a word that :meth:`matches`."""
        lower = core(word)
        if lower in self.substitutions:
            parts = split_word(word)
            return parts.with_core(match_case(parts.core, rng.choice(self.substitutions[lower])))
        if self.number_shift and is_number(lower):
            shifted = shift_number(word)
            if shifted is not None:
                return shifted
        return None if lower in self.deletions else word

    def perturb(self, text: str, level: float, rng: random.Random) -> str | None:
        """``text`` with ceil(level * n) matching words changed (None when none matches)."""
        words = text.split()
        positions = [i for i, w in enumerate(words) if self.matches(w)]
        if not positions:
            return None
        chosen = set(rng.sample(positions, min(len(positions), math.ceil(level * len(words)))))
        out = []
        for i, word in enumerate(words):
            new = self.apply(word, rng) if i in chosen else word
            if new is not None:
                out.append(new)
        return " ".join(out) if out else None


def rules_from_edits(metric: str, edits: Sequence[Mapping[str, Any]],
                     patterns: Sequence[str]) -> PatternRules:
    """Rules from the edits (``pattern``, ``old``, ``new``) of the chosen ``patterns``."""
    chosen = [e for e in edits if e["pattern"] in patterns]
    shift = "number_shift" in patterns
    table: dict[str, Counter[str]] = defaultdict(Counter)
    deletions: set[str] = set()
    for edit in chosen:
        old = core(edit["old"])
        if edit["new"] is None:
            deletions.add(old)
        elif not (shift and edit["pattern"] == "number_shift"):
            table[old][core(edit["new"])] += 1
    substitutions = {old: tuple(w for w, _ in sorted(c.items(), key=lambda kv: (-kv[1], kv[0])))
                     for old, c in table.items()}
    return PatternRules(metric, tuple(patterns), substitutions, tuple(sorted(deletions)), shift)


def rules_from_results(results: Mapping[str, Any], top: int = 3) -> PatternRules:
    """Rules from the ``top`` ranked patterns of a search's results."""
    patterns = [p["pattern"] for p in results["patterns"][:top]]
    if not patterns:
        raise ValueError("the search found no edit, so there is no pattern to make rules from")
    edits = [e for example in results["examples"] for e in example["trail"]]
    return rules_from_edits(results["config"]["metric"]["name"], edits, patterns)


class SearchPatternPerturbation(Perturbation):
    """Base class of the generated perturbations: applies its class's :class:`PatternRules`."""

    rules: ClassVar[PatternRules]
    category = CATEGORY
    level_kind = Ratio(0.0, 1.0)
    deterministic = False

    def perturb(self, row: Row, level: float, rng: random.Random) -> str | None:
        return self.rules.perturb(row.text, level, rng)


def rule_levels(noise_ratio: float) -> tuple[float, ...]:
    """r/2, r and 2r (at most 1) for a target noise ratio r."""
    return tuple(sorted({round(noise_ratio / 2, 6), round(noise_ratio, 6),
                         round(min(1.0, 2 * noise_ratio), 6)}))


def register_rules(rules: PatternRules, noise_ratio: float = 0.1) -> str:
    """Register ``rules`` as a perturbation (category ``search``) and return its name.

    Registering the same rules again returns the same name. The class is also bound in this
    module under its name, so it pickles by reference (worker processes, ``datasets`` hashing).
    """
    name = rules.name()
    if name not in REGISTRY:
        levels = rule_levels(noise_ratio)
        description = ("Rules from an adversarial search against " + rules.metric + ": "
                       + ", ".join(rules.patterns))
        cls = type(name, (SearchPatternPerturbation,), {
            "name": name, "description": description, "rules": rules,
            "levels": {task: levels for task in TASKS}, "__module__": __name__,
            "__qualname__": name, "paper": "He et al. 2023, Appendix J (search)"})
        setattr(sys.modules[__name__], name, cls)
        register(cls)
    return name


def register_patterns(results: Mapping[str, Any], top: int = 3) -> str:
    """One call from a search's results to a registered perturbation of its ``top`` patterns
    (at the search's noise ratio); returns the name to run, e.g.
    ``run_blindspot(data, metric, tests=register_patterns(results))``."""
    return register_rules(rules_from_results(results, top), results["config"]["noise_ratio"])
