"""The one exception for bad user input, and the checks that raise it before any work.

A :class:`BlindspotInputError` is a ``ValueError`` that knows where the problem is (file,
line or row, field) and what to do about it, and prints as one paragraph. The command line
prints it after ``error: `` and exits 1; the Python API raises it as it is.

Text columns are checked once per column, before any work: through Arrow's types and null
counts for a loaded table (no Python loop over the cells), or one pass over a plain list.
:func:`check_inputs` checks that every metric's references and sources are in every data
source (:meth:`blindspot.protocols.interface.Protocol.run` calls it before a protocol runs).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: How many offending rows a message lists before it only counts the rest.
SHOWN_ROWS = 5


class BlindspotInputError(ValueError):
    """Bad user input: ``problem`` at ``file``/``line``/``row``/``field``, and the ``fix``."""

    def __init__(self, problem: str, *, fix: str = "", file: str | Path | None = None,
                 line: int | None = None, row: int | None = None, field: str | None = None
                 ) -> None:
        self.problem, self.fix = problem, fix
        self.file = None if file is None else str(file)
        self.line, self.row, self.field = line, row, field
        super().__init__(str(self))

    def where(self) -> str:
        parts = [self.file, None if self.line is None else f"line {self.line}",
                 None if self.row is None else f"row {self.row}",
                 None if self.field is None else f"field {self.field!r}"]
        return ", ".join(p for p in parts if p)

    def __str__(self) -> str:
        where = self.where()
        text = f"{where}: {self.problem}" if where else self.problem
        return f"{text}. {self.fix}" if self.fix else text

    def in_file(self, file: str | Path) -> BlindspotInputError:
        """This error, placed in ``file`` when it does not name one yet (the caller knows it)."""
        if self.file is None:
            self.file = str(file)
            self.args = (str(self),)
        return self

    def __reduce__(self) -> tuple[Any, ...]:  # crosses process boundaries (worker pools, Ray)
        return (_rebuild, (type(self), self.__dict__))


def message(error: BaseException) -> str:
    """An exception's text as our one line shows it: a ``KeyError``'s own text, without the
    quotes its ``str()`` adds (every other text as it is: a message may end in a quote)."""
    if isinstance(error, KeyError) and len(error.args) == 1:
        return str(error.args[0])
    return str(error)


def as_input_error(error: BaseException) -> BlindspotInputError:
    """``error`` (bad input found by a check: a ``ValueError``, ``KeyError`` or
    ``FileNotFoundError``) as a :class:`BlindspotInputError`, raised by an entry point ``from
    None``, so the user reads one error, not the checks' frames (``compute()``, as the command
    line prints one line)."""
    if isinstance(error, BlindspotInputError):
        return error.with_traceback(None)
    return BlindspotInputError(message(error))


def _rebuild(cls: type[BlindspotInputError], state: dict[str, Any]) -> BlindspotInputError:
    error = cls.__new__(cls)
    error.__dict__.update(state)
    ValueError.__init__(error, str(error))
    return error


@dataclass(frozen=True)
class BadRows:
    """The rows of a column that are not text: 1-based row numbers (all of them) and a
    description of each of the first few."""

    rows: list[int]
    shown: list[str]

    def describe(self) -> str:
        more = len(self.rows) - len(self.shown)
        listed = "; ".join(self.shown) + (f"; and {more} more" if more > 0 else "")
        return f"{len(self.rows)} row(s) are not text: {listed}"


def _describe(row: int, value: Any) -> str:
    kind = "empty (null)" if value is None else f"{type(value).__name__} {value!r:.40}"
    return f"row {row} is {kind}"


def bad_text_rows(values: Sequence[Any], *, allow_lists: bool = False,
                  first_row: int = 1) -> BadRows | None:
    """The rows of ``values`` that are not strings (nor lists of strings with
    ``allow_lists``), numbered from ``first_row``; None when every row is text."""
    def is_text(value: Any) -> bool:
        if isinstance(value, str):
            return True
        return (allow_lists and isinstance(value, (list, tuple))
                and all(isinstance(v, str) for v in value))

    bad = [i for i, value in enumerate(values) if not is_text(value)]
    if not bad:
        return None
    return BadRows([first_row + i for i in bad],
                   [_describe(first_row + i, values[i]) for i in bad[:SHOWN_ROWS]])


def text_fix(field: str) -> str:
    return (f"Give every row a {field!r} text (\"\" for a missing one; rows count from 1) or "
            "remove those rows; nothing was run")


def check_text_list(values: Sequence[Any], field: str, *, allow_lists: bool = False,
                    first_row: int = 1, file: str | Path | None = None) -> None:
    """Refuse a list of texts (an argument, a streamed chunk) with any non-text row."""
    bad = bad_text_rows(values, allow_lists=allow_lists, first_row=first_row)
    if bad is not None:
        raise BlindspotInputError(bad.describe(), fix=text_fix(field), file=file,
                                  row=bad.rows[0], field=field)


@dataclass(frozen=True)
class DataRoles:
    """One data source as the input check sees it: its ``name`` (the file as given), its
    ``columns``, the column each role reads (None: the data has none) and, per role, how the
    user names that column (``--references-column``)."""

    name: str
    columns: Sequence[str]
    roles: Mapping[str, str | None]
    flags: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class MetricNeeds:
    """What one metric reads besides the text it scores: per role (``references``,
    ``source``), ``"required"``, ``"optional"`` or ``"none"`` (its scorer's declared facts)."""

    name: str
    needs: Mapping[str, str]


def _example(role: str, data: DataRoles) -> str:
    """A column of ``data`` that could hold ``role``: the closest by name among those no role
    reads, else the first of those, else ``NAME``."""
    free = [c for c in data.columns if c not in set(data.roles.values())]
    close = [c for c in free if c.lower() in role.lower() or role.lower() in c.lower()]
    return (close or free or ["NAME"])[0]


def check_inputs(data: Sequence[DataRoles], metrics: Sequence[MetricNeeds]) -> None:
    """Refuse, before any work, a metric that needs a role (references, a source) that a data
    source has no column for: one line with the file, the metric, the missing column, the
    columns the file has and the flag that names one."""
    for source in data:
        for metric in metrics:
            for role, need in metric.needs.items():
                if need != "required" or source.roles.get(role):
                    continue
                flag, example = source.flags.get(role, f"--{role}-column"), _example(role, source)
                raise BlindspotInputError(
                    f"metric {metric.name!r} needs {role}, and the data has no {role} column "
                    f"(its columns: {', '.join(map(str, source.columns))})", file=source.name,
                    fix=f"Name the column that holds them with {flag} {example} (from Python: "
                        f"columns={{{role!r}: {example!r}}}); nothing was run")


__all__ = ["BlindspotInputError", "DataRoles", "MetricNeeds", "as_input_error", "bad_text_rows",
           "check_inputs", "check_text_list", "message"]
