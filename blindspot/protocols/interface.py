"""The meta-evaluation protocols by name: what each one is, apart from how it runs; one
:class:`Protocol` interface for running it; one registry.

A protocol is two things. Its :class:`ProtocolDeclaration` (name, description, declared
options, where its code lives) is all that listing it (``blindspot protocols``), checking its
options and the Space's forms need; the declarations sit together in
:mod:`blindspot.protocols.declarations`, which imports no execution code, and fill
:data:`PROTOCOLS`. Its :class:`Protocol` subclass runs it: it turns a :class:`ProtocolRequest`
(data, metrics and the run's settings, the same for every protocol) into a typed
:class:`ProtocolResult` (``execute``, which writes nothing) and renders a result's report folder
from the result alone (``render``: :class:`~blindspot.report.files.ReportFiles`);
:meth:`Protocol.report` hands that to the one writer
(:func:`~blindspot.report.files.write_folder`), so every protocol's folder has the same layout,
file names and atomic writes; :meth:`Protocol.run` executes and, when ``request.out`` is set,
reports. Its module is imported on first need (:meth:`ProtocolDeclaration.load`),
the way :mod:`blindspot.catalog` imports providers, so listing the protocols loads no runner,
statistics or plotting code.

The CLI (``blindspot run --protocol NAME``), the ``blindspot`` evaluate module and the Space all
run a protocol through :func:`get_protocol`; adding one is a declaration in
:mod:`~blindspot.protocols.declarations` (its ``implementation`` names the class) and a module
with a :class:`Protocol` subclass whose ``declaration`` is it (rank: :mod:`blindspot.protocols.rank`;
preference: :mod:`~blindspot.protocols.preference_run`; deviation, correlation, self-bias: their
modules; search: :mod:`blindspot.search.protocol`; the check-up:
:mod:`blindspot.checkup.protocol`).
"""

from __future__ import annotations

import importlib
import signal
import typing
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import MISSING, dataclass, field, fields, replace
from functools import cache
from pathlib import Path
from typing import Any, ClassVar, Generic, TypeVar

from rich.console import Console

from blindspot import defaults
from blindspot.errors import DataRoles, MetricNeeds, check_inputs
from blindspot.exit_codes import FailOn, ended_in_error, failed_tests
from blindspot.faults import OutOfSpaceError, RunInterrupted, terminate_as_interrupt
from blindspot.protocols.options import OptionSpec, validate_options
from blindspot.registry import Registry, lowercase
from blindspot.report.files import MARKDOWN_FILE, ReportFiles, write_folder
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

    @classmethod
    def of(cls, data: Any, metrics: Any, **settings: Any) -> ProtocolRequest:
        """A request from Python keywords (``run_blindspot``, ``run_search``): those named as
        a field of the request set it (``task``, ``seeds``, ``out``...), every other one is a
        protocol option, checked by the protocol's declaration as ``--protocol-option`` is."""
        names = {f.name for f in fields(cls)} - {"data", "metrics", "options"}
        request = {k: v for k, v in settings.items() if k in names}
        options = {k: v for k, v in settings.items() if k not in names}
        return cls(data, metrics, **request, options=options)


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


@dataclass(frozen=True)
class ProtocolDeclaration:
    """What a protocol is, apart from how it runs: what listing it, checking its options and the
    Space's forms need, importable without its execution code.

    ``implementation`` is ``"module:Class"``, the :class:`Protocol` subclass that runs it, whose
    ``declaration`` is this one; :meth:`load` imports it on first need.
    """

    name: str
    description: str
    implementation: str
    #: its settings, the one allow-list of every entry point
    options: tuple[OptionSpec, ...] = ()

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

    def load(self) -> Protocol[Any]:
        """The protocol that runs this declaration (its module imported on the first call)."""
        protocol = _implementation(self.implementation)
        if protocol.declaration is not self:
            raise TypeError(f"{self.implementation} runs the {protocol.declaration.name!r} "
                            f"declaration, not {self.name!r}: its declaration must be this one")
        return protocol


@cache
def _implementation(path: str) -> Protocol[Any]:
    """One instance of the :class:`Protocol` subclass at ``"module:Class"``."""
    module, _, name = path.partition(":")
    protocol: Protocol[Any] = getattr(importlib.import_module(module), name)()
    return protocol


