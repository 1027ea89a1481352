"""The meta-evaluation protocols by name: rank (blind-spots paper), and the others as they land.

A protocol turns a :class:`ProtocolRequest` (data, metrics and the run's settings, the same for
every protocol) into a results dict with a ``"protocol"`` key, and writes its report folder when
``request.out`` is set. The CLI (``blindspot run --protocol NAME``), the ``blindspot`` evaluate
module and the Space all dispatch through :func:`get_protocol`, so adding a protocol is one
registry entry. Entries name their functions as ``"module:function"`` strings and are imported on
first use, so listing the protocols loads no model code.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from blindspot.challenge_sets.names import FORMAT_NAMES, TIES_POLICIES
from blindspot.protocols.options import MAX_SEED, OptionSpec, validate_options
from blindspot.protocols.preference import ERROR_TYPES, MODES
from blindspot.seeding import parse_seeds
from blindspot.suggest import did_you_mean


@dataclass
class ProtocolRequest:
    """Everything a protocol run needs; fields a protocol does not use keep their defaults.

    ``options`` holds the protocol's own settings (``--protocol-option key=value`` on the CLI),
    checked against the protocol's declared :class:`OptionSpec` list before it runs.
    """

    data: Any
    metrics: Any
    task: str = "summarization"
    tests: str | Sequence[str] = "fluency,consistency"
    seeds: Sequence[int] = (1, 2, 3, 4, 5)
    columns: Mapping[str, str | None] | None = None
    out: str | Path | None = None
    split: str = "test"
    metric_options: Mapping[str, Mapping[str, Any]] | None = None
    resources: Mapping[str, Any] = field(default_factory=dict)
    noise_cap: float = 0.6
    num_proc: int | None = None
    progress: bool = True
    options: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:  # one meaning of seeds for every protocol and caller
        self.seeds = parse_seeds(self.seeds, "seeds")


@dataclass(frozen=True)
class Protocol:
    """A registry entry: what the protocol judges and where its functions live."""

    name: str
    description: str
    runner: str      #: "module:function", (ProtocolRequest) -> results dict
    summary: str     #: "module:function", (results, rich Console) -> None
    module_view: str  #: "module:function", (results) -> the blindspot module's return value
    options: tuple[OptionSpec, ...] = ()  #: its settings, the one allow-list of every entry point

    def check_options(self, given: Mapping[str, Any], *, visitor: bool = False,
                      allow_hub_models: bool = False) -> dict[str, Any]:
        """``given`` read and checked against :attr:`options` (:func:`validate_options`)."""
        return validate_options(self.name, self.options, given, visitor=visitor,
                                allow_hub_models=allow_hub_models)

    def option(self, name: str) -> OptionSpec:
        """The declared option ``name``."""
        return next(s for s in self.options if s.name == name)

    def run(self, request: ProtocolRequest) -> dict[str, Any]:
        """Run the protocol on ``request``, its options checked first."""
        checked = replace(request, options=self.check_options(request.options))
        return _resolve(self.runner)(checked)

    def summarise(self, results: dict[str, Any], console: Any) -> None:
        _resolve(self.summary)(results, console)

    def view(self, results: dict[str, Any]) -> dict[str, Any]:
        return _resolve(self.module_view)(results)


def _resolve(path: str) -> Callable[..., Any]:
    module, _, name = path.partition(":")
    return getattr(importlib.import_module(module), name)


PROTOCOLS: dict[str, Protocol] = {}


def register_protocol(protocol: Protocol) -> Protocol:
    """Add ``protocol`` to the registry (a name can be registered once)."""
    if protocol.name in PROTOCOLS:
        raise ValueError(f"protocol {protocol.name!r} is already registered")
    PROTOCOLS[protocol.name] = protocol
    return protocol


def get_protocol(name: str) -> Protocol:
    """The protocol called ``name``; a clear error lists the registered ones."""
    key = name.strip().lower()
    if key not in PROTOCOLS:
        raise ValueError(f"unknown protocol {name!r}; choose one of {sorted(PROTOCOLS)}"
                         f"{did_you_mean(key, PROTOCOLS)}")
    return PROTOCOLS[key]


def single_data(protocol: str, data: Any) -> Any:
    """The one data source of a protocol that judges one dataset (``--data`` given once)."""
    if isinstance(data, (list, tuple)):
        if len(data) != 1:
            raise ValueError(f"the {protocol} protocol judges one dataset at a time; got "
                             f"{len(data)} (--data once)")
        return data[0]
    return data


# -- the protocols' options ---------------------------------------------------------------------
# visitor_safe: a visitor of the public Space may set it; engine settings, models and anything
# that names a server path never are; file options come from the Space's upload box only.

BATCH_SIZE = OptionSpec("batch_size", "int", "texts per metric call (the metric's default when "
                        "unset)", minimum=1)

RANK_OPTIONS = (
    OptionSpec("levels", "levels", "levels per test instead of the paper's", visitor_safe=True),
    OptionSpec("tolerance", "float", "a mean score may rise by this much and still count as a "
               "decrease", default=1e-5, minimum=0, visitor_safe=True),
    OptionSpec("worst_examples", "int", "examples the metric penalised least, per test",
               default=3, minimum=0, maximum=1000, visitor_safe=True),
    OptionSpec("bootstrap_seed", "int", "seed of the bootstrap confidence intervals", default=0,
               minimum=0, maximum=MAX_SEED, visitor_safe=True),
    BATCH_SIZE,
    OptionSpec("state_dir", "path", "folder of the run's resumable state (default "
               "<out>/.state)"),
    OptionSpec("engine", "engine", "where perturbation and scoring run", default="local",
               choices=("local", "ray")),
    OptionSpec("address", "text", "Ray cluster to join (engine ray)"),
    OptionSpec("actors", "int", "scoring actors (engine ray)", minimum=1),
    OptionSpec("gpus_per_actor", "float", "GPUs per scoring actor (engine ray)", minimum=0),
    OptionSpec("chunk_size", "int", "stream each data file this many rows at a time", minimum=1),
)

PREFERENCE_OPTIONS = (
    OptionSpec("mode", "choice", "the anchor the candidates are compared with",
               default="ref-based", visitor_safe=True,
               choices=(*MODES, *(m.replace("-", "_") for m in MODES))),
    OptionSpec("fixed", "bool", "read the *_fixed columns", default=False, visitor_safe=True),
    OptionSpec("error_types", "names", "error types to judge (default: all present)",
               choices=tuple(ERROR_TYPES), visitor_safe=True),
    OptionSpec("combine_with", "metric", "a metric N reported as w * minmax(N) + "
               "(1 - w) * minmax(M) beside each metric M", visitor_safe=True),
    OptionSpec("weight", "float", "w of combine_with (MENLI's best MT weight)", default=0.2,
               minimum=0, maximum=1, visitor_safe=True),
    OptionSpec("examples", "int", "failed pairs kept per error type and metric", default=1,
               minimum=0, maximum=1000, visitor_safe=True),
    OptionSpec("format", "choice", "the set's file format: MENLI-style columns, or a challenge "
               "set as published (blindspot run --format)", default="menli",
               choices=("menli", *FORMAT_NAMES)),
    OptionSpec("ties", "choice", "how the Kendall-like tau counts a tie: left out (MENLI) or "
               "against the metric (ACES); challenge-set formats", default="excluded",
               choices=TIES_POLICIES, visitor_safe=True),
    BATCH_SIZE,
)

DEVIATION_OPTIONS = (
    OptionSpec("human_scores", "path", "CSV of human scores per template (default: the "
               "shipped table)", file=True),
    OptionSpec("criteria", "names", "criteria to check (default: all of the task)",
               visitor_safe=True),
    OptionSpec("templates", "names", "template ids to run (default: all of the criteria)",
               visitor_safe=True),
    OptionSpec("normalise", "choice", "how metric scores are brought to [0, 1]",
               default="auto", choices=("auto", "minmax", "none"), visitor_safe=True),
    OptionSpec("tolerance", "float", "a normalised drop up to this counts as none", default=0.0,
               minimum=0, visitor_safe=True),
    BATCH_SIZE,
    OptionSpec("examples", "int", "examples per template in the report", default=2, minimum=0,
               maximum=1000, visitor_safe=True),
)

CORRELATION_OPTIONS = (
    OptionSpec("references", "path", "file of references joined on id (default: the "
               "judgment rows' own)", file=True),
    OptionSpec("reference_columns", "names", "columns holding references",
               default="gold,references", visitor_safe=True),
    OptionSpec("criteria", "names", "human criteria to correlate with (default: the expert_* "
               "columns, else every other numeric column)", visitor_safe=True),
    OptionSpec("system_column", "text", "the column naming the system", default="system",
               visitor_safe=True),
    BATCH_SIZE,
)

SEARCH_OPTIONS = (
    OptionSpec("noise_ratio", "float", "target noise ratio of every hypothesis", default=0.1,
               minimum=0, maximum=1, exclusive_minimum=True, visitor_safe=True),
    OptionSpec("panel", "metrics", "other metrics scoring the same perturbed texts",
               visitor_safe=True),
    OptionSpec("k", "int", "candidates per source and word", default=8, minimum=1, maximum=100,
               visitor_safe=True),
    OptionSpec("mlm", "model", "masked LM for top-k candidates (default: the run's --mlm)"),
    OptionSpec("embedding_model", "model", "model whose input embeddings give nearest-word "
               "candidates", default="minilm"),
    OptionSpec("max_calls", "int", "budget: scored candidate texts (one search step of one "
               "text costs one call per candidate edit)", minimum=1,
               visitor_safe=True),
    OptionSpec("max_seconds", "float", "budget: wall time", minimum=0, exclusive_minimum=True,
               visitor_safe=True),
    OptionSpec("seed", "int", "breaks exact ties between edits", default=0, minimum=0,
               maximum=MAX_SEED, visitor_safe=True),
    OptionSpec("limit", "int", "search the first N rows only", minimum=1, visitor_safe=True),
    OptionSpec("generalise", "bool", "check that the patterns found generalise (rank "
               "protocol)", default=False, visitor_safe=True),
    OptionSpec("top_patterns", "int", "patterns checked by generalise", default=3, minimum=0,
               maximum=100, visitor_safe=True),
    BATCH_SIZE,
)


register_protocol(Protocol(
    name="rank",
    description="rank and monotonicity (He et al., 2023): the score must strictly decrease "
                "as the noise ratio grows",
    runner="blindspot.runner.run:run_request",
    summary="blindspot.runner.summary:print_summary",
    module_view="blindspot.runner.run:module_view",
    options=RANK_OPTIONS,
))

register_protocol(Protocol(
    name="preference",
    description="preference accuracy (Chen and Eger, 2023, MENLI): the metric must score the "
                "paraphrase strictly above the adversarial candidate, per error type",
    runner="blindspot.protocols.preference_run:run_request",
    summary="blindspot.protocols.preference_report:print_summary",
    module_view="blindspot.protocols.preference_run:module_view",
    options=PREFERENCE_OPTIONS,
))

register_protocol(Protocol(
    name="deviation",
    description="deviation from human judgement (Sai et al., 2021, Eq. 1): per task, criterion "
                "and checklist template, the metric's drop against the humans' drop",
    runner="blindspot.protocols.deviation:run_deviation",
    summary="blindspot.protocols.deviation:print_summary",
    module_view="blindspot.protocols.deviation:module_view",
    options=DEVIATION_OPTIONS,
))

register_protocol(Protocol(
    name="correlation",
    description="correlation with human criteria (Kendall tau-b, Pearson, Spearman) at system "
                "and summary level, e.g. SummEval's expert coherence/consistency/fluency/relevance",
    runner="blindspot.protocols.correlation:run_correlation",
    summary="blindspot.protocols.correlation:print_summary",
    module_view="blindspot.protocols.correlation:module_view",
    options=CORRELATION_OPTIONS,
))

register_protocol(Protocol(
    name="search",
    description="adversarial search (He et al., 2023, Appendix J): greedy word edits the metric "
                "penalises least, judged by a panel of other metrics",
    runner="blindspot.search.protocol:run_request",
    summary="blindspot.search.protocol:print_summary",
    module_view="blindspot.search.protocol:module_view",
    options=SEARCH_OPTIONS,
))
