"""The ``results.json`` schema of a blind-spot run: one place that says what every field means.

A run's results are plain JSON (no timestamps, no timings, no absolute paths), so two runs with
the same inputs and seeds give byte-identical files. Consumers check ``schema_version`` first; it
is bumped whenever a field changes meaning or is removed. Adding a field does not bump it (every
reader of the version still reads the file, and a file written before the field was added still
passes the generated schema, where the new field is optional): :data:`CHANGELOG` lists such
additions under the version they were added to.
A rank run's results are typed (:class:`RunResult` and the classes it holds, whose fields are the
keys below in file order); :func:`results_schema` generates the file's JSON Schema from them.

Layout (dict keys keep the run's order: datasets and metrics as given, tests in plan order)::

    {
      "schema_version": 2,
      "protocol": "rank",                  # the registry name (blindspot.protocols.interface)
      "tool": {"name": "blindspot", "version": "0.1.0"},
      "config": {"tests": [...], "seeds": [1, 2, 3, 4, 5], "noise_cap": 0.6,
                 "tolerance": 1e-05, "worst_examples": 3, "metrics": [<metric spec>, ...]},
      "datasets": {
        "<dataset name>": {
          "task": "summarization", "rows": 100, "fingerprint": "<sha256 of the inputs>",
          "columns": {"id": "id", "hypothesis": "gold", "references": "references",
                      "source": "source"},
          "skipped_tests": {"bert_diverge": "needs mlm (--mlm)"},
          "metrics": {
            "<metric display name, e.g. rouge.rougeL>": {
              "metric": "rouge", "output": "rougeL", "options": {...},
              "higher_is_better": true,          # false: the score was negated before judging
              "corpus_level": false,
              "error": null,                     # a message when the metric could not run at all
              "signature": "blindspot:0.1.0|metric:rouge.rougeL|model:-|opts:..|prec:-|dev:-|"
                           "torch:-|tf:-|lib:rouge-score-0.1.2|seeds:1,2",
                          # what produced the numbers (blindspot.scoring.signature); absent
                          # when the metric could not be built
              "gold": {"score_mean": .., "score_std": .., "n": .., "n_nan": ..},
              "anchors": {"reference": .., "gold": .., "unrelated_gold": .., "copied_source": ..,
                          "empty": .., "shuffled_words": .., "random_characters": ..} | null,
                          # mean scores over the first 8 gold rows (blindspot.scoring.anchors)
              "tests": {
                "<canonical test name>": {
                  "test": "truncation", "category": "fluency",
                  "rule": "monotone_decrease",    # the verdict rule the test declares
                  "status": "pass" | "fail" | "error" | "undecided",
                  "passed": true | false | null,  # null unless status is pass or fail
                  "reason": null | "why undecided",
                  "error": null | "message (status error)",
                  "explanation": null | "rises 0.4% of gold from level 0.2 to level 0.3",
                  "within_noise": null | true | false,   # a fail only: could more rows or
                                                         # seeds change it?
                  "deciding": null | {            # the comparison the explanation names
                    "from": "0.2", "to": "0.3",   # levels ("gold" for the gold point)
                    "change": 0.003,              # score(to) - score(from), higher = better
                    "relative_change": 0.4,       # that change in percent of gold (null: gold 0)
                    "seeds_spread": 0.01,         # the two points' population stds added
                    "ci_low": .., "ci_high": ..}, # 95% paired bootstrap interval over rows of
                                                  # the change (null for corpus-level metrics)
                  "relative_change": -4.2,        # of the rule's headline point, in percent
                  "absolute_change": -0.02,       # the same point's score minus gold
                  "points": [                     # gold first, then levels by noise ratio
                    {"level": "gold" | "0.1", "noise_ratio": 0.0, "noise_ratio_std": 0.0,
                     "score_mean": .., "score_std": ..,   # mean / population std over seeds
                     "n": ..,                              # finite row scores behind the mean
                     "n_seeds": .., "n_nan": .., "relative_change": .., "judged": true}],
                  "per_sample": [                 # one per noised level (per-row metrics only)
                    {"level": "0.1", "n": .., "fraction_noised_ge_gold": ..,
                     "mean_difference": ..,        # gold - noised, mean over rows and seeds
                     "wilcoxon_p": .., "ci_low": .., "ci_high": ..}],
                  "worst_examples": [             # rows the noise lowered least (or raised)
                    {"id": .., "level": "0.1", "seed": 1, "gold": "...", "perturbed": "...",
                     "gold_score": .., "perturbed_score": .., "difference": ..}]
                }},
              "expectations": [                   # only when the run has examination tests
                {"expectation": "decreasing_with_intensity" | "negation_drops_sharply"
                                | "det_drop_hurts_least",
                 "tests": ["word_swap"], "passed": true | false | null,
                 "reason": null | "why undecided (or which comparison failed)",
                 "values": {"gold": .., "0.25": .., ...}}]   # the numbers compared
            }}}}
    }

``status``: ``pass``/``fail`` follow the test's verdict ``rule``
(:data:`blindspot.judging.RULES`): ``monotone_decrease``, the rank protocol (PROTOCOLS.md
§1) over the points below the noise cap; ``below_gold``, every level scores below gold whatever its
noise ratio (copy-source, injection, repetition, frequent n-gram); ``per_position_drop``, every
level drops below gold beyond the noise (positioned error). ``undecided`` when the test cannot be
judged (e.g. no level below the noise cap, ``reason`` says why); ``error`` when the metric failed
or returned NaN on the test's rows (``error`` says what) -- never a pass.
``explanation``: for a pass or fail, one sentence naming the deciding comparison (the smallest
drop of a pass, the largest rise of a fail), in percent of the gold score, or absolute where the
gold score is 0. ``within_noise`` (fails only, null otherwise): every failing comparison lies
inside the seeds' spread or its paired bootstrap interval over rows contains 0: ``change ±
seeds_spread`` or ``[ci_low, ci_high]`` holds both a drop (below ``-tolerance``) and no drop
(``low < -tolerance <= high``), so more rows or seeds could change the verdict.
``relative_change`` / ``absolute_change``: of the rule's headline point -- the noisiest judged
point for ``monotone_decrease``, the deciding level for the rules that compare each level with
gold. ``judged`` is false only for points a capped rule left out.
``expectations``: the examination paper's expected behaviours of the metric
(:mod:`blindspot.expectations` says how each is decided); absent when none of its tests
ran. ``level`` is always a string (the perturbation's level as written by ``level_str``).
"""

