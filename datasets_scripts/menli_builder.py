"""Build a MENLI-style adversarial set (Chen & Eger 2023, §3) as a Hub-ready dataset folder.

MENLI's preference protocol needs, per row, an anchor text and two candidates: a meaning-preserving
paraphrase (``hyp_para``) and an adversarial text (``hyp_adv_*``) that stays close to the anchor
but carries one error. From (source, reference, paraphrase) data this builder writes a table with
the columns of MENLI's released sets (``error, id, source, ref, r, hyp_para, hyp_adv_based,
hyp_adv_free``) plus ``attack`` (the blindspot test that made the error):

- ref-based: ``hyp_adv_based`` = an attack applied to ``ref``; a good metric prefers
  m(ref, hyp_para) over m(ref, hyp_adv_based);
- ref-free: ``hyp_adv_free`` = the same attack applied to ``r``, a literal machine translation of
  the source (MENLI uses Google Translate); a good metric prefers m(source, ref) over
  m(source, hyp_adv_free). Without an ``r`` the set is ref-based only (as MENLI's PAWS sets) and
  ``r``/``hyp_adv_free`` are empty.

As in MENLI, the paraphrase of a number-error row is the reference with its numbers written in
words (num2words: "300%" -> "three hundred percent"), since a paraphrase from elsewhere rarely
keeps the numbers. A row enters an error type's table only when the attack changed both ``ref``
and ``r`` (the others are counted in the card, not hidden); ``per_error`` keeps the first N such
rows in input order (MENLI: 200). Every attack's random stream comes from (seed, attack, level,
row id), so the folder is byte-identical when rebuilt from the same inputs.

For the WMT21 de-en gold source the defaults are: ``ref`` = human translation A (``gold``),
``hyp_para`` = human translation B (``reference``, an independent human paraphrase, as MENLI's
PAWS-ori uses original paraphrases instead of back-translations), and ``r`` = the output of the
anonymised online MT system ``Online-B`` (WMT does not say which online system is Google's).

The folder reuses the blind-spots builder's machinery (fixed parquet options, content
fingerprint, card front matter, push): one config per error type (``add``, ``num``...) and a
default config ``all`` over all of them, so ``load_dataset(folder)`` gives the whole set offline.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import datasets
import pyarrow as pa
import yaml
from num2words import num2words

import blindspot
from blindspot.datasets_scripts.build_adversarial import (
    CARD_FILE,
    DATA_DIR,
    SPLIT,
    TAGS,
    GoldInput,
    LicenseChoice,
    check_version,
    choose_license,
    prepare_out_dir,
    resolve_gold,
    size_category,
    write_build_record,
    write_config_file,
)
from blindspot.datasets_scripts.gold_sources import GoldSource
from blindspot.parsing import ParsedText
from blindspot.paths import datasets_dir
from blindspot.perturbations import REGISTRY, get_perturbation, level_str, suite_tests
from blindspot.perturbations._menli import CATEGORY, MENLI_ERRORS, menli_error_types
from blindspot.perturbations.dataset import column_values, preparse
from blindspot.perturbations.number_error import is_number
from blindspot.perturbations.text_utils import replace_spans
from blindspot.scorers.menli import MENLI_CITATION

LAYOUT = "blindspot-menli-adversarial/1"
ALL_CONFIG = "all"
COLUMNS = ("error", "id", "source", "ref", "r", "hyp_para", "hyp_adv_based", "hyp_adv_free",
           "attack")
NUMBER_ERROR = "num"


@dataclass(frozen=True)
class MenliRoles:
    """Which input column plays which part; ``r`` comes from ``r_column`` or a system's output."""

    source: str = "source"
    ref: str = "gold"
    para: str = "reference"
    r_column: str | None = None
    r_system: str | None = None
    systems_column: str = "systems"
    id: str = "id"

    def describe_r(self) -> str:
        if self.r_column:
            return f"column `{self.r_column}`"
        if self.r_system:
            return f"MT system `{self.r_system}` (column `{self.systems_column}`)"
        return "none (ref-based only)"


#: the roles for gold sources that carry (source, reference, paraphrase, MT outputs)
DEFAULT_ROLES = {"wmt21_de_en": MenliRoles(r_system="Online-B")}


# -- the table ------------------------------------------------------------------------------------

def _column(ds: Any, name: str, what: str) -> list[Any]:
    """The column ``name`` as a list, or a ValueError naming the flag that chooses it."""

    if name not in ds.column_names:
        raise ValueError(f"the {what} column {name!r} is not in the data (columns: "
                         f"{ds.column_names}); choose it with --{what.replace(' ', '-')}-column")
    return column_values(ds, name)


