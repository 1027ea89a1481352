"""A protocol's own settings, declared once and checked by one function for every entry point.

Each registered protocol (:mod:`blindspot.protocols.interface`) lists its options as
:class:`OptionSpec` entries: name, kind (how a value is read), range or choices, default, help,
whether a visitor of the public Space may set it (``visitor_safe``) and whether it names a file
(``file``: in the Space such a file comes only from the upload box, never from typed text).
Engine settings and anything naming a server path are never visitor-safe.

:func:`validate_options` is the one check: ``blindspot run --protocol-option key=value``,
``evaluate.load("blindspot/blindspot").compute(protocol_options=...)`` (both through
:meth:`Protocol.run`) and the Space (``visitor=True``) all call it. Values come as text (the CLI
and the Space parse ``key=value`` with JSON first, so ``5`` is already an int) or as Python
values; each kind turns them into one type, so validating twice gives the same result. A bad
value raises :class:`OptionError` naming the option, the value, what is accepted and the
protocol's valid options.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from blindspot.suggest import did_you_mean

#: Seeds and counts are kept below numpy's seed range (a bigger one overflows there).
MAX_SEED = 2**32 - 1


class OptionError(ValueError):
    """A protocol option that is unknown, not allowed here, or of a bad value."""


@dataclass(frozen=True)
class OptionSpec:
    """One option of a protocol, as ``--protocol-option name=value`` sets it."""

    name: str
    kind: str                       #: a key of :data:`KINDS`
    help: str
    default: Any = None
    choices: tuple[str, ...] | None = None  #: allowed values (``choice``; each item of ``names``)
    minimum: float | None = None
    maximum: float | None = None
    exclusive_minimum: bool = False  #: ``minimum`` itself is refused (noise ratio > 0)
    visitor_safe: bool = False      #: a Space visitor may set it in the options field
    file: bool = False              #: a path; in the Space only from the visitor's upload

    def accepted(self) -> str:
        """What a value must be, as error messages and listings say it."""
        what = KINDS[self.kind].accepted
        if self.choices is not None:
            what += f" from {', '.join(self.choices)}" if self.kind == "names" else \
                f" {', '.join(self.choices)}"
        low = None if self.minimum is None else \
            f"{'>' if self.exclusive_minimum else '>='} {_bound(self.minimum)}"
        high = None if self.maximum is None else f"<= {_bound(self.maximum)}"
        bounds = " and ".join(b for b in (low, high) if b)
        return f"{what} {bounds}" if bounds else what

    def describe(self) -> str:
        """``name: help (accepted; default ...)`` for listings."""
        default = "" if self.default is None else f"; default {self.default}"
        return f"{self.name}: {self.help} ({self.accepted()}{default})"


def _bound(number: float) -> str:
    return str(int(number)) if float(number).is_integer() else f"{number:g}"


@dataclass(frozen=True)
class Kind:
    """How a kind of option reads a value; ``read`` raises ValueError when it cannot."""

    accepted: str
    read: Callable[[OptionSpec, Any], Any]


def _number(value: Any) -> float:
    if isinstance(value, bool):
        raise ValueError
    if isinstance(value, str):
        value = value.strip()
    number = float(value)
    if not math.isfinite(number):
        raise ValueError
    return number


def _in_range(spec: OptionSpec, number: float) -> None:
    too_low = spec.minimum is not None and (
        number <= spec.minimum if spec.exclusive_minimum else number < spec.minimum)
    too_high = spec.maximum is not None and number > spec.maximum
    if too_low or too_high:
        raise ValueError


def _read_int(spec: OptionSpec, value: Any) -> int:
    number = _number(value)
    if not number.is_integer():
        raise ValueError
    _in_range(spec, number)
    return int(number)


def _read_float(spec: OptionSpec, value: Any) -> float:
    number = _number(value)
    _in_range(spec, number)
    return number


BOOLEANS = {"true": True, "1": True, "yes": True, "false": False, "0": False, "no": False}


def _read_bool(spec: OptionSpec, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    return BOOLEANS[str(value).strip().lower()]


def _read_text(spec: OptionSpec, value: Any) -> str:
    if isinstance(value, (dict, list, tuple, bool)) or value is None:
        raise ValueError
    text = str(value).strip()
    if not text:
        raise ValueError
    return text


def _read_choice(spec: OptionSpec, value: Any) -> str:
    text = _read_text(spec, value)
    if spec.choices is not None and text not in spec.choices:
        raise ValueError
    return text


def _read_list(spec: OptionSpec, value: Any) -> list[str]:
    items = value.split(",") if isinstance(value, str) else value
    if not isinstance(items, (list, tuple)) or not all(isinstance(i, str) for i in items):
        raise ValueError
    names = [i.strip() for i in items if i.strip()]
    if spec.choices is not None and not set(names) <= set(spec.choices):
        raise ValueError
    return names


def _read_names(spec: OptionSpec, value: Any) -> list[str]:
    names = _read_list(spec, value)
    if not names:
        raise ValueError
    return names


def _read_levels(spec: OptionSpec, value: Any) -> dict[str, list[Any]]:
    if not isinstance(value, Mapping):
        raise ValueError
    levels = {}
    for test, chosen in value.items():
        if not isinstance(test, str) or not isinstance(chosen, (list, tuple)) or not all(
                isinstance(v, (str, int, float)) and not isinstance(v, bool) for v in chosen):
            raise ValueError
        levels[test] = list(chosen)
    return levels


#: what text and JSON can hold; anything else can only come from Python code
PLAIN_VALUES = (str, int, float, bool, list, tuple, dict)


def _read_object(spec: OptionSpec, value: Any) -> Any:
    """A name among the choices, or (from Python only) an object that is already built."""
    return _read_choice(spec, value) if isinstance(value, PLAIN_VALUES) else value


#: Every kind of option value, by the name an :class:`OptionSpec` gives as ``kind``.
KINDS: dict[str, Kind] = {
    "int": Kind("a whole number", _read_int),
    "float": Kind("a number", _read_float),
    "bool": Kind("true or false", _read_bool),
    "text": Kind("a text", _read_text),
    "choice": Kind("one of", _read_choice),
    "names": Kind("comma-separated names", _read_names),
    "levels": Kind('a JSON object of test -> list of levels, e.g. {"truncation": ["0.1"]}',
                   _read_levels),
    "path": Kind("a file path", _read_text),
    "model": Kind("a model (Hub id or folder)", _read_text),
    "metric": Kind("a metric spec metric[.output][@model]", _read_text),
    "metrics": Kind("comma-separated metric specs (none: an empty list)", _read_list),
    "engine": Kind("an engine name:", _read_object),
}

#: kinds whose values are metric specs: a Space visitor may name only the allowed ones
METRIC_KINDS = {"metric": False, "metrics": True}


def _names(specs: Sequence[OptionSpec]) -> str:
    return ", ".join(sorted(s.name for s in specs)) or "none"


def validate_options(protocol: str, specs: Sequence[OptionSpec], given: Mapping[str, Any], *,
                     visitor: bool = False, allow_hub_models: bool = False) -> dict[str, Any]:
    """``given`` read and checked against the protocol's declared ``specs``.

    Returns the given options (not the defaults) as their kinds read them; None stays None
    (the option's default, as Python callers say "unset"). ``visitor=True``
    (the public Space) refuses options not marked ``visitor_safe``, every ``file`` option (the
    upload box sets those) and metric specs outside :func:`check_visitor_metric`'s allow-list.
    """
    declared = {s.name: s for s in specs}
    allowed = [s for s in specs if s.visitor_safe and not s.file] if visitor else list(specs)
    where = "this Space" if visitor else f"the {protocol} protocol"
    out: dict[str, Any] = {}
    for name, value in given.items():
        spec = declared.get(str(name).strip())
        if spec is None:
            raise OptionError(f"protocol option {name!r} is not an option of the {protocol} "
                              f"protocol; valid options: {_names(allowed)}"
                              f"{did_you_mean(name, [s.name for s in allowed])}")
        if visitor and spec.file:
            raise OptionError(f"protocol option {spec.name!r} names a file: upload it in the "
                              f"'Protocol file' box instead of typing a path (options you can "
                              f"set here: {_names(allowed)})")
        if visitor and not spec.visitor_safe:
            raise OptionError(f"protocol option {spec.name!r} cannot be set from this Space (it "
                              f"is a server or engine setting); options you can set here: "
                              f"{_names(allowed)}")
        if value is None:
            out[spec.name] = None
            continue
        try:
            read = KINDS[spec.kind].read(spec, value)
        except (ValueError, TypeError, KeyError, OverflowError):
            raise OptionError(f"protocol option {spec.name}={_shown(value)} is not accepted by "
                              f"{where}: {spec.name} must be {spec.accepted()}; valid options: "
                              f"{_names(allowed)}") from None
        if visitor and spec.kind in METRIC_KINDS:
            # the runner imports datasets (seconds); declarations (and so --help) stay light
            from blindspot.runner.metric_spec import check_visitor_metric

            for item in (read if METRIC_KINDS[spec.kind] else [read]):
                check_visitor_metric(item, allow_hub_models)
        out[spec.name] = read
    return out


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


__all__ = ["KINDS", "MAX_SEED", "OptionError", "OptionSpec", "validate_options"]
