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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from blindspot.seeding import parse_seeds


@dataclass
class ProtocolRequest:
    """Everything a protocol run needs; fields a protocol does not use keep their defaults.

    ``options`` holds the protocol's own settings (``--protocol-option key=value`` on the CLI);
    a protocol rejects keys it does not know with an error naming the valid ones.
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

    def run(self, request: ProtocolRequest) -> dict[str, Any]:
        return _resolve(self.runner)(request)

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
        raise ValueError(f"unknown protocol {name!r}; choose one of {sorted(PROTOCOLS)}")
    return PROTOCOLS[key]


def check_options(protocol: str, options: Mapping[str, Any], known: Sequence[str]) -> None:
    """Reject protocol options the protocol does not read, naming the valid ones."""
    unknown = sorted(set(options) - set(known))
    if unknown:
        valid = ", ".join(sorted(known)) or "none"
        raise ValueError(f"--protocol-option {unknown[0]!r} is not an option of the {protocol} "
                         f"protocol; valid options: {valid}")


def single_data(protocol: str, data: Any) -> Any:
    """The one data source of a protocol that judges one dataset (``--data`` given once)."""
    if isinstance(data, (list, tuple)):
        if len(data) != 1:
            raise ValueError(f"the {protocol} protocol judges one dataset at a time; got "
                             f"{len(data)} (--data once)")
        return data[0]
    return data


register_protocol(Protocol(
    name="rank",
    description="rank and monotonicity (He et al., 2023): the score must strictly decrease "
                "as the noise ratio grows",
    runner="blindspot.runner.run:run_request",
    summary="blindspot.runner.summary:print_summary",
    module_view="blindspot.runner.run:module_view",
))

register_protocol(Protocol(
    name="preference",
    description="preference accuracy (Chen and Eger, 2023, MENLI): the metric must score the "
                "paraphrase strictly above the adversarial candidate, per error type",
    runner="blindspot.protocols.preference_run:run_request",
    summary="blindspot.protocols.preference_report:print_summary",
    module_view="blindspot.protocols.preference_run:module_view",
))

register_protocol(Protocol(
    name="deviation",
    description="deviation from human judgement (Sai et al., 2021, Eq. 1): per task, criterion "
                "and checklist template, the metric's drop against the humans' drop",
    runner="blindspot.protocols.deviation:run_deviation",
    summary="blindspot.protocols.deviation:print_summary",
    module_view="blindspot.protocols.deviation:module_view",
))

register_protocol(Protocol(
    name="correlation",
    description="correlation with human criteria (Kendall tau-b, Pearson, Spearman) at system "
                "and summary level, e.g. SummEval's expert coherence/consistency/fluency/relevance",
    runner="blindspot.protocols.correlation:run_correlation",
    summary="blindspot.protocols.correlation:print_summary",
    module_view="blindspot.protocols.correlation:module_view",
))

register_protocol(Protocol(
    name="search",
    description="adversarial search (He et al., 2023, Appendix J): greedy word edits the metric "
                "penalises least, judged by a panel of other metrics",
    runner="blindspot.search.protocol:run_request",
    summary="blindspot.search.protocol:print_summary",
    module_view="blindspot.search.protocol:module_view",
))
