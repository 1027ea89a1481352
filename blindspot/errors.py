"""The one exception for bad user input, and the checks of text columns that raise it.

A :class:`BlindspotInputError` is a ``ValueError`` that knows where the problem is (file,
line or row, field) and what to do about it, and prints as one paragraph. The command line
prints it after ``error: `` and exits 1; the Python API raises it as it is.

Text columns are checked once per column, before any work: through Arrow's types and null
counts for a loaded table (no Python loop over the cells), or one pass over a plain list.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
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


__all__ = ["BlindspotInputError", "bad_text_rows", "check_text_list"]