from __future__ import annotations

import types
import typing
from dataclasses import dataclass, field, fields, is_dataclass
from typing import Any

SCHEMA_VERSION = 2

#: What changed in each version (the newest last).
CHANGELOG = {
    1: "first version",
    2: "each test's verdict follows the rule its perturbation declares (new field `rule`; the "
       "targeted tests compare each level with gold, all levels judged, so `relative_change` is "
       "the rule's headline point, no longer always the noisiest); new fields `explanation`, "
       "`within_noise`, `deciding` and `absolute_change` (issue 18); added since, no field's "
       "meaning changed: `anchors` (issue 21), `usage`, and `signature` (issue 29: what produced "
       "a metric's numbers, one line as sacrebleu prints one; optional in the schema, so files "
       "written before it still pass), `flags` and `usage.cached` (issue 38: `usage.calls` "
       "counts the calls the run made, a resume included; inputs read from the score cache "
       "count in `cached`, where they had been counted as calls by mistake)",
}
STATUSES = ("pass", "fail", "error", "undecided")


# -- the typed results of a rank run (``to_dict`` gives the layout above, key for key) -------------

def plain(value: Any) -> Any:
    """A value as results.json holds it: typed results become their dicts, lists and dicts are
    rebuilt (so the dict never shares a list with the typed result), anything else is kept."""
    if hasattr(value, "to_dict"):
        return value.to_dict()
    if isinstance(value, list):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    return value


class _Entry:
    """``to_dict``: the dataclass's fields in declaration order (results.json's key order)."""

    #: fields that ``to_dict`` leaves out when they are None
    OPTIONAL: typing.ClassVar[tuple[str, ...]] = ()

    def to_dict(self) -> dict[str, Any]:
        return {f.name: plain(getattr(self, f.name))
                for f in fields(self)}  # type: ignore[arg-type]


@dataclass
class Point(_Entry):
    """One point of a test's curve: gold, or one level over its seeds."""

    level: str
    noise_ratio: float
    noise_ratio_std: float
    score_mean: float | None
    score_std: float | None
    n: int | None  # finite row scores behind the mean
    n_seeds: int
    n_nan: int
    relative_change: float | None
    judged: bool


@dataclass
class PerSample(_Entry):
    """The paired per-row view of one judged level against gold (per-row metrics only)."""

    level: str
    n: int
    n_nan: int
    fraction_noised_ge_gold: float | None
    mean_difference: float | None  # gold - noised, mean over rows and seeds
    wilcoxon_p: float | None
    ci_low: float | None
    ci_high: float | None


@dataclass
class WorstExample(_Entry):
    """A changed row whose score the noise lowered least (or raised)."""

    id: Any
    level: str
    seed: int
    gold: str
    perturbed: str
    gold_score: float
    perturbed_score: float
    difference: float


@dataclass
class TestResult(_Entry):
    """One test's verdict on one metric (the fields are described above)."""

    __test__ = False  # not a pytest test class

    test: str
    category: str
    rule: str
    status: str  # one of STATUSES
    passed: bool | None
    reason: str | None
    error: str | None
    explanation: str | None
    within_noise: bool | None
    deciding: dict[str, Any] | None
    relative_change: float | None
    absolute_change: float | None
    points: list[Point] = field(default_factory=list)
    per_sample: list[PerSample] = field(default_factory=list)
    worst_examples: list[WorstExample] = field(default_factory=list)

    @classmethod
    def failed(cls, test: str, category: str, rule: str, message: str) -> TestResult:
        """A test that could not be judged because the metric failed (status ``error``)."""
        return cls(test, category, rule, "error", None, None, message, None, None, None, None,
                   None)


