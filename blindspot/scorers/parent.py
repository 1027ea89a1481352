"""PARENT (Dhingra et al., 2019): precision and recall of entailed n-grams, for data-to-text,
written from the paper's definition with its word-overlap entailment model.

The table is the row's SOURCE. Give it as JSON: a list of ``[attribute, value]`` pairs (or
``[entity, attribute, value]`` triples), or an object ``{"attribute": "value", ...}``; or as
WikiBio-style lines / tab-separated fields ``attribute|||value``. Any other source text is read
as a table of one record whose value is the whole text (so PARENT runs on any task, the source
standing in for the table).

With T-bar the tokens of all attributes and values, an n-gram g is entailed by the table with
probability w(g) = (its tokens found in T-bar) / n. For n = 1..4, with #_G(g) and #_R(g) the
counts of g in the generation and the reference:

* entailed precision P_n = sum_g #_G(g) [p(g) + (1 - p(g)) w(g)] / sum_g #_G(g), where
  p(g) = min(1, #_R(g) / #_G(g)): an n-gram counts as correct when in the reference, and else as
  much as the table entails it;
* reference recall R_n = sum_g min(#_G(g), #_R(g)) w(g) / sum_g #_R(g) w(g), over the
  reference's n-grams, each weighted by how much the table entails it;
* table recall E_T = the mean over records of LCS(value tokens, generation) / |value tokens|.

P and R(ref) are the geometric means over the orders n that have a denominator (a 3-word text has
no 4-grams to judge), each zero replaced by 1e-5 as smoothing (a text with no n-gram at all, or a
reference the table entails nothing of, gives 0 precision / 1 recall there); recall
R = R(ref)^(1 - lambda) * E_T^lambda with lambda 0.5; PARENT = 2 P R / (P + R). Outputs
``parent`` (the F-score), ``parent_precision``, ``parent_recall``. Tokens: lower-cased words.
With several references, the one with the best F-score is kept.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from types import MappingProxyType

from rapidfuzz.distance import LCSseq

from blindspot.scoring.scorer import ScoreInput, Scorer, register_scorer

_WORD = re.compile(r"\w+")
_ORDER = 4
_SMOOTHING = 1e-5


def parent_tokens(text: str) -> list[str]:
    """Lower-cased words (punctuation dropped)."""
    return _WORD.findall(text.lower())


@dataclass(frozen=True)
class Record:
    attribute: str
    value: str


def parse_table(source: str | None) -> list[Record]:
    """A row's table (see the module's docstring for the accepted forms); None is no table."""
    if source is None or not source.strip():
        return []
    text = source.strip()
    if text[:1] in "[{":
        try:
            data = json.loads(text)
        except json.JSONDecodeError:
            data = None
        if isinstance(data, dict):
            return [Record(str(k), str(v)) for k, v in data.items()]
        if isinstance(data, list) and all(isinstance(r, list) and len(r) in (2, 3) for r in data):
            return [Record(str(r[-2]), str(r[-1])) for r in data]
    fields = [f for f in re.split(r"[\t\n]", text) if f.strip()]
    if fields and all("|||" in f for f in fields):
        return [Record(*(part.strip() for part in f.split("|||", 1))) for f in fields]
    return [Record("", text)]


def _ngrams(tokens: Sequence[str], n: int) -> Counter[tuple[str, ...]]:
    return Counter(tuple(tokens[i: i + n]) for i in range(len(tokens) - n + 1))


def _geometric(values: Sequence[float]) -> float:
    return math.exp(sum(math.log(max(v, _SMOOTHING)) for v in values) / len(values))


@dataclass(frozen=True)
class ParentScore:
    precision: float
    recall: float
    f: float


def parent(generation: str, reference: str, table: Sequence[Record],
           lambda_weight: float = 0.5) -> ParentScore:
    """PARENT of one generation against one reference and its table."""
    gen, ref = parent_tokens(generation), parent_tokens(reference)
    table_words = {w for r in table for w in parent_tokens(f"{r.attribute} {r.value}")}

    def entailed(ngram: tuple[str, ...]) -> float:
        return sum(w in table_words for w in ngram) / len(ngram)

    precisions, recalls = [], []
    for n in range(1, _ORDER + 1):
        gen_counts, ref_counts = _ngrams(gen, n), _ngrams(ref, n)
        numerator = denominator = 0.0
        for g, count in gen_counts.items():
            in_ref = min(1.0, ref_counts[g] / count)
            numerator += count * (in_ref + (1.0 - in_ref) * entailed(g))
            denominator += count
        if denominator:
            precisions.append(numerator / denominator)
        numerator = denominator = 0.0
        for g, count in ref_counts.items():
            weight = entailed(g)
            numerator += min(count, gen_counts[g]) * weight
            denominator += count * weight
        if denominator:
            recalls.append(numerator / denominator)
    precision = _geometric(precisions) if precisions else 0.0
    ref_recall = _geometric(recalls) if recalls else 1.0
    values = [parent_tokens(r.value) for r in table]
    values = [v for v in values if v]
    table_recall = (sum(LCSseq.similarity(v, gen) / len(v) for v in values) / len(values)
                    if values else 1.0)
    recall = (ref_recall ** (1.0 - lambda_weight)
              * max(table_recall, _SMOOTHING) ** lambda_weight)
    f = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return ParentScore(precision, recall, f)


@register_scorer
class Parent(Scorer):
    """PARENT F-score, precision and recall in [0, 1]; the table is the row's source."""

    name = "parent"
    outputs = ("parent", "parent_precision", "parent_recall")
    model_option = None
    kind = "lexical"
    uses_references = "required"
    uses_source = "required"
    natural_ranges = MappingProxyType({None: (0.0, 1.0)})
    default_batch_size = 256

    def __init__(self, lambda_weight: float = 0.5) -> None:
        if (isinstance(lambda_weight, bool) or not isinstance(lambda_weight, (int, float))
                or not 0.0 <= lambda_weight <= 1.0):
            raise ValueError(f"parent option lambda_weight must be a number in [0, 1], got "
                             f"{lambda_weight!r}")
        super().__init__(lambda_weight=float(lambda_weight))

    def score_batch(self, batch: Sequence[ScoreInput]) -> list[dict[str, float]]:
        rows = []
        for item in batch:
            table = parse_table(item.source)
            best = max((parent(item.hypothesis, ref, table, self.config["lambda_weight"])
                        for ref in item.references), key=lambda s: s.f)
            rows.append({"parent": best.f, "parent_precision": best.precision,
                         "parent_recall": best.recall})
        return rows