def literal_translations(ds: Any, roles: MenliRoles) -> list[str | None] | None:
    """The ``r`` texts: a column, one system's outputs from a dict column, or None."""
    if roles.r_column:
        return _column(ds, roles.r_column, "r")
    if not roles.r_system:
        return None
    outputs = _column(ds, roles.systems_column, "systems")
    missing = sum(1 for o in outputs if not isinstance(o, dict) or roles.r_system not in o)
    if missing:
        known = sorted(next((o for o in outputs if isinstance(o, dict)), {}))
        raise ValueError(f"MT system {roles.r_system!r} has no output on {missing} rows; choose "
                         f"--r-system among {known}")
    return [o[roles.r_system] for o in outputs]


def anchor_table(ds: Any, roles: MenliRoles) -> dict[str, list[Any]]:
    """id, source, ref, r and hyp_para per input row, in input order."""
    ids = [str(i) for i in _column(ds, roles.id, "id")]
    if len(set(ids)) != len(ids):
        raise ValueError(f"the id column {roles.id!r} has duplicate values; the attacks' random "
                         f"streams need one id per row")
    r = literal_translations(ds, roles)
    return {"id": ids, "source": _column(ds, roles.source, "source"),
            "ref": _column(ds, roles.ref, "ref"), "hyp_para": _column(ds, roles.para, "para"),
            "r": r if r is not None else [None] * len(ids)}


def numbers_in_words(parsed: ParsedText) -> str:
    """The parsed text with each number the number-error attack would change written in words.

    "300%" -> "three hundred percent", "$2,000" -> "two thousand dollars" (MENLI's paraphrase
    for number errors, made with num2words).
    """


    text, tokens = parsed.text, parsed.tokens
    edits = []
    for k, tok in enumerate(tokens):
        if not is_number(parsed, tok):
            continue
        try:
            value = float(tok.text.replace(",", ""))
        except ValueError:
            continue
        words = num2words(int(value) if value.is_integer() and "." not in tok.text else value)
        start, end = tok.idx, tok.idx + len(tok.text)
        after = tokens[k + 1] if k + 1 < len(tokens) else None
        before = tokens[k - 1] if k > 0 else None
        if after is not None and after.text == "%":
            words, end = f"{words} percent", after.idx + 1
        elif before is not None and before.text == "$" and not before.ws:
            start = before.idx
            scale = after if after is not None and after.tag == "CD" and after.text.isalpha() \
                else None
            if scale is not None:
                words, end = f"{words} {scale.text} dollars", scale.idx + len(scale.text)
            else:
                words = f"{words} dollars"
        edits.append((start, end, words))
    return replace_spans(text, edits) if edits else text


@dataclass
class ErrorTable:
    """One error type's rows and how many input rows it could not use."""

    error: str
    attack: str
    level: str
    rows: list[dict[str, Any]]
    candidates: int
    not_applied: int


def attack_table(base: dict[str, list[Any]], error: str, attack: str, seed: int,
                 parses: dict[str, Any], per_error: int | None,
                 number_paraphrase: bool) -> ErrorTable:
    """The rows of one error type: the attack on ``ref`` and on ``r``, where both changed."""

    test = get_perturbation(attack)
    level = REGISTRY[attack].levels["translation"][0]
    usable = [i for i, ref in enumerate(base["ref"]) if isinstance(ref, str) and ref.strip()]
    has_r = any(r is not None for r in base["r"])

    def run(column: str) -> dict[str, list[Any]]:
        texts = [base[column][i] for i in usable]
        return test.apply_rows(texts, [base["id"][i] for i in usable], level, seed,
                               parses=[parses.get(t) for t in texts] if test.needs_parse else None)

    based = run("ref")
    free = run("r") if has_r else None
    rows: list[dict[str, Any]] = []
    for k, i in enumerate(usable):
        if not based["applied"][k] or (free is not None and not free["applied"][k]):
            continue
        para = base["hyp_para"][i]
        if number_paraphrase and error == NUMBER_ERROR:
            para = numbers_in_words(parses[base["ref"][i]])
        rows.append({"error": error, "id": base["id"][i], "source": base["source"][i],
                     "ref": base["ref"][i], "r": base["r"][i], "hyp_para": para,
                     "hyp_adv_based": based["perturbed"][k],
                     "hyp_adv_free": free["perturbed"][k] if free is not None else None,
                     "attack": attack})
    applied = len(rows)
    if per_error is not None:
        rows = rows[:per_error]
    return ErrorTable(error, attack, level_str(level), rows, len(base["id"]),
                      len(base["id"]) - applied)


