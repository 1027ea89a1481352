"""The rows a check-up scores, scoring without the score cache, and the texts the checks build.

Every check scores through :func:`direct_scores`: the scorer's own ``score_batch`` on the rows in
the order and chunk size asked for, with no score cache and no deduplication or sorting (the
shared scoring engine sorts inputs longest first and caches every score, which would hide the
very batch and order effects a check-up looks for). A fresh scorer is built per configuration
so an embedding cache inside a scorer cannot carry one configuration's
numbers into another (:func:`blindspot.checkup.checks.fresh_scorer`).
"""

from __future__ import annotations

import random
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from blindspot.scoring.engine import build_inputs

#: Common English words that most tokenizers keep as one token each: the irrelevant text
#: appended by the truncation check, so appended words and model tokens match one to one.
FILLER_WORDS = ("the", "and", "of", "to", "in", "is", "was", "for", "on", "as", "with", "by",
                "at", "from", "his", "her", "they", "but", "not", "are", "this", "have", "had",
                "one", "all", "were", "when", "there", "can", "more", "some", "time", "people",
                "year", "new", "city", "water", "house", "day", "man", "work", "world", "life")


@dataclass(frozen=True)
class CheckRows:
    """The rows checked: hypotheses (the gold texts), references (a list per row, or None when
    the data has none) and sources (or None)."""

    hypotheses: list[str]
    references: list[list[str]] | None
    sources: list[str] | None

    def __len__(self) -> int:
        return len(self.hypotheses)

    def with_hypotheses(self, hypotheses: Sequence[str]) -> CheckRows:
        return replace(self, hypotheses=list(hypotheses))

    def with_references(self, references: Sequence[list[str]]) -> CheckRows:
        return replace(self, references=[list(r) for r in references])

    def reversed(self) -> CheckRows:
        return CheckRows(self.hypotheses[::-1],
                         None if self.references is None else self.references[::-1],
                         None if self.sources is None else self.sources[::-1])

    def first(self, n: int) -> CheckRows:
        return CheckRows(self.hypotheses[:n],
                         None if self.references is None else self.references[:n],
                         None if self.sources is None else self.sources[:n])


def as_reference_lists(values: Sequence[Any] | None) -> list[list[str]] | None:
    """A references column (a text or a list of texts per row) as a list per row."""
    if values is None:
        return None
    return [[v] if isinstance(v, str) else list(v) for v in values]


def direct_scores(scorer: Any, spec: Any, rows: CheckRows, batch_size: int,
                  score_batch: Callable[[list[Any]], list[dict[str, float]]] | None = None
                  ) -> list[float]:
    """The spec's output per row, in the metric's own units, ``batch_size`` rows per call, in
    row order, with no cache. ``score_batch`` scores one batch elsewhere (a run's engine, so a
    Ray run scores on Ray); by default the scorer's own ``score_batch`` in this process."""
    inputs = build_inputs(scorer, rows.hypotheses,
                          rows.references if scorer.uses_references != "none" else None,
                          rows.sources if scorer.uses_source != "none" else None)
    key = spec.output or scorer.outputs[0]
    batch_scores = score_batch or scorer.score_batch
    scores: list[float] = []
    for start in range(0, len(inputs), batch_size):
        scores += [float(s[key]) for s in batch_scores(inputs[start: start + batch_size])]
    return scores


def filler(words: int, seed: int) -> str:
    """``words`` irrelevant words drawn from :data:`FILLER_WORDS` with ``seed``."""
    rng = random.Random(seed)
    return " ".join(rng.choice(FILLER_WORDS) for _ in range(words))


def appended(text: str, extra: str) -> str:
    return f"{text} {extra}" if extra else text


# -- normalisation variants ---------------------------------------------------------------------

#: Compatibility characters whose NFKC form is the plain text: the ligature, full-width digits.
COMPATIBILITY = {"fi": "\ufb01", "fl": "\ufb02", **{str(d): chr(0xFF10 + d) for d in range(10)}}
CURLY = {"'": "\u2019", '"': "\u201d"}


def compatibility_forms(text: str) -> str:
    """``text`` with ligatures and full-width digits: NFKC gives ``text`` back (when ``text``
    is NFKC already)."""
    for plain, compatible in COMPATIBILITY.items():
        text = text.replace(plain, compatible)
    return text


def curly_quotes(text: str) -> str:
    for straight, curly in CURLY.items():
        text = text.replace(straight, curly)
    return text


def straight_quotes(text: str) -> str:
    for straight, curly in CURLY.items():
        text = text.replace(curly, straight).replace("\u2018", "'").replace("\u201c", '"')
    return text


@dataclass(frozen=True)
class Variant:
    """A rewrite of the hypothesis that means the same text."""

    name: str
    description: str
    rewrite: Callable[[str], str]


NORMALISATION_VARIANTS = (
    Variant("nfkc_compatibility", "NFKC-equivalent compatibility forms (fi/fl ligatures, "
            "full-width digits) in place of NFKC text", compatibility_forms),
    Variant("nfd", "Unicode NFD (decomposed accents) in place of NFC",
            lambda t: unicodedata.normalize("NFD", t)),
    Variant("doubled_spaces", "every space doubled", lambda t: t.replace(" ", "  ")),
    Variant("trailing_whitespace", "trailing spaces and a newline", lambda t: t + "  \n"),
    Variant("curly_quotes", "straight quotes made curly", curly_quotes),
    Variant("straight_quotes", "curly quotes made straight", straight_quotes),
)


# -- sanity anchors ------------------------------------------------------------------------------


def shuffled_words(text: str, rng: random.Random) -> str:
    words = text.split()
    rng.shuffle(words)
    return " ".join(words)


def random_characters(text: str, rng: random.Random) -> str:
    letters = "abcdefghijklmnopqrstuvwxyz      "
    return "".join(rng.choice(letters) for _ in text).strip() or "x"


def anchor_hypotheses(rows: CheckRows, seed: int) -> dict[str, list[str] | None]:
    """Each anchor's hypothesis per row (None when the data lacks what it needs): the reference
    itself, the gold, the gold of the next row (an unrelated one), the copied source, an empty
    string, the gold's words shuffled and random characters of the gold's length (seeded)."""
    rng = random.Random(seed)
    n = len(rows)
    return {
        "reference": [r[0] for r in rows.references] if rows.references else None,
        "gold": list(rows.hypotheses),
        "unrelated_gold": [rows.hypotheses[(i + 1) % n] for i in range(n)] if n > 1 else None,
        "copied_source": list(rows.sources) if rows.sources else None,
        "empty": [""] * n,
        "shuffled_words": [shuffled_words(h, rng) for h in rows.hypotheses],
        "random_characters": [random_characters(h, rng) for h in rows.hypotheses],
    }


__all__ = ["FILLER_WORDS", "NORMALISATION_VARIANTS", "CheckRows", "Variant",
           "anchor_hypotheses", "appended", "as_reference_lists", "direct_scores", "filler"]
