"""The meta-evaluation protocols by name: one :class:`Protocol` interface, one registry.

A protocol turns a :class:`ProtocolRequest` (data, metrics and the run's settings, the same for
every protocol) into a typed :class:`ProtocolResult` (``execute``, which writes nothing), and
writes a result's report folder from the result alone (``report``); :meth:`Protocol.run` does
both, the report when ``request.out`` is set. The CLI (``blindspot run --protocol NAME``), the
``blindspot`` evaluate module and the Space all dispatch through :func:`get_protocol`, so adding
a protocol is one module: a :class:`Protocol` subclass with ``@register_protocol``, its module listed in
:data:`blindspot.catalog.PROTOCOL_MODULES` (rank: :mod:`blindspot.protocols.rank`;
preference: :mod:`~blindspot.protocols.preference_run`; deviation, correlation, self-bias: their
modules; search: :mod:`blindspot.search.protocol`).
"""

from __future__ import annotations

import typing
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import MISSING, dataclass, field, fields, replace
from pathlib import Path
from typing import Any, ClassVar, Generic, TypeVar

from rich.console import Console

from blindspot import defaults
from blindspot.protocols.options import OptionSpec, validate_options
from blindspot.registry import Registry, lowercase
from blindspot.report.schema import plain, type_schema
from blindspot.seeding import parse_seeds


@dataclass
class ProtocolRequest:
    """Everything a protocol run needs; fields a protocol does not use keep their defaults.

    ``options`` holds the protocol's own settings (``--protocol-option key=value`` on the CLI),
    checked against the protocol's declared :class:`OptionSpec` list before it runs.
    """

    data: Any
    metrics: Any
    task: str = defaults.TASK
    tests: str | Sequence[str] = defaults.TESTS
    seeds: Sequence[int] = defaults.SEEDS
    columns: Mapping[str, str | None] | None = None
    out: str | Path | None = None
    split: str = "test"
    metric_options: Mapping[str, Mapping[str, Any]] | None = None
    resources: Mapping[str, Any] = field(default_factory=dict)
    noise_cap: float = defaults.NOISE_CAP
    num_proc: int | None = None
    progress: bool = True
    options: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:  # one meaning of seeds for every protocol and caller
        self.seeds = parse_seeds(self.seeds, "seeds")


@dataclass(kw_only=True)
class ProtocolResult:
    """What every protocol's results.json starts with: its schema version, the protocol's name
    and the tool that wrote it. A protocol's result subclasses it with its own top-level keys,
    in the order results.json lists them, and sets the two defaults."""

    schema_version: int = 1
    protocol: str
    tool: dict[str, Any]

    #: fields ``to_dict`` leaves out: the common keys of a protocol whose files never had them,
    #: or what only the report folder needs (e.g. a nested run's whole results)
    UNSAVED: ClassVar[tuple[str, ...]] = ()

    def to_dict(self) -> dict[str, Any]:
        """The results dict, keys in field order (the bytes of results.json follow from it)."""
        return {f.name: plain(getattr(self, f.name))
                for f in fields(self) if f.name not in self.UNSAVED}

    @classmethod
    def json_schema(cls) -> dict[str, Any]:
        """The JSON Schema (draft 2020-12) of the results.json this class writes, generated from
        its fields: every saved field required and typed by its annotation, no other key, the
        schema version and the protocol's name fixed to their defaults."""
        hints = typing.get_type_hints(cls)
        saved = [f for f in fields(cls) if f.name not in cls.UNSAVED]
        defs: dict[str, Any] = {}
        properties = {f.name: type_schema(hints[f.name], defs) for f in saved}
        for fixed in ("schema_version", "protocol"):
            default = next(f.default for f in fields(cls) if f.name == fixed)
            if fixed in properties and default is not MISSING:
                properties[fixed] = {"const": default}
        schema = {"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",
                  "title": cls.__name__, "description": (cls.__doc__ or "").strip(),
                  "properties": properties, "required": [f.name for f in saved],
                  "additionalProperties": False}
        return {**schema, "$defs": defs} if defs else schema