# -- the build ------------------------------------------------------------------------------------

def _features() -> Any:

    return datasets.Features({c: datasets.Value("string") for c in COLUMNS})


def build_menli_dataset(
    data: Any, out_dir: str | os.PathLike[str], roles: MenliRoles | None = None,
    attacks: str | Sequence[str] = "menli", seed: int = 1, per_error: int | None = None,
    version: str = "1.0.0", name: str | None = None, data_dir: str | None = None,
    limit: int | None = None, number_paraphrase: bool = True, license: str | None = None,
) -> Path:
    """Write a MENLI-style adversarial set built from ``data`` to ``out_dir``; returns the folder.

    ``data`` is a Dataset, a jsonl/json/csv/parquet file or a gold source name (``wmt21_de_en``);
    ``roles`` says which columns are source, ref, paraphrase and ``r`` (default: the gold
    source's, else the :class:`MenliRoles` defaults).
    """


    version = check_version(version)
    if limit is not None and limit < 1:
        raise ValueError(f"limit must be at least 1, got {limit}")
    if per_error is not None and per_error < 1:
        raise ValueError(f"per_error must be at least 1, got {per_error}")
    given = resolve_gold(data, data_dir)
    licensed = choose_license(given, license)  # a misspelt --license stops before any work
    if roles is None:
        roles = DEFAULT_ROLES.get(given.source.name if given.source else "", MenliRoles())
    ds = given.ds if limit is None else given.ds.select(range(min(limit, given.ds.num_rows)))
    chosen = suite_tests(attacks)
    strangers = [a for a in chosen if REGISTRY[a].category != CATEGORY]
    if strangers:
        raise ValueError(f"{strangers} are not MENLI attacks; choose among "
                         f"{suite_tests(CATEGORY)} (or 'menli' for all)")
    error_of = {name: error for error, name in menli_error_types().items()}
    chosen.sort(key=lambda a: MENLI_ERRORS.index(error_of[a]))
    base = anchor_table(ds, roles)
    parses = preparse(base["ref"] + base["r"])
    tables = [attack_table(base, error_of[a], a, seed, parses, per_error,
                           number_paraphrase) for a in chosen]
    out = Path(out_dir)
    prepare_out_dir(out)
    files: dict[str, dict[str, Any]] = {}
    features = _features()
    for table in tables:
        columns = {c: [row[c] for row in table.rows] for c in COLUMNS}
        write_config_file(out, table.error, pa.table(columns), features, files)
    params = _build_params(name or _default_name(given), version, given, roles, chosen, tables,
                           seed, per_error, limit, ds.num_rows, number_paraphrase)
    record = write_build_record(out, params, files, version)
    source = given.source
    (out / CARD_FILE).write_text(render_menli_card(record, source, licensed), encoding="utf-8")
    return out


def default_out(data: str, name: str | None = None) -> Path:
    """Where ``build-menli`` writes without ``--out``: ``<datasets folder>/<name>``
    (:func:`blindspot.paths.datasets_dir`), the name ``blindspot-<data>-menli-adversarial`` by
    default."""
    return datasets_dir() / (name or f"blindspot-{Path(data).stem}-menli-adversarial")


def _default_name(given: GoldInput) -> str:
    base = given.source.name if given.source else Path(given.label).stem
    return f"blindspot-{base}-menli-adversarial"


def _build_params(name: str, version: str, given: GoldInput, roles: MenliRoles,
                  attacks: list[str], tables: list[ErrorTable], seed: int,
                  per_error: int | None, limit: int | None, rows: int,
                  number_paraphrase: bool) -> dict[str, Any]:
    """Every input that decides the folder's content (what the fingerprint covers)."""

    return {
        "layout": LAYOUT, "name": name, "version": version, "seed": seed,
        "per_error": per_error, "number_paraphrase": number_paraphrase,
        "roles": {"source": roles.source, "ref": roles.ref, "para": roles.para,
                  "r": roles.describe_r(), "id": roles.id},
        "attacks": [{"error": t.error, "attack": t.attack, "level": t.level,
                     "version": REGISTRY[t.attack].version, "rows": len(t.rows),
                     "not_applied": t.not_applied, "candidates": t.candidates} for t in tables],
        "input": {"kind": given.kind, "name": given.label, "sha256": given.sha256, "rows": rows,
                  "limit": limit, "gold_source": given.source.name if given.source else None},
        "blindspot_version": blindspot.__version__, "split": SPLIT, "attacks_requested": attacks,
    }


# -- the card -------------------------------------------------------------------------------------

