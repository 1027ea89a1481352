"""Readers of MT challenge sets in their published formats, and each benchmark's own statistic.

Every reader turns a file (or a folder of files) into :class:`ChallengeSet`: one
:class:`ChallengeItem` per contrastive pair, with the translation a good metric must prefer
(``good``) and the one it must score lower (``bad``), the source, the reference and the
phenomenon the pair tests. Formats are declared once in :data:`FORMATS`.

**DEMETR** (Karpinska et al., EMNLP 2022; github.com/marzenakrp/demetr): one JSON file per
perturbation, each a list of items with ``src_sent`` (source), ``eng_sent`` (human reference),
``mt_sent`` (machine translation), ``pert_sent`` (the perturbed machine translation),
``pert_name`` (the perturbation, e.g. ``critical_id8_negation``), ``pert_id``, ``severity``
(minor | major | critical | base), ``lang_tag`` and ``pert_check`` (false when the perturbation
could not be applied to that sentence: such items are skipped and counted). The good translation
is ``mt_sent`` and the bad one ``pert_sent``, except for the perturbations in
:data:`DEMETR_PERTURBED_IS_BETTER` (the reference put in place of the MT, which a metric should
score higher). DEMETR's statistic: the share of items where the perturbed translation scores
strictly lower (a tie is a miss), per perturbation.

**ACES** (Amrhein et al., WMT 2022; github.com/EdinburghNLP/ACES): a TSV file (tab-separated,
no quoting, a header row) with the columns ``source``, ``good-translation``,
``incorrect-translation``, ``reference`` and ``phenomena`` (optional ``ID`` and ``langpair``);
the same columns in a jsonl/json/csv/parquet file are read too. ACES's statistic, per
phenomenon: the Kendall-tau-like ``(concordant - discordant) / (concordant + discordant)`` where
a pair is concordant when the good translation scores strictly higher and every other pair,
ties included, is discordant; undefined (None) when a score of the phenomenon is missing (NaN).
"""

from __future__ import annotations

import csv
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from blindspot.errors import BlindspotInputError
from blindspot.io import read_table, table_format

#: DEMETR perturbations whose perturbed text is the better translation: id 35 puts the human
#: reference in place of the machine translation (a baseline a metric should score higher).
DEMETR_PERTURBED_IS_BETTER = frozenset({35})

DEMETR_FIELDS = ("src_sent", "eng_sent", "mt_sent", "pert_sent", "pert_name", "pert_id",
                 "pert_check")
ACES_COLUMNS = ("source", "good-translation", "incorrect-translation", "reference", "phenomena")


@dataclass(frozen=True)
class ChallengeItem:
    """One contrastive pair: a good metric scores ``good`` strictly above ``bad``."""

    id: str
    phenomenon: str
    source: str
    reference: str
    good: str
    bad: str
    group: str = ""  #: DEMETR's severity; empty for ACES


@dataclass
class ChallengeSet:
    """The items of one ``--data`` argument, and the items skipped per phenomenon."""

    name: str
    items: list[ChallengeItem]
    skipped: dict[str, int] = field(default_factory=dict)

    def as_dataset(self) -> Any:
        """The items as a ``datasets.Dataset`` (columns: the fields of :class:`ChallengeItem`)."""
        import datasets

        names = list(ChallengeItem.__dataclass_fields__)
        return datasets.Dataset.from_dict(
            {n: [getattr(item, n) for item in self.items] for n in names})


# -- statistics --------------------------------------------------------------------------------


def share_strictly_lower(counts: dict[str, int]) -> float | None:
    """DEMETR: hits / n, where a tie and a NaN pair are misses; None for no item."""
    return counts["hits"] / counts["n"] if counts["n"] else None


