"""The text check of a whole ``datasets`` column: its Arrow type first, its rows only when needed.

Apart from :mod:`blindspot.errors` so that the error type, which every command imports at start-up,
does not pull in pyarrow.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa

from blindspot.errors import check_text_list


def _is_text_type(kind: Any, allow_lists: bool) -> bool:
    if pa.types.is_string(kind) or pa.types.is_large_string(kind):
        return True
    if allow_lists and (pa.types.is_list(kind) or pa.types.is_large_list(kind)):
        return _is_text_type(kind.value_type, False)
    return False


def check_text_column(dataset: Any, field: str, *, allow_lists: bool = False,
                      file: str | Path | None = None) -> None:
    """Refuse a Dataset whose column ``field`` is not text in every row (a number, a null).

    Reads the column's Arrow type and null count once; only when those show a problem are its
    values read to name the offending rows."""
    column = dataset.data.table.column(field)
    if _is_text_type(column.type, allow_lists) and column.null_count == 0:
        return
    values = dataset.select_columns([field]).to_dict()[field]
    check_text_list(values, field, allow_lists=allow_lists, file=file)
