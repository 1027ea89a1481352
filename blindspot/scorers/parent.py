"""PARENT (Dhingra et al., 2019): precision and recall of entailed n-grams, for data-to-text, with
its word-overlap entailment model; measured against the authors' ``table_text_eval.py``.

The table is the row's SOURCE. Give it as JSON: a list of ``[attribute, value]`` pairs (or
``[head, relation, tail]`` triples), or an object ``{"attribute": "value", ...}``; or as
WikiBio-style fields ``attribute|||value`` (WebNLG-style ``head|||relation|||tail``) separated by
tabs or lines. Any other source text is read as a table of one record whose value is the whole
text (so PARENT runs on any task, the source standing in for the table).

Texts and table entries are lower-cased and split on whitespace, as the authors' script reads its
files (tokenize first: "1990." is not "1990"). What a record states is its value (a triple's head
and tail); an n-gram g is entailed by the table with probability w(g) = (its tokens among the
stated tokens) / n. For n = 1..4, with #_G(g) and #_R(g) the counts of g in the generation and
the reference:

* entailed precision P_n = sum_g #_G(g) [p(g) + (1 - p(g)) w(g)] / sum_g #_G(g), where
  p(g) = min(1, #_R(g) / #_G(g)): an n-gram counts as correct when in the reference, and else as
  much as the table entails it (0 where the generation has no n-gram of the order);
* reference recall R_n = sum_g min(#_G(g), #_R(g)) w(g) / sum_g #_R(g) w(g) (1 where the table
  entails nothing of the reference's n-grams);
* table recall E_T = the mean over records of LCS(stated tokens, generation) / |stated tokens|.

As the script: a zero P_n or R_n of order 2..4 becomes 1e-5; P is the geometric mean of the
four, 0 when the unigram one is 0; R(ref) likewise, 1e-5 when its unigram one is 0; a zero E_T
becomes 1e-5; R = R(ref)^(1 - lambda) * E_T^lambda with lambda 0.5; PARENT = 2 P R / (P + R +
1e-8). With several references the one with the best F-score is kept. Outputs ``parent`` (the
F-score), ``parent_precision``, ``parent_recall``.

Option ``definition`` (:mod:`blindspot.scorers.definition`): ``"released"`` (default) is the
above; ``"paper"`` entails with every lexical item of the table, attribute names too (the paper's
T-bar; the script takes only what records state).
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

from blindspot.scorers.definition import check_definition
from blindspot.scoring.card import ModuleCard
from blindspot.scoring.scorer import Reference, ScoreInput, Scorer, register_scorer

_ORDER = 4
_SMOOTHING = 1e-5


def parent_tokens(text: str) -> list[str]:
    """The script's tokens: lower-cased, split on whitespace."""
    return text.lower().split()


@dataclass(frozen=True)
class Record:
    """One record of a table: an attribute and its value, or a triple's relation and tail with
    its head as ``subject``."""

    attribute: str
    value: str
    subject: str = ""

    def stated(self) -> list[str]:
        """The tokens the record states: its value (a triple's head and tail)."""
        return parent_tokens(self.subject) + parent_tokens(self.value)


def _record(parts: Sequence[str]) -> Record:
    parts = [str(p).strip() for p in parts]
    return Record(parts[0], parts[1]) if len(parts) == 2 else Record(parts[1], parts[2], parts[0])


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
            return [_record(r) for r in data]
    fields = [f for f in re.split(r"[\t\n]", text) if f.strip()]
    if fields and all(f.count("|||") in (1, 2) for f in fields):
        return [_record(f.split("|||")) for f in fields]
    return [Record("", text)]


def _ngrams(tokens: Sequence[str], n: int) -> Counter[tuple[str, ...]]:
    return Counter(tuple(tokens[i: i + n]) for i in range(len(tokens) - n + 1))


def _geometric(values: Sequence[float]) -> float:
    """The geometric mean of the orders' values, 0 when one is 0 (after the script's smoothing)."""
    if any(v == 0.0 for v in values):
        return 0.0
    return math.exp(math.fsum(math.log(v) / len(values) for v in values))