def tau_ties_discordant(counts: dict[str, int]) -> float | None:
    """ACES: ``(concordant - discordant) / n`` with ties discordant; None when a score is NaN or
    there is no item."""
    if counts["n_nan"] or not counts["n"]:
        return None
    discordant = counts["misses"] + counts["ties"]
    return (counts["hits"] - discordant) / counts["n"]


# -- readers -----------------------------------------------------------------------------------


def _text(value: Any, path: Path, where: str, name: str) -> str:
    if not isinstance(value, str):
        raise BlindspotInputError(f"{where}: expected text, got {type(value).__name__} "
                                  f"{value!r}", file=path, field=name,
                                  fix="every translation field must be a string")
    return value


def _demetr_files(path: Path) -> list[Path]:
    if path.is_dir():
        files = sorted(path.glob("*.json"))
        if not files:
            raise BlindspotInputError("the folder holds no .json file", file=path,
                                      fix="pass a DEMETR perturbation file or its dataset/ folder")
        return files
    if not path.is_file():
        raise BlindspotInputError("no such file or folder", file=path,
                                  fix="pass a DEMETR perturbation .json file or a folder of them")
    return [path]


def _json_list(path: Path) -> list[Any]:
    try:
        items = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise BlindspotInputError(f"not a JSON file ({error})", file=path,
                                  fix="DEMETR files are one JSON list of items each") from error
    if not isinstance(items, list):
        raise BlindspotInputError(f"expected a JSON list of items, got {type(items).__name__}",
                                  file=path, fix="DEMETR files are one JSON list of items each")
    return items


def _demetr_item(raw: Any, path: Path, index: int) -> tuple[ChallengeItem, bool]:
    """The item and whether DEMETR marks it correctly perturbed (``pert_check``)."""
    where = f"item {index}"
    if not isinstance(raw, dict):
        raise BlindspotInputError(f"{where}: expected an object, got {type(raw).__name__}",
                                  file=path, fix="each DEMETR item is a JSON object")
    missing = [f for f in DEMETR_FIELDS if f not in raw]
    if missing:
        raise BlindspotInputError(f"{where}: missing field(s) {missing}", file=path,
                                  field=missing[0], fix=f"a DEMETR item has {list(DEMETR_FIELDS)}")
    texts = {f: _text(raw[f], path, where, f) for f in ("src_sent", "eng_sent", "mt_sent",
                                                        "pert_sent", "pert_name")}
    check, pert_id = raw["pert_check"], raw["pert_id"]
    if not isinstance(check, bool):
        raise BlindspotInputError(f"{where}: pert_check must be true or false, got {check!r}",
                                  file=path, field="pert_check", fix="write true or false")
    if not isinstance(pert_id, int) or isinstance(pert_id, bool):
        raise BlindspotInputError(f"{where}: pert_id must be an integer, got {pert_id!r}",
                                  file=path, field="pert_id", fix="write the perturbation's id")
    good, bad = texts["mt_sent"], texts["pert_sent"]
    if pert_id in DEMETR_PERTURBED_IS_BETTER:
        good, bad = bad, good
    item = ChallengeItem(id=f"{texts['pert_name']}:{raw.get('id', index)}",
                         phenomenon=texts["pert_name"], source=texts["src_sent"],
                         reference=texts["eng_sent"], good=good, bad=bad,
                         group=str(raw.get("severity", "")))
    return item, check


def read_demetr(path: Path) -> ChallengeSet:
    """A DEMETR perturbation file, or a folder of them (files in name order)."""
    items: list[ChallengeItem] = []
    skipped: dict[str, int] = {}
    for file in _demetr_files(path):
        for index, raw in enumerate(_json_list(file)):
            item, applied = _demetr_item(raw, file, index)
            if applied:
                items.append(item)
            else:
                skipped[item.phenomenon] = skipped.get(item.phenomenon, 0) + 1
    return ChallengeSet(path.name, items, skipped)