def card_front_matter(record: dict[str, Any], source: GoldSource | None, license: str) -> str:
    """YAML front matter: an ``all`` config (default) over every error type's file, then one
    config per error type."""

    errors = [a["error"] for a in record["attacks"]]
    configs = [{"config_name": ALL_CONFIG, "data_files": [
        {"split": SPLIT, "path": f"{DATA_DIR}/*/{SPLIT}.parquet"}], "default": True}]
    configs += [{"config_name": e, "data_files": [
        {"split": SPLIT, "path": f"{DATA_DIR}/{e}/{SPLIT}.parquet"}]} for e in errors]
    total = sum(a["rows"] for a in record["attacks"])
    front = {
        "pretty_name": f"MENLI-style adversarial set: {_input_name(record, source)}",
        "license": license, "language": list(source.languages) if source else ["en"],
        "task_categories": ["translation"], "tags": [*TAGS, "menli", "preference"],
        "size_categories": [size_category(total)], "configs": configs,
    }
    return yaml.safe_dump(front, sort_keys=False, allow_unicode=True, width=1000)


def _input_name(record: dict[str, Any], source: GoldSource | None) -> str:
    return source.pretty_name if source else record["input"]["name"]


def render_menli_card(record: dict[str, Any], source: GoldSource | None,
                      license: LicenseChoice) -> str:
    """The README.md dataset card."""

    roles, inp = record["roles"], record["input"]
    lines = ["| config (MENLI error) | attack | level | rows | input rows it could not change |",
             "|---|---|---|---|---|"]
    lines += [f"| `{a['error']}` | {a['attack']} | {a['level']} | {a['rows']} | "
              f"{a['not_applied']} of {a['candidates']} |" for a in record["attacks"]]
    limit = f" (first {inp['limit']} rows)" if inp["limit"] else ""
    kept = (f"the first {record['per_error']} rows per error type" if record["per_error"]
            else "every row an attack changed")
    upstream = ", ".join(source.upstream) if source else "cite the input data's own origin"
    citation = MENLI_CITATION + ("\n\n" + source.citation if source else "")
    para = ("the reference with its numbers in words (num2words), as MENLI does"
            if record["number_paraphrase"] else f"column `{roles['para']}`")
    body = f"""
# MENLI-style adversarial set: {_input_name(record, source)}

A preference-based adversarial set for text-generation **evaluation metrics**, built with
blindspot after *MENLI: Robust Evaluation Metrics from Natural Language Inference* (Chen & Eger,
TACL 2023, §3): each row pairs an anchor with a meaning-preserving paraphrase and an adversarial
candidate that stays close to the anchor but carries one error (the row's `error`).

- ref-based: a good metric scores m(`ref`, `hyp_para`) above m(`ref`, `hyp_adv_based`);
  `hyp_adv_based` is the attack applied to `ref`.
- ref-free: a good metric scores m(`source`, `ref`) above m(`source`, `hyp_adv_free`);
  `hyp_adv_free` is the attack applied to `r`, a literal machine translation of the source.

## Roles

- `source`: column `{roles['source']}`; `ref`: column `{roles['ref']}`; `hyp_para`: column
  `{roles['para']}` (for `num` rows: {para}); `r`: {roles['r']}; `id`: column `{roles['id']}`.
- MENLI makes `r` with Google Translate; here it is the MT output named above. A row is kept for
  an error type only when the attack changed both `ref` and `r`.

## Configs

`{ALL_CONFIG}` (the default) holds every row; each error type is also a config of its own. One
split, `{SPLIT}`. Seed {record['seed']}; {kept}.

{chr(10).join(lines)}

## Version

- version: **{record['version']}** (full: `{record['full_version']}`)
- content fingerprint: `sha256:{record['fingerprint']}` (build parameters and every parquet
  file's bytes; rebuilding from the same inputs gives the same files)

## How to load

```python
from datasets import load_dataset

rows = load_dataset("path/to/{record['name']}", split="{SPLIT}")          # all errors
numbers = load_dataset("path/to/{record['name']}", "num", split="{SPLIT}")  # one error type
```

## Provenance

- input: `{inp['name']}` ({inp['kind']}), {inp['rows']} rows{limit}, sha256 `{inp['sha256']}`
- upstream data: {upstream}
- blindspot version: {record['blindspot_version']}

## Licence

The texts derive from the upstream data, whose licence applies (`{license.license}`:
{license.origin}); use them for research on evaluation metrics.

## Citation

```bibtex
{citation}
```
"""
    return f"---\n{card_front_matter(record, source, license.license)}---\n{body}"