def _smooth_orders(values: list[float]) -> list[float]:
    """The script's smoothing: a zero of order 2..4 becomes 1e-5 (order 1 stays)."""
    return values[:1] + [v if v else _SMOOTHING for v in values[1:]]


@dataclass(frozen=True)
class ParentScore:
    precision: float
    recall: float
    f: float


def parent(generation: str, reference: str, table: Sequence[Record],
           lambda_weight: float = 0.5, definition: str = "released") -> ParentScore:
    """PARENT of one generation against one reference and its table."""
    gen, ref = parent_tokens(generation), parent_tokens(reference)
    table_words = {w for r in table for w in r.stated()}
    if definition == "paper":
        table_words |= {w for r in table for w in parent_tokens(r.attribute)}

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
        precisions.append(numerator / denominator if denominator else 0.0)
        numerator = denominator = 0.0
        for g, count in ref_counts.items():
            weight = entailed(g)
            numerator += min(count, gen_counts[g]) * weight
            denominator += count * weight
        recalls.append(numerator / denominator if denominator else 1.0)
    precision = _geometric(_smooth_orders(precisions))
    ref_recall = _geometric(_smooth_orders(recalls)) or _SMOOTHING
    stated = [v for v in (r.stated() for r in table) if v]
    table_recall = (sum(LCSseq.similarity(v, gen) / len(v) for v in stated) / len(stated)
                    if stated else 1.0) or _SMOOTHING
    recall = math.exp((1.0 - lambda_weight) * math.log(ref_recall)
                      + lambda_weight * math.log(table_recall))
    return ParentScore(precision, recall, 2 * precision * recall / (precision + recall + 1e-8))