def _aces_rows(path: Path) -> Iterator[dict[str, Any]]:
    """The rows of an ACES TSV (no quoting, as ACES writes it) or of any table file."""
    if path.suffix.lower() != ".tsv":
        table_format(path)  # a clear error for an extension we do not read
        yield from read_table(path)
        return
    if not path.is_file():
        raise BlindspotInputError("no such file", file=path, fix="pass an ACES .tsv file")
    with path.open(encoding="utf-8", newline="") as handle:
        reader = csv.reader(handle, delimiter="\t", quoting=csv.QUOTE_NONE)
        header = next(reader, None)
        if header is None:
            raise BlindspotInputError("the file is empty", file=path,
                                      fix="an ACES TSV starts with a header row")
        for line, cells in enumerate(reader, start=2):
            if len(cells) != len(header):
                raise BlindspotInputError(f"{len(cells)} tab-separated cells under a header of "
                                          f"{len(header)}", file=path, line=line,
                                          fix="one cell per header column, tab-separated")
            yield dict(zip(header, cells, strict=True))


def read_aces(path: Path) -> ChallengeSet:
    """An ACES file (TSV as published, or the same columns in a jsonl/csv/parquet file)."""
    items = []
    for index, row in enumerate(_aces_rows(path)):
        missing = [c for c in ACES_COLUMNS if c not in row]
        if missing:
            raise BlindspotInputError(f"missing column(s) {missing} (the file has "
                                      f"{list(row)})", file=path, field=missing[0],
                                      fix=f"ACES files have the columns {list(ACES_COLUMNS)}")
        texts = {c: _text(row[c], path, f"row {index}", c) for c in ACES_COLUMNS}
        items.append(ChallengeItem(id=str(row.get("ID", index)), phenomenon=texts["phenomena"],
                                   source=texts["source"], reference=texts["reference"],
                                   good=texts["good-translation"],
                                   bad=texts["incorrect-translation"]))
    return ChallengeSet(path.name, items)


# -- the declared formats ------------------------------------------------------------------------


@dataclass(frozen=True)
class ChallengeFormat:
    """A challenge set's file format and the benchmark's own statistic."""

    name: str
    paper: str
    read: Callable[[Path], ChallengeSet]
    statistic: str               #: the statistic's name in results.json
    statistic_help: str
    benchmark: Callable[[dict[str, int]], float | None]
    group: str | None = None     #: what ChallengeItem.group means, when the format has one


FORMATS: dict[str, ChallengeFormat] = {f.name: f for f in (
    ChallengeFormat("demetr", "Karpinska et al., 2022 (DEMETR)", read_demetr,
                    "detection_rate", "share of items where the perturbed translation scores "
                    "strictly lower (ties are misses)", share_strictly_lower, group="severity"),
    ChallengeFormat("aces", "Amrhein et al., 2022 (ACES)", read_aces,
                    "aces_tau", "(concordant - discordant) / (concordant + discordant), ties "
                    "discordant", tau_ties_discordant),
)}


def get_format(name: str) -> ChallengeFormat:
    if name not in FORMATS:
        raise ValueError(f"unknown challenge-set format {name!r}; choose one of {sorted(FORMATS)}")
    return FORMATS[name]


def read_challenge_set(name: str, path: str | Path) -> ChallengeSet:
    """``path`` read in format ``name``; an empty set is an error."""
    challenge = get_format(name).read(Path(path))
    if not challenge.items:
        raise BlindspotInputError(f"no {name.upper()} item to score (skipped: "
                                  f"{sum(challenge.skipped.values())})", file=path,
                                  fix="pass a file with at least one item")
    return challenge


__all__ = ["ACES_COLUMNS", "DEMETR_FIELDS", "DEMETR_PERTURBED_IS_BETTER", "FORMATS",
           "ChallengeFormat", "ChallengeItem", "ChallengeSet", "get_format", "read_aces",
           "read_challenge_set", "read_demetr", "share_strictly_lower", "tau_ties_discordant"]
