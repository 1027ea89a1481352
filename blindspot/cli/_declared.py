"""A protocol's declared options as a command's typer options: each option is declared once, as an
:class:`~blindspot.protocols.options.OptionSpec` of its protocol, and from there it is in the
command's ``--help``, ``--protocol-option``, ``compute(protocol_options=...)``, the Space's form
and the one validation (:func:`~blindspot.protocols.options.validate_options`).

:func:`declared_options` adds one option per declared setting to a command function: ``--name``
(underscores as dashes; ``--name/--no-name`` for a ``bool``), the declared help and what it
accepts, the declared default (a command may show another, e.g. ``stream``'s chunk size). The
command receives the values the user set, and those its own default sets, as one ``options``
dict, ready for a :class:`~blindspot.protocols.interface.ProtocolRequest`; a value left unset or at
the declared default is left out, so the protocol applies its default, as it does for every
other entry point; an empty model or metric list (``''``) is None, "none", as from Python.
Values are checked by the protocol when it runs, with its one message.
"""

from __future__ import annotations

import functools
import inspect
import typing
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import typer
from rich.markup import escape

from blindspot.protocols.interface import ProtocolDeclaration
from blindspot.protocols.options import OptionSpec

F = TypeVar("F", bound=Callable[..., Any])

#: the Python type typer reads each kind of option value as (the protocol reads the text)
TYPES: dict[str, type] = {"int": int, "float": float, "bool": bool}

#: the parameter through which a command receives its declared options
OPTIONS = "options"

#: kinds where an empty value (``--embedding-model ''``) means none, as None does from Python
NONE_IF_EMPTY = frozenset({"model", "metrics"})


def flag(spec: OptionSpec) -> str:
    """The command-line name of a declared option: ``--max-calls`` for ``max_calls``."""
    return "--" + spec.name.replace("_", "-")


def option_help(spec: OptionSpec) -> str:
    """The declared help and what a value must be (rich markup escaped: ``[...]`` is text)."""
    accepted = "" if spec.kind in TYPES else f" ({spec.accepted()})"
    none = "; '' for none" if spec.kind in NONE_IF_EMPTY else ""
    return escape(spec.help + accepted + none)


def option_parameter(spec: OptionSpec, default: Any) -> inspect.Parameter:
    """``spec`` as a keyword parameter with its typer option."""
    kind = TYPES.get(spec.kind, str)
    names = (f"{flag(spec)}/--no-{flag(spec)[2:]}",) if kind is bool else (flag(spec),)
    annotation = kind if kind is bool or default is not None else kind | None
    return inspect.Parameter(spec.name, inspect.Parameter.KEYWORD_ONLY, annotation=annotation,
                             default=typer.Option(default, *names, help=option_help(spec)))


def declared_options(declaration: ProtocolDeclaration, *names: str,
                     defaults: Mapping[str, Any] | None = None) -> Callable[[F], F]:
    """Give a command one typer option per declared option of ``declaration`` (``names``: these
    only, in this order; default: every one), after its own parameters.

    The command takes an ``options`` parameter: the set values by name (:data:`OPTIONS`).
    ``defaults`` shows other defaults than the declared ones (the command's own use)."""
    specs = [declaration.option(name) for name in names] if names else list(declaration.options)
    shown = {s.name: (defaults or {}).get(s.name, s.default) for s in specs}

    def wrap(command: F) -> F:
        hints = typing.get_type_hints(command)
        own = [p.replace(annotation=hints.get(p.name, p.annotation))
               for p in inspect.signature(command).parameters.values() if p.name != OPTIONS]
        clash = {p.name for p in own} & set(shown)
        if clash:
            raise TypeError(f"{command.__name__} declares {sorted(clash)} itself and through "
                            f"the {declaration.name} protocol")
        added = [option_parameter(s, shown[s.name]) for s in specs]

        @functools.wraps(command)
        def with_options(**given: Any) -> Any:
            values = {s.name: given.pop(s.name) for s in specs}
            chosen = {name: None if value == "" and declaration.option(name).kind
                      in NONE_IF_EMPTY else value for name, value in values.items()
                      if value is not None and value != declaration.option(name).default}
            return command(**given, **{OPTIONS: chosen})

        parameters = [*own, *added]
        with_options.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
        with_options.__annotations__ = {p.name: p.annotation for p in parameters}
        del with_options.__wrapped__  # typer reads the signature above, not the command's
        return typing.cast(F, with_options)

    return wrap


__all__ = ["NONE_IF_EMPTY", "OPTIONS", "TYPES", "declared_options", "flag", "option_help", "option_parameter"]
