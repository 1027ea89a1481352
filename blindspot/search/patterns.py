"""Edit patterns: what kind of change each edit of the search is, and which kinds fool a metric.

The blind-spots paper (Appendix J, Table 18) found by inspection that the perturbations BERTScore
does not penalise are mostly article swaps (a -> an), number shifts (seven -> eight, date and
time offsets) and pronoun swaps (he -> they, this -> these). Here every edit is classified by a
registry of patterns, tried in order (the first that matches names the edit), and the patterns
are ranked over a whole run: the pattern the greedy search picked most often fooled the metric
most often (ties: the smaller mean score drop per edit first, then the name).

Word classes are small closed lists of English function words (facts of English grammar); a
number is written in digits (``1940``, ``21:30``, ``1,000``, ``3rd``) or as an English number
word (``seven``, ``seventh``, ``hundred``).
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from blindspot.perturbations.article_removal import ARTICLES
from blindspot.search.candidates import split_word

DEMONSTRATIVES = frozenset({"this", "that", "these", "those"})
PRONOUNS = frozenset({
    "i", "me", "my", "mine", "myself", "you", "your", "yours", "yourself", "yourselves",
    "he", "him", "his", "himself", "she", "her", "hers", "herself", "it", "its", "itself",
    "we", "us", "our", "ours", "ourselves", "they", "them", "their", "theirs", "themselves",
    "one", "someone", "somebody", "everyone", "everybody", "nobody", "anyone", "who", "whom",
    "whose", "which"})
PREPOSITIONS = frozenset({
    "about", "above", "across", "after", "against", "along", "among", "around", "at", "before",
    "behind", "below", "beneath", "beside", "between", "beyond", "by", "despite", "down",
    "during", "except", "for", "from", "in", "inside", "into", "like", "near", "of", "off", "on",
    "onto", "out", "outside", "over", "past", "since", "through", "throughout", "to", "toward",
    "towards", "under", "until", "up", "upon", "via", "with", "within", "without"})
CONJUNCTIONS = frozenset({
    "and", "or", "but", "nor", "so", "yet", "because", "although", "though", "while", "whereas",
    "if", "unless", "when", "whether", "as", "than", "once"})
AUXILIARIES = frozenset({
    "be", "am", "is", "are", "was", "were", "been", "being", "have", "has", "had", "having", "do",
    "does", "did", "will", "would", "shall", "should", "can", "could", "may", "might", "must"})
NEGATIONS = frozenset({"not", "no", "never", "none", "nothing", "neither", "n't", "cannot"})
OTHER_FUNCTION_WORDS = frozenset({
    "all", "any", "both", "each", "either", "every", "few", "many", "more", "most", "much", "other",
    "some", "such", "there", "here", "then", "also", "only", "just", "very", "too", "again",
    "still", "even", "what", "where", "why", "how"})
FUNCTION_WORDS = (ARTICLES | DEMONSTRATIVES | PRONOUNS | PREPOSITIONS | CONJUNCTIONS
                  | AUXILIARIES | NEGATIONS | OTHER_FUNCTION_WORDS)

NUMBER_WORDS = (
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
    "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen",
    "nineteen", "twenty")
ORDINAL_WORDS = (
    "zeroth", "first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth",
    "tenth", "eleventh", "twelfth", "thirteenth", "fourteenth", "fifteenth", "sixteenth",
    "seventeenth", "eighteenth", "nineteenth", "twentieth")
_NUMBER_WORDS = frozenset(NUMBER_WORDS + ORDINAL_WORDS + (
    "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety", "hundred", "thousand",
    "million", "billion", "dozen", "half"))
_DIGITS = re.compile(r"^\d[\d.,:/\-]*(?:st|nd|rd|th|s|%)?$", re.IGNORECASE)


def is_number(word: str) -> bool:
    """A number in digits (``1940``, ``21:30``, ``3rd``) or an English number word."""
    return bool(_DIGITS.match(word)) or word.lower() in _NUMBER_WORDS


def core(word: str | None) -> str:
    """The lower-cased core of a whitespace word (punctuation around it stripped)."""
    return split_word(word or "").core.lower()


def _same_stem(old: str, new: str) -> bool:
    """Two forms of one word (react/reacts, drive/driver): a shared prefix of at least four
    letters covering all but at most three letters of the longer one."""
    shared = 0
    for a, b in zip(old, new, strict=False):
        if a != b:
            break
        shared += 1
    return shared >= 4 and max(len(old), len(new)) - shared <= 3


def _both(words: frozenset[str]) -> Callable[[str, str | None], bool]:
    return lambda old, new: new is not None and old in words and new in words


def _deleted(test: Callable[[str], bool]) -> Callable[[str, str | None], bool]:
    return lambda old, new: new is None and test(old)


@dataclass(frozen=True)
class Pattern:
    """A kind of edit: its name, what it is, and the test on (old core, new core or None)."""

    name: str
    description: str
    matches: Callable[[str, str | None], bool]


PATTERNS: list[Pattern] = [
    Pattern("article_swap", "an article replaced by another (a -> an, the -> a)", _both(ARTICLES)),
    Pattern("number_shift", "a number replaced by another (seven -> eight, 1940 -> 1941)",
            lambda old, new: new is not None and is_number(old) and is_number(new)),
    Pattern("pronoun_swap", "a pronoun replaced by another (he -> they, his -> their)",
            _both(PRONOUNS)),
    Pattern("demonstrative_swap", "a demonstrative replaced by another (this -> these)",
            _both(DEMONSTRATIVES)),
    Pattern("preposition_swap", "a preposition replaced by another (in -> on)",
            _both(PREPOSITIONS)),
    Pattern("conjunction_swap", "a conjunction replaced by another (and -> or)",
            _both(CONJUNCTIONS)),
    Pattern("auxiliary_swap", "an auxiliary or modal verb replaced by another (is -> was)",
            _both(AUXILIARIES)),
    Pattern("negation_flip", "a negation word replaced, or a word replaced by a negation",
            lambda old, new: new is not None and (old in NEGATIONS) != (new in NEGATIONS)),
    Pattern("inflection_change", "another form of the same word (reacts -> react)",
            lambda old, new: new is not None and _same_stem(old, new)),
    Pattern("function_word_swap", "a function word replaced by another function word",
            _both(FUNCTION_WORDS)),
    Pattern("content_word_swap", "a content word replaced (fast -> quick), or any other swap",
            lambda old, new: new is not None),
    Pattern("article_deletion", "an article deleted", _deleted(lambda w: w in ARTICLES)),
    Pattern("negation_deletion", "a negation word deleted", _deleted(lambda w: w in NEGATIONS)),
    Pattern("number_deletion", "a number deleted", _deleted(is_number)),
    Pattern("function_word_deletion", "a function word deleted (of, and, is...)",
            _deleted(lambda w: w in FUNCTION_WORDS)),
    Pattern("content_word_deletion", "a content word deleted", _deleted(lambda w: True)),
]
PATTERN_INDEX: dict[str, Pattern] = {p.name: p for p in PATTERNS}


def classify(old: str, new: str | None) -> str:
    """The name of the first pattern that matches replacing ``old`` by ``new`` (None: deletion)."""
    old_core = core(old)
    new_core = None if new is None else core(new)
    for pattern in PATTERNS:
        if pattern.matches(old_core, new_core):
            return pattern.name
    return "content_word_swap"  # unreachable: the last swap and deletion patterns match anything


def edit_label(old: str, new: str | None) -> str:
    """``"a -> an"`` or ``"of -> (deleted)"``, lower-cased cores: how a pair is counted."""
    return f"{core(old)} -> {core(new) if new is not None else '(deleted)'}"


def rank_patterns(edits: Iterable[Mapping[str, Any]], top_pairs: int = 5) -> list[dict[str, Any]]:
    """Patterns ranked by how often the search picked them over a run's edits.

    Each edit needs ``pattern``, ``old``, ``new``, ``example`` and ``score_change`` (the edit's
    change of the targeted metric, in percent of the gold's score). Returns one entry per pattern
    seen: count, examples, mean score change, and its most frequent concrete pairs.
    """
    groups: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for edit in edits:
        groups[edit["pattern"]].append(edit)
    ranked: list[dict[str, Any]] = []
    for name, items in groups.items():
        changes = [float(e["score_change"]) for e in items]
        pairs = Counter(edit_label(e["old"], e["new"]) for e in items)
        frequent = sorted(pairs.items(), key=lambda kv: (-kv[1], kv[0]))[:top_pairs]
        ranked.append({
            "pattern": name, "description": PATTERN_INDEX[name].description,
            "count": len(items), "examples": len({e["example"] for e in items}),
            "mean_score_change": sum(changes) / len(changes),
            "pairs": [{"edit": pair, "count": n} for pair, n in frequent],
        })
    ranked.sort(key=lambda p: (-p["count"], -p["mean_score_change"], p["pattern"]))
    for rank, entry in enumerate(ranked, 1):
        entry["rank"] = rank
    return ranked