_PARENT_CARD = ModuleCard(
    title="PARENT", emoji="📋",
    summary=("PARENT, precision and recall of table-entailed n-grams for data-to-text, on "
             "blindspot's cached scoring layer."),
    description="""\
PARENT (Dhingra et al., 2019): Precision And Recall of Entailed N-grams from the Table, for
data-to-text generation.

Each row needs its TABLE as ``sources``: a JSON list of ``[attribute, value]`` pairs (or
``[head, relation, tail]`` triples), a JSON object ``{"attribute": "value"}``, or WikiBio-style
``attribute|||value`` (WebNLG-style ``head|||relation|||tail``) fields separated by tabs or
newlines; any other text is one record whose value is the whole text. An n-gram of the
generation counts as correct when the reference has it, or as far as the table entails it (the
share of its words among the values the table states); recall mixes recall of the
table-entailed reference n-grams with recall of the table's values (LCS), lambda 0.5; ``parent``
is their F-score. As the authors' ``table_text_eval.py`` (equal to its recorded outputs on 40
rows): texts are lower-cased and split on whitespace (tokenize first: "1990." is not "1990"),
with its smoothing. ``definition="paper"`` entails with attribute names too (the paper's T-bar).
``use_aggregator=False`` gives per-row scores, what ``blindspot run --metrics parent`` judges (the
run's sources are the tables).""",
    examples="""\
>>> import evaluate
>>> parent = evaluate.load("blindspot/parent")
>>> table = '[["name", "john"], ["born", "1990"]]'
>>> out = parent.compute(predictions=["john born in 1990"],
...                      references=["john was born in 1990"], sources=[table])
>>> {key: round(value, 4) for key, value in out.items()}
{'parent': 0.3129, 'parent_precision': 0.726, 'parent_recall': 0.1994}
>>> out = parent.compute(predictions=["john born in 1990"], references=["john was born in 1990"],
...                      sources=[table], definition="paper")
>>> round(out["parent_precision"], 4)  # the attribute "born" entails too
0.8891
>>> out = parent.compute(predictions=["john was born in 1990", "mary was born in 1990"],
...                      references=["john was born in 1990"] * 2,
...                      sources=["name|||john\\tborn|||1990"] * 2, use_aggregator=False)
>>> [round(v, 4) for v in out["parent"]]
[1.0, 0.5722]
""",
    inputs="""\
Args:
    predictions (list of str): generated texts.
    references (list of str or list of list of str): references per prediction.
    sources (list of str): the table of each row (JSON pairs or object, or attribute|||value).
    lambda_weight (float): weight of table recall against reference recall, default 0.5.
    definition (str): "released" (default): the authors' script; "paper": the paper's T-bar.
    use_aggregator (bool): True (default): the mean over rows; False: one score per row.
Returns:
    parent, parent_precision, parent_recall: in [0, 1], higher is better.
""",
    citation="""\
@inproceedings{dhingra-etal-2019-handling,
    title = "Handling Divergent Reference Texts when Evaluating Table-to-Text Generation",
    author = "Dhingra, Bhuwan and Faruqui, Manaal and Parikh, Ankur and Chang, Ming-Wei and Das, Dipanjan and Cohen, William",
    booktitle = "Proceedings of the 57th Annual Meeting of the Association for Computational Linguistics",
    year = "2019",
    pages = "4884--4895",
}
""",  # noqa: E501
    sections="""\
## Metric description
PARENT (Dhingra et al., 2019): Precision And Recall of Entailed N-grams from the Table, for
data-to-text generation.

Each row needs its TABLE as ``sources``: a JSON list of ``[attribute, value]`` pairs (or
``[head, relation, tail]`` triples), a JSON object ``{"attribute": "value"}``, or WikiBio-style
``attribute|||value`` (WebNLG-style ``head|||relation|||tail``) fields separated by tabs or
newlines; any other text is one record whose value is the whole text. An n-gram of the
generation counts as correct when the reference has it, or as far as the table entails it (the
share of its words among the values the table states); recall mixes recall of the
table-entailed reference n-grams with recall of the table's values (LCS), lambda 0.5; ``parent``
is their F-score. As the authors' ``table_text_eval.py`` (equal to its recorded outputs on 40
rows): texts are lower-cased and split on whitespace (tokenize first: "1990." is not "1990"),
with its smoothing. ``definition="paper"`` entails with attribute names too (the paper's T-bar).
``use_aggregator=False`` gives per-row scores, what ``blindspot run --metrics parent`` judges (the
run's sources are the tables).

Offline after `make env`: `evaluate.load("blindspot/parent")`; `blindspot run --data demo --metrics parent` judges the
per-row scores. The full list of metrics the papers examine, with what is left out and why:
`docs/metrics.md`.
""",  # noqa: E501
)


@register_scorer
class Parent(Scorer):
    """PARENT F-score, precision and recall in [0, 1]; the table is the row's source."""

    name = "parent"
    card = _PARENT_CARD
    outputs = ("parent", "parent_precision", "parent_recall")
    model_option = None
    kind = "lexical"
    uses_references = "required"
    uses_source = "required"
    natural_ranges = MappingProxyType({None: (0.0, 1.0)})
    default_batch_size = 256
    #: 2: the authors' script by default (whitespace tokens, what records state, its smoothing)
    version = "2"
    reference = Reference("table_text_eval.py (google-research/language @ 865fae6)",
                          max_abs_diff=1e-9, rows=40)

    def __init__(self, lambda_weight: float = 0.5, definition: str = "released") -> None:
        if (isinstance(lambda_weight, bool) or not isinstance(lambda_weight, (int, float))
                or not 0.0 <= lambda_weight <= 1.0):
            raise ValueError(f"parent option lambda_weight must be a number in [0, 1], got "
                             f"{lambda_weight!r}")
        super().__init__(lambda_weight=float(lambda_weight),
                         definition=check_definition(definition, "parent"))

    def score_batch(self, batch: Sequence[ScoreInput]) -> list[dict[str, float]]:
        rows = []
        for item in batch:
            table = parse_table(item.source)
            best = max((parent(item.hypothesis, ref, table, self.config["lambda_weight"],
                               self.config["definition"])
                        for ref in item.references), key=lambda s: s.f)
            rows.append({"parent": best.f, "parent_precision": best.precision,
                         "parent_recall": best.recall})
        return rows
