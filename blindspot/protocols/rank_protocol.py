"""The rank protocol's registry entry (He et al., 2023: rank and monotonicity): its declared
options, and the runner (:func:`blindspot.runner.run.run_request`), summary and module view it
dispatches to. The judging itself is :mod:`blindspot.protocols.rank`."""

from __future__ import annotations

from typing import Any

from rich.console import Console

from blindspot.protocols.options import MAX_SEED, OptionSpec
from blindspot.protocols.rank import TOLERANCE
from blindspot.protocols.registry import BATCH_SIZE, Protocol, ProtocolRequest, register_protocol
from blindspot.runner.run import module_view, run_request
from blindspot.runner.summary import print_summary

RANK_OPTIONS = (
    OptionSpec("levels", "levels", "levels per test instead of the paper's", visitor_safe=True),
    OptionSpec("tolerance", "float", "a mean score may rise by this much and still count as a "
               "decrease", default=TOLERANCE, minimum=0, visitor_safe=True),
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


@register_protocol
class RankProtocol(Protocol):
    name = "rank"
    description = ("rank and monotonicity (He et al., 2023): the score must strictly decrease "
                   "as the noise ratio grows")
    options = RANK_OPTIONS

    def execute(self, request: ProtocolRequest) -> dict[str, Any]:
        return run_request(request)

    def summarise(self, results: dict[str, Any], console: Console) -> None:
        print_summary(results, console)

    def view(self, results: dict[str, Any]) -> dict[str, Any]:
        return module_view(results)