@dataclass
class GoldSummary(_Entry):
    """The metric's score on the gold rows."""

    score_mean: float
    score_std: float
    n: int
    n_nan: int


@dataclass
class MetricResult(_Entry):
    """One metric on one dataset: every test's verdict, or the error that stopped it."""

    metric: str
    output: str
    options: dict[str, Any]
    higher_is_better: bool
    corpus_level: bool
    error: str | None = None
    #: what produced the numbers, in one line (:mod:`blindspot.scoring.signature`); None when
    #: the metric could not be built
    signature: str | None = None
    gold: GoldSummary | None = None
    #: each sanity anchor's mean score (blindspot.scoring.anchors); None for a corpus-level metric
    anchors: dict[str, float | None] | None = None
    tests: dict[str, TestResult] = field(default_factory=dict)
    expectations: list[dict[str, Any]] | None = None  # absent unless examination tests ran
    #: what scoring cost, summed over the distinct inputs this run computed (an LLM judge's
    #: calls and tokens; None where not reported), and ``cached``: the distinct inputs read from
    #: the score cache instead; absent for a metric that declares no cost outputs
    usage: dict[str, float | None] | None = None
    #: why a metric that declares ``flags_uninformative`` (an LLM judge) said nothing about the
    #: texts (``uninformative: ...``, :func:`blindspot.scoring.anchors.uninformative`); absent
    #: when there is no such flag
    flags: list[str] | None = None

    OPTIONAL = ("signature", "expectations", "usage", "flags")

    def to_dict(self) -> dict[str, Any]:
        out = super().to_dict()
        for name in self.OPTIONAL:
            if out[name] is None:
                del out[name]
        return out


@dataclass
class DatasetResult(_Entry):
    """One dataset of a run."""

    task: str
    rows: int
    fingerprint: str
    columns: dict[str, str | None]
    resources: dict[str, Any]
    skipped_tests: dict[str, str]
    metrics: dict[str, MetricResult] = field(default_factory=dict)


@dataclass
class RunResult(_Entry):
    """A rank run's results: ``to_dict()`` is results.json."""

    tool: dict[str, str]
    config: dict[str, Any]
    datasets: dict[str, DatasetResult]
    schema_version: int = SCHEMA_VERSION
    protocol: str = "rank"

    def to_dict(self) -> dict[str, Any]:
        return {"schema_version": self.schema_version, "protocol": self.protocol,
                "tool": plain(self.tool), "config": plain(self.config),
                "datasets": plain(self.datasets)}


# -- the JSON Schema of results.json, generated from the dataclasses above ------------------------

_JSON_TYPES = {str: "string", int: "integer", float: "number", bool: "boolean",
               type(None): "null"}


def type_schema(hint: Any, defs: dict[str, Any]) -> dict[str, Any]:
    """The JSON Schema of one type hint (dataclasses go to ``defs``, referenced by name)."""
    if hint is Any:
        return {}
    if hint in _JSON_TYPES:
        return {"type": _JSON_TYPES[hint]}
    if isinstance(hint, type) and is_dataclass(hint):
        if hint.__name__ not in defs:
            defs[hint.__name__] = {}  # placeholder: a class that refers to itself stops here
            defs[hint.__name__] = _class_schema(hint, defs)
        return {"$ref": f"#/$defs/{hint.__name__}"}
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        return {"anyOf": [type_schema(a, defs) for a in args]}
    if origin is list:
        return {"type": "array", "items": type_schema(args[0], defs)}
    if origin is dict:
        return {"type": "object", "additionalProperties": type_schema(args[1], defs)}
    raise TypeError(f"no JSON Schema for the type {hint!r}")


def _class_schema(cls: type[Any], defs: dict[str, Any]) -> dict[str, Any]:
    hints = typing.get_type_hints(cls)
    names = [f.name for f in fields(cls)]
    return {"type": "object", "title": cls.__name__, "description": (cls.__doc__ or "").strip(),
            "properties": {n: type_schema(hints[n], defs) for n in names},
            "required": [n for n in names if n not in cls.OPTIONAL],
            "additionalProperties": False}


def results_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of a rank run's results.json, generated from
    :class:`RunResult` and the classes it holds, so the schema cannot drift from the code."""
    defs: dict[str, Any] = {}
    root = _class_schema(RunResult, defs)
    root["properties"]["schema_version"] = {"const": SCHEMA_VERSION}
    root["properties"]["protocol"] = {"const": "rank"}
    defs["TestResult"]["properties"]["status"] = {"enum": list(STATUSES)}
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", **root, "$defs": defs}