R = TypeVar("R", bound=ProtocolResult)


class Protocol(ABC, Generic[R]):
    """The one shape of every meta-evaluation protocol: what it judges, its declared options,
    ``execute(request) -> result`` (a typed :class:`ProtocolResult`; nothing written),
    ``report(result, out)`` (its report folder, from the result alone), its terminal summary and
    its evaluate-module view.

    A protocol is a subclass declaring :attr:`name`, :attr:`description` and :attr:`options` and
    implementing :meth:`execute`, :meth:`report`, :meth:`summarise` and :meth:`view`;
    :func:`register_protocol` adds one instance to :data:`PROTOCOLS`. :meth:`run` checks the
    options before :meth:`execute` sees them and writes the report when the request has an
    ``out``, so every entry point (CLI, evaluate module, Space) is checked and written alike.
    """

    name: ClassVar[str]
    description: ClassVar[str]
    #: its settings, the one allow-list of every entry point
    options: ClassVar[tuple[OptionSpec, ...]] = ()

    def check_options(self, given: Mapping[str, Any], *, visitor: bool = False,
                      allow_hub_models: bool = False) -> dict[str, Any]:
        """``given`` read and checked against :attr:`options` (:func:`validate_options`)."""
        return validate_options(self.name, self.options, given, visitor=visitor,
                                allow_hub_models=allow_hub_models)

    def option(self, name: str) -> OptionSpec:
        """The declared option ``name``."""
        return next(s for s in self.options if s.name == name)

    def settings(self, given: Mapping[str, Any]) -> dict[str, Any]:
        """Every declared option: the given (checked) value, else its declared default."""
        return {s.name: given.get(s.name, s.default) for s in self.options}

    def run(self, request: ProtocolRequest) -> R:
        """Run the protocol on ``request``, its options checked first; with ``request.out``,
        write the result's report folder there."""
        checked = replace(request, options=self.check_options(request.options))
        result = self.execute(checked)
        if checked.out is not None:
            self.report(result, Path(checked.out))
        return result

    @abstractmethod
    def execute(self, request: ProtocolRequest) -> R:
        """The result of ``request`` (options already checked); writes no file."""

    @abstractmethod
    def report(self, result: R, out: Path) -> list[Path]:
        """Write ``result``'s report folder (results.json first) into ``out``; the paths."""

    @abstractmethod
    def summarise(self, result: R, console: Console) -> None:
        """Print the result's summary (the CLI's table after a run)."""

    @abstractmethod
    def view(self, result: R) -> dict[str, Any]:
        """What the ``blindspot`` evaluate module's ``compute(protocol=...)`` returns."""


#: every protocol by name (case-insensitive); filled by :mod:`blindspot.catalog`
PROTOCOLS: Registry[Protocol[Any]] = Registry("protocol", normalise=lowercase)

P = TypeVar("P", bound=type[Protocol[Any]])


def register_protocol(cls: P) -> P:
    """Class decorator: add an instance of the protocol ``cls`` to the registry under its name
    (a name can be registered once)."""
    PROTOCOLS.register(cls.name, cls())
    return cls


def get_protocol(name: str) -> Protocol[Any]:
    """The protocol called ``name``; a clear error lists the registered ones."""
    return PROTOCOLS.get(name)


def single_data(protocol: str, data: Any) -> Any:
    """The one data source of a protocol that judges one dataset (``--data`` given once)."""
    if isinstance(data, (list, tuple)):
        if len(data) != 1:
            raise ValueError(f"the {protocol} protocol judges one dataset at a time; got "
                             f"{len(data)} (--data once)")
        return data[0]
    return data


# -- options several protocols share -------------------------------------------------------------
# Each protocol declares its options beside its class. visitor_safe: a visitor of the public Space
# may set it; engine settings, models and anything that names a server path never are; file
# options come from the Space's upload box only.

BATCH_SIZE = OptionSpec("batch_size", "int", "texts per metric call (the metric's default when "
                        "unset)", minimum=1)
