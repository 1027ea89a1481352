"""MENLI-style preference sets as ``datasets.Dataset``: the shipped WMT20_de CSV and our own.

A MENLI-style set has one row per (sentence, attack) with the columns ``error`` (the error type),
``id``, ``source``, ``ref``, ``r`` (a machine translation of ``source``, the base of the ref-free
attack), ``hyp_para`` (a paraphrase of ``ref``), ``hyp_adv_based`` (the attack on ``ref``) and
``hyp_adv_free`` (the attack on ``r``). The shipped set (``menli_wmt20_de_adversarial.csv``) adds
``hyp_para_fixed`` and ``hyp_adv_based_fixed``, the same texts with casing and spacing artefacts
corrected; ``fixed=True`` reads those in place of ``hyp_para`` / ``hyp_adv_based``, so every
consumer reads the same column names either way.

Only the columns a mode compares are required (``preference.MODES``); ``id`` is optional (the
row index stands in). CSV cells are read as written: an empty cell is ``""``, and the strings
``"NA"`` or ``"null"`` stay text (pandas would turn them into missing values).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from blindspot.io import quiet_datasets, read_table, table_format  # LIFTED
from blindspot.protocols.preference import ERROR_TYPES, Mode

#: Every column of a MENLI-style set, in the shipped file's order.
MENLI_COLUMNS = ("error", "id", "source", "ref", "r", "hyp_para", "hyp_adv_based", "hyp_adv_free")
#: The corrected columns of the shipped set and the column each stands in for.
FIXED_COLUMNS = {"hyp_para": "hyp_para_fixed", "hyp_adv_based": "hyp_adv_based_fixed"}


def _read(source: str | Path) -> Any:
    """A file as a Dataset; CSV without pandas' missing-value guessing."""
    import datasets


    path = Path(source)
    if table_format(path) != "csv":
        return read_table(path)
    if not path.is_file():
        raise FileNotFoundError(f"input file not found: {path}")
    with quiet_datasets():
        return datasets.Dataset.from_csv(str(path), keep_in_memory=True, na_filter=False)


def _as_dataset(data: Any) -> Any:
    """A path, a Dataset, a dict of columns or a list of rows as a Dataset."""
    import datasets

    if isinstance(data, datasets.Dataset):
        return data
    if isinstance(data, Mapping):
        return datasets.Dataset.from_dict(dict(data))
    if isinstance(data, Sequence) and not isinstance(data, str):
        return datasets.Dataset.from_list(list(data))
    return _read(data)


def use_fixed(dataset: Any) -> Any:
    """``dataset`` with ``hyp_para`` / ``hyp_adv_based`` taken from their ``*_fixed`` columns."""
    missing = [c for c in FIXED_COLUMNS.values() if c not in dataset.column_names]
    if missing:
        raise ValueError(f"fixed=True needs the columns {missing}, which this set does not have "
                         f"(its columns: {dataset.column_names}); use fixed=False")
    for plain, fixed in FIXED_COLUMNS.items():
        if plain in dataset.column_names:
            dataset = dataset.remove_columns(plain)
        dataset = dataset.rename_column(fixed, plain)
    return dataset


def load_preference_set(data: Any, fixed: bool = False) -> Any:
    """A MENLI-style set as a Dataset (a jsonl/csv/parquet path, a Dataset, columns or rows).

    With ``fixed``, ``hyp_para`` and ``hyp_adv_based`` hold the ``*_fixed`` texts.
    """
    dataset = _as_dataset(data)
    return use_fixed(dataset) if fixed else dataset


def dataset_name(data: Any) -> str:
    """The display name of a data argument: a file's name, else ``"data"``."""
    return Path(str(data)).name if isinstance(data, (str, Path)) else "data"


def check_columns(dataset: Any, mode: Mode) -> None:
    """Fail with the missing columns, the mode and the fix, before any scoring."""
    missing = [c for c in mode.columns if c not in dataset.column_names]
    if missing:
        raise ValueError(f"the {mode.name} preference protocol compares {mode.description} and "
                         f"needs the columns {list(mode.columns)}; missing: {missing} (the data "
                         f"has {dataset.column_names}); rename the columns to the MENLI names")
    if dataset.num_rows == 0:
        raise ValueError("the preference set has no rows; nothing to score")
    for column in mode.columns:
        for index, value in enumerate(dataset[column]):
            if not isinstance(value, str):
                raise ValueError(f"row {index}, column {column!r}: expected text, got "
                                 f"{type(value).__name__} {value!r}; fill the cell")
    unknown = sorted(set(dataset["error"]) - set(ERROR_TYPES))
    if unknown:
        raise ValueError(f"column 'error' has unknown error type(s) {unknown}; the MENLI error "
                         f"types are {list(ERROR_TYPES)}")


def row_ids(dataset: Any) -> list[Any]:
    """The ``id`` column, else the row index."""
    return list(dataset["id"]) if "id" in dataset.column_names else list(range(dataset.num_rows))


__all__ = ["FIXED_COLUMNS", "MENLI_COLUMNS", "check_columns", "dataset_name",
           "load_preference_set", "row_ids", "use_fixed"]