class Protocol(ABC, Generic[R]):
    """The one shape of every meta-evaluation protocol's execution: its :attr:`declaration`
    (name, description, options), ``execute(request) -> result`` (a typed
    :class:`ProtocolResult`; nothing written), ``render(result)`` (its report folder's files,
    from the result alone; nothing written), its terminal summary and its evaluate-module view.

    A protocol is a subclass naming its :attr:`declaration` (from
    :mod:`blindspot.protocols.declarations`) and implementing :meth:`execute`, :meth:`render`,
    :meth:`summarise` and :meth:`view`; :meth:`report` (not overridden) writes every
    protocol's folder through the one writer. :meth:`run` checks the options before
    :meth:`execute` sees them and writes the report when the request has an ``out``, so every
    entry point (CLI, evaluate module, Space) is checked and written alike.
    """

    declaration: ClassVar[ProtocolDeclaration]
    #: the file of its report folder a command points the reader to
    report_file: ClassVar[str] = MARKDOWN_FILE

    @property
    def name(self) -> str:
        """The declared name."""
        return self.declaration.name

    def run(self, request: ProtocolRequest) -> R:
        """Run the protocol on ``request``, its options and inputs checked first (every metric's
        references and sources in every data source: :meth:`inputs`,
        :func:`~blindspot.errors.check_inputs`), so bad input stops before anything is
        perturbed, scored or written; with ``request.out``, write the result's report folder
        there.

        A full disk or Ctrl-C/SIGTERM while the report is written says what the run kept
        (:meth:`kept_in`) and how to resume, as during the run itself."""
        checked = replace(request, options=self.declaration.check_options(request.options))
        check_inputs(*self.inputs(checked))
        result = self.execute(checked)
        if checked.out is not None:
            kept = self.kept_in(checked)
            try:
                with terminate_as_interrupt():
                    self.report(result, Path(checked.out))
            except OutOfSpaceError as error:
                if kept is None:
                    raise
                raise error.with_kept(f"every cell is kept in {kept}") from error.__cause__
            except KeyboardInterrupt as stop:
                raise RunInterrupted(getattr(stop, "signum", signal.SIGINT),
                                     folder=kept) from None
        return result

    def inputs(self, request: ProtocolRequest
               ) -> tuple[Sequence[DataRoles], Sequence[MetricNeeds]]:
        """What the request's metrics read of its data, for the check before any work: each data
        source's columns by role and each metric's needs, read without perturbing or scoring
        (a file's head, the scorers' declared facts). A protocol over gold data returns
        :func:`blindspot.runner.data.gold_inputs`; one that reads its own table's columns
        checks them itself and keeps this default (nothing to check here)."""
        return (), ()

    def kept_in(self, request: ProtocolRequest) -> Path | None:
        """The folder where the run keeps its finished work (its resumable state), None when it
        keeps none: what a fault while writing the report tells the user."""
        return None

    def ended_in_error(self, result: R) -> list[str]:
        """What of ``result`` ended in error (exit status 2 on the command line): a metric, or
        one test of it (:func:`blindspot.exit_codes.ended_in_error`); a protocol whose results
        name errors elsewhere says so here."""
        return ended_in_error(result.to_dict())

    def failed(self, result: R, fail_on: FailOn | str) -> list[str]:
        """What of ``result`` failed so that ``--fail-on`` exits 3: the failed tests
        (:func:`blindspot.exit_codes.failed_tests`); a protocol whose verdicts are elsewhere
        (the judge audits) says so here."""
        return failed_tests(result.to_dict(), fail_on)

    @abstractmethod
    def execute(self, request: ProtocolRequest) -> R:
        """The result of ``request`` (options already checked); writes no file."""

    @abstractmethod
    def render(self, result: R) -> ReportFiles:
        """``result``'s report folder: results.json's dict and every other file, rendered (a
        result that cannot be saved, e.g. with a NaN, raises here); writes no file."""

    def report(self, result: R, out: Path) -> list[Path]:
        """Write ``result``'s report folder into ``out`` (:meth:`render`, then
        :func:`~blindspot.report.files.write_folder`: results.json first, every file
        atomically, nothing when rendering fails); the paths written."""
        return write_folder(self.render(result), out)

    @abstractmethod
    def summarise(self, result: R, console: Console) -> None:
        """Print the result's summary (the CLI's table after a run)."""

    @abstractmethod
    def view(self, result: R) -> dict[str, Any]:
        """What the ``blindspot`` evaluate module's ``compute(protocol=...)`` returns."""


#: every protocol's declaration by name (case-insensitive); filled by :mod:`blindspot.catalog`
#: from :mod:`blindspot.protocols.declarations`
PROTOCOLS: Registry[ProtocolDeclaration] = Registry("protocol", normalise=lowercase)


def register_protocol(declaration: ProtocolDeclaration) -> ProtocolDeclaration:
    """Add ``declaration`` to the registry under its name (a name can be registered once)."""
    return PROTOCOLS.register(declaration.name, declaration)


def get_protocol(name: str) -> Protocol[Any]:
    """The protocol called ``name``, ready to run; a clear error lists the registered ones."""
    return PROTOCOLS.get(name).load()


def single_data(protocol: str, data: Any) -> Any:
    """The one data source of a protocol that judges one dataset (``--data`` given once)."""
    if isinstance(data, (list, tuple)):
        if len(data) != 1:
            raise ValueError(f"the {protocol} protocol judges one dataset at a time; got "
                             f"{len(data)} (--data once)")
        return data[0]
    return data
