"""Build a versioned, Hub-ready adversarial dataset repository folder from a task's gold data.

The folder holds one config per (test, level), named ``<test>-<level>`` (``truncation-0.1``),
with every seed's rows in ``data/<config>/test.parquet`` (``seed`` is a column), a ``gold`` config
with the untouched gold rows, a ``README.md`` dataset card (YAML ``configs`` so that
``load_dataset(folder, "truncation-0.1")`` works offline and on the Hub) and
``blindspot_build.json`` with the same metadata for machines.

Versioning: a semantic version chosen by the builder plus a content fingerprint, the sha256 of
the build parameters and of every parquet file's bytes. Nothing time- or machine-dependent is
written (no timestamps, no absolute paths) and parquet is written with fixed options from one
contiguous table, so rebuilding from the same inputs gives byte-identical files.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import datasets
import pyarrow
import pyarrow.compute as pc
import pyarrow.parquet as pq
import yaml
from huggingface_hub import HfApi, get_token
from huggingface_hub import constants as hub_constants
from huggingface_hub.errors import HfHubHTTPError, OfflineModeIsEnabled

import blindspot
from blindspot.datasets_scripts.gold_sources import (
    BLINDSPOT_CITATION,
    GoldSource,
    describe_sources,
    get_gold_source,
    gold_file,
    hub_offline,
    is_gold_source,
    load_gold,
)
from blindspot.datasets_scripts.hub_licenses import (
    check_license,
    is_hub_license,
)
from blindspot.demo import demo_columns, load_demo
from blindspot.faults import atomic_path
from blindspot.io import read_table
from blindspot.paths import datasets_dir
from blindspot.perturbations import REGISTRY, canonical_name, canonical_task, level_str
from blindspot.perturbations.dataset import run_suite
from blindspot.perturbations.suite_summary import summarise_suite
from blindspot.runner.data import ROLE_CANDIDATES
from blindspot.seeding import parse_seeds

#: Bumped when the folder layout or the card's meaning changes.
LAYOUT = "blindspot-adversarial-dataset/1"
SPLIT = "test"
GOLD_CONFIG = "gold"
BUILD_FILE = "blindspot_build.json"
CARD_FILE = "README.md"
DATA_DIR = "data"
#: the column a file's references are kept in (the name `blindspot run` reads first)
REFERENCES = "references"
#: Fixed parquet options: the same table always gives the same bytes.
PARQUET_OPTIONS: dict[str, Any] = {
    "compression": "zstd", "compression_level": 3, "use_dictionary": True,
    "write_statistics": True, "version": "2.6", "data_page_version": "1.0",
    "data_page_size": 1 << 20, "write_page_index": False, "store_schema": True,
}
ROW_GROUP_ROWS = 2048
TAGS = ("blindspot", "adversarial", "stress-test", "perturbation", "metric-evaluation",
        "text-generation-evaluation")
_SEMVER = re.compile(r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z.-]+)?$")


class PushError(RuntimeError):
    """The folder could not be uploaded; the message says why and what to do."""


@dataclass(frozen=True)
class GoldInput:
    """The gold rows to perturb and where they came from (for the card's provenance)."""

    ds: Any
    kind: str  # "file", "gold-source", "dataset", "demo"
    label: str  # file name, source name or "in-memory Dataset"
    sha256: str | None  # of the input file's bytes; None = hash of the written gold parquet
    source: GoldSource | None
    references_column: str | None = None
    path: Path | None = None  # the input file, when the gold came from one


@dataclass(frozen=True)
class LicenseChoice:
    """The licence id a card declares, and where it came from (the card says both)."""

    license: str
    origin: str


#: licences of shared input files that are not gold sources (facts from the shared data's DATA.md)
KNOWN_FILE_LICENSES = {
    "menli_wmt20_de_adversarial.csv": LicenseChoice(
        "mit", "the MENLI adversarial set WMT20_de is released under MIT"),
}


# -- small helpers --------------------------------------------------------------------------------

def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sha256_file(path: str | os.PathLike[str]) -> str:
    """The sha256 of a file's bytes, read in blocks."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def canonical_json(value: Any) -> str:
    """One fixed JSON text for ``value`` (sorted keys, no spacing choices left open)."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def config_name(test: str, level: str) -> str:
    """``<test>-<level>``, with characters the Hub dislikes in config names replaced by ``_``."""
    if level in ("", "-"):
        return test
    return f"{test}-{re.sub(r'[^A-Za-z0-9._-]', '_', level)}"


def check_version(version: str) -> str:
    """``version`` when it is a semantic version (``1.0.0``, ``2.1.0-rc.1``), else a clear error."""
    if not _SEMVER.match(version):
        raise ValueError(f"version {version!r} is not a semantic version; use MAJOR.MINOR.PATCH "
                         f"such as 1.0.0")
    return version


def describe_resource(value: Any) -> Any:
    """A stable, JSON-able description of a resource (model name, corpus) for provenance."""
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        return {"texts": len(value), "sha256": sha256_bytes("\x1e".join(value).encode("utf-8"))}
    name = getattr(value, "name_or_path", None) or getattr(getattr(value, "config", None),
                                                           "_name_or_path", None)
    return {"object": type(value).__name__, **({"name": str(name)} if name else {})}


# -- reading the gold -----------------------------------------------------------------------------

def _demo_input(task: str | None) -> tuple[GoldInput, dict[str, Any]]:
    """The embedded demo corpus of ``task`` and its column roles."""
    if task is None:
        raise ValueError("--data demo needs --task (the demo has one corpus per task)")
    task = canonical_task(task)
    roles = demo_columns(task)
    return (GoldInput(load_demo(task), "demo", f"demo:{task}", None, None,
                      roles.get("references")), roles)


def resolve_gold(gold: Any, data_dir: str | None = None) -> GoldInput:
    """The gold rows for ``gold``: a Dataset, a file path, a gold source name, or ``demo``."""
    if not isinstance(gold, (str, os.PathLike)):
        if not hasattr(gold, "column_names"):
            raise TypeError(f"gold must be a datasets.Dataset, a file path or a gold source "
                            f"name, got {type(gold).__name__}")
        return GoldInput(gold, "dataset", "in-memory Dataset", None, None)
    text = os.fspath(gold)
    path = Path(text)
    if path.is_file():

        return GoldInput(read_table(path), "file", path.name, sha256_file(path), None,
                         path=path)
    if is_gold_source(text):

        source = get_gold_source(text)
        local = gold_file(source.name, data_dir)
        ds = load_gold(source.name, data_dir)
        return GoldInput(ds, "gold-source", source.file, sha256_file(local) if local else None,
                         source, source.references_column)
    if path.suffix:
        raise FileNotFoundError(f"gold file not found: {path}")
    raise ValueError(f"{text!r} is neither a file nor a gold source; choose a jsonl/json/csv/"
                     f"parquet file, 'demo', or one of: "
                     + ", ".join(f"{s['name']} ({s['task']})" for s in describe_sources()))


# -- parquet --------------------------------------------------------------------------------------

def write_parquet(table: Any, features: Any, path: Path) -> None:
    """Write ``table`` with the ``datasets`` features in its schema, with fixed options.

    The table is cast to the features' Arrow schema and made contiguous first, so neither the
    chunking it arrived in nor the metadata it carried can change the bytes.
    """

    meta = {b"huggingface": canonical_json({"info": {"features": features.to_dict()}}).encode()}
    table = table.cast(features.arrow_schema).replace_schema_metadata(meta).combine_chunks()
    with atomic_path(path) as temporary:  # whole or not at all, even on a full disk
        pq.write_table(table, str(temporary), row_group_size=ROW_GROUP_ROWS, **PARQUET_OPTIONS)


def write_config_file(out: Path, config: str, table: Any, features: Any,
                      files: dict[str, dict[str, Any]]) -> str:
    """Write config ``config``'s split to ``data/<config>/test.parquet``; record its hash, size and
    rows in ``files``. Returns the file's path relative to ``out``."""
    rel = f"{DATA_DIR}/{config}/{SPLIT}.parquet"
    write_parquet(table, features, out / rel)
    files[rel] = {"sha256": sha256_file(out / rel), "bytes": (out / rel).stat().st_size,
                  "rows": table.num_rows}
    return rel


def _arrow_table(ds: Any) -> Any:
    """All rows of a Dataset as one Arrow table, in order (any ``select`` mapping applied)."""
    return ds.with_format("arrow")[:]


# -- the build ------------------------------------------------------------------------------------

@dataclass
class ConfigInfo:
    """One config of the folder: what it holds and its statistics."""

    config_name: str
    test: str
    category: str
    level: str
    seeds: list[int]
    rows: int
    rows_per_seed: int
    applied: float
    noise_ratio: float
    noise_ratio_std: float
    path: str

    def as_dict(self) -> dict[str, Any]:
        return {"config_name": self.config_name, "test": self.test, "category": self.category,
                "level": self.level, "seeds": self.seeds, "rows": self.rows,
                "rows_per_seed": self.rows_per_seed, "applied": round(self.applied, 6),
                "noise_ratio_mean": round(self.noise_ratio, 6),
                "noise_ratio_std_over_seeds": round(self.noise_ratio_std, 6), "path": self.path}


def prepare_out_dir(out: Path) -> None:
    """Make ``out`` ready: new, empty, or a previous build of ours (whose files are replaced)."""
    if out.exists() and not out.is_dir():
        raise ValueError(f"output path {out} exists and is not a folder")
    if out.is_dir() and any(out.iterdir()):
        if not (out / BUILD_FILE).is_file():
            raise ValueError(f"output folder {out} is not empty and is not a blindspot dataset "
                             f"folder; choose a new or empty folder")
        shutil.rmtree(out / DATA_DIR, ignore_errors=True)
        for name in (CARD_FILE, BUILD_FILE):
            (out / name).unlink(missing_ok=True)
    out.mkdir(parents=True, exist_ok=True)


def _canonical_levels(levels: Mapping[str, Sequence[Any]] | None) -> dict[str, list[Any]] | None:

    if not levels:
        return None
    return {canonical_name(name): list(values) for name, values in levels.items()}


def _split_configs(suite: Any, keep: list[str]) -> list[tuple[str, str, Any]]:
    """(test, level, Arrow table) per (test, level) of ``suite``, in the order the cells ran."""

    table = _arrow_table(suite).select(keep)
    tests = table.column("perturbation").to_pylist()
    levels = table.column("level").to_pylist()
    out = []
    for test, level in dict.fromkeys(zip(tests, levels, strict=True)):
        mask = pc.and_(pc.equal(table.column("perturbation"), test),
                       pc.equal(table.column("level"), level))
        out.append((test, level, table.filter(mask)))
    return out


def _summaries(suite: Any, column: str) -> dict[tuple[str, str], Any]:

    if suite.num_rows == 0:
        return {}
    return {(c.test, c.level): c for c in summarise_suite(suite, column)}


def build_adversarial_dataset(
    gold: Any, task: str | None, out_dir: str | os.PathLike[str],
    tests: str | Sequence[str] = "fluency,consistency", seeds: Sequence[int] = (1, 2, 3, 4, 5),
    levels: Mapping[str, Sequence[Any]] | None = None, resources: Mapping[str, Any] | None = None,
    column: str = "gold", id_column: str = "id", source_column: str | None = None,
    version: str = "1.0.0", name: str | None = None, num_proc: int | None = None,
    data_dir: str | None = None, limit: int | None = None,
    gold_only_columns: Sequence[str] | None = None, license: str | None = None,
    progress: bool = False,
) -> Path:
    """Run the stress-test suite on ``gold`` and write a Hub dataset repository folder.

    ``gold`` is a Dataset, a jsonl/json/csv/parquet file, a gold source name (``cnndm``,
    ``wmt21_de_en``, ``ted_mt_zh_en``, ``wikitext103`` or their tasks) or ``"demo"``. ``task``
    may be None for a gold source (its own task). ``source_column`` None means the gold source's
    source column when there is one, else none (tests that need a source are then skipped, and
    the card says so). ``limit`` keeps the first rows only. Returns the folder.
    """

    version = check_version(version)
    if limit is not None and limit < 1:
        raise ValueError(f"limit must be at least 1, got {limit}")
    seeds = parse_seeds(seeds, "seeds")
    if isinstance(gold, str) and gold == "demo":
        given, roles = _demo_input(task)
        column = roles.get("hypothesis", column)
        source_column = source_column or roles.get("source")
    else:
        given = _with_references(resolve_gold(gold, data_dir))
    licensed = choose_license(given, license)  # a misspelt --license stops before any work
    source = given.source
    if task is None:
        if source is None:
            raise ValueError("task is required for this data; choose one of summarization, "
                             "translation, translation_paragraph, open_ended")
        task = source.task
    task = canonical_task(task)
    ds = given.ds if limit is None else given.ds.select(range(min(limit, given.ds.num_rows)))
    if source is not None and source_column is None and source.source_column in ds.column_names:
        source_column = source.source_column
    bulky = list(gold_only_columns if gold_only_columns is not None
                 else (source.gold_only_columns if source else ()))
    suite, plan = run_suite(ds, tests, task, seeds, column=column, id_column=id_column,
                            source_column=source_column, levels=_canonical_levels(levels),
                            resources=resources, num_proc=num_proc, progress=progress)
    out = Path(out_dir)
    prepare_out_dir(out)
    files, configs = _write_tables(out, ds, suite, bulky, column)
    input_sha = given.sha256 or files[f"{DATA_DIR}/{GOLD_CONFIG}/{SPLIT}.parquet"]["sha256"]
    params = _build_params(
        name or _default_name(given), version, task, tests, plan, seeds, column, id_column,
        source_column, bulky, resources, given, input_sha, ds.num_rows, limit,
        ds.column_names)
    record = write_build_record(out, params, files, version,
                                configs=[c.as_dict() for c in configs])
    card = render_card(record, source, licensed)
    (out / CARD_FILE).write_text(card, encoding="utf-8")
    return out


def _write_tables(out: Path, ds: Any, suite: Any, bulky: list[str], column: str
                  ) -> tuple[dict[str, dict[str, Any]], list[ConfigInfo]]:
    """Write the gold config and one parquet per (test, level); their hashes and statistics."""


    files: dict[str, dict[str, Any]] = {}

    def write(config: str, table: Any, features: Any) -> str:
        return write_config_file(out, config, table, features, files)

    write(GOLD_CONFIG, _arrow_table(ds), ds.features)
    keep = [c for c in suite.column_names if c not in bulky]
    features = datasets.Features({c: suite.features[c] for c in keep})
    stats = _summaries(suite.select_columns([c for c in keep]), column)
    configs = []
    for test, level, table in _split_configs(suite, keep):
        name = config_name(test, level)
        rel = write(name, table, features)
        seeds = sorted(set(table.column("seed").to_pylist()))
        cell = stats[(test, level)]
        configs.append(ConfigInfo(name, test, REGISTRY[test].category, level, seeds,
                                  table.num_rows, cell.rows, cell.applied, cell.noise_ratio,
                                  cell.noise_ratio_std, rel))
    return files, configs


def _default_name(given: GoldInput) -> str:
    base = given.source.name if given.source else Path(given.label).stem
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", base).strip("-") or "data"
    return f"blindspot-{slug}-adversarial"


def _build_params(name: str, version: str, task: str, tests: str | Sequence[str], plan: Any,
                  seeds: list[int], column: str, id_column: str, source_column: str | None,
                  bulky: list[str], resources: Mapping[str, Any] | None, given: GoldInput,
                  input_sha: str, rows: int, limit: int | None,
                  gold_columns: Sequence[str]) -> dict[str, Any]:
    """Every input of the build that decides its content (what the fingerprint covers)."""

    ran: dict[str, list[str]] = {}
    for item in plan.items:
        lvl = level_str(REGISTRY[item.test].level_kind.parse(item.level))
        ran.setdefault(item.test, [])
        if lvl not in ran[item.test]:
            ran[item.test].append(lvl)
    requested = tests.split(",") if isinstance(tests, str) else list(tests)
    return {
        "layout": LAYOUT, "name": name, "version": version, "task": task,
        "tests_requested": [t.strip() for t in requested if t.strip()],
        "tests": [{"name": t, "category": REGISTRY[t].category, "levels": lv,
                   "version": REGISTRY[t].version, "deterministic": REGISTRY[t].deterministic}
                  for t, lv in ran.items()],
        "skipped": dict(sorted(plan.skipped.items())), "seeds": seeds,
        "columns": {"hypothesis": column, "id": id_column, "source": source_column,
                    "references": given.references_column,
                    "gold_only": bulky},
        "resources": {k: describe_resource(v) for k, v in sorted((resources or {}).items())
                      if v is not None},
        "input": {"kind": given.kind, "name": given.label, "sha256": input_sha, "rows": rows,
                  "limit": limit, "gold_source": given.source.name if given.source else None},
        "gold_columns": list(gold_columns), "blindspot_version": blindspot.__version__,
        "split": SPLIT,
    }


def content_fingerprint(params: Mapping[str, Any], files: Mapping[str, Mapping[str, Any]]) -> str:
    """sha256 over the build parameters and every data file's bytes (by their hashes)."""
    digest = hashlib.sha256(canonical_json(params).encode("utf-8"))
    for rel in sorted(files):
        digest.update(f"\n{rel}\0{files[rel]['sha256']}".encode())
    return digest.hexdigest()


def write_build_record(out: Path, params: Mapping[str, Any], files: Mapping[str, Any],
                       version: str, **extra: Any) -> dict[str, Any]:
    """Write ``blindspot_build.json`` (the parameters, fingerprint, full version, files and
    software versions, plus ``extra``) into ``out``; returns the record."""
    fingerprint = content_fingerprint(params, files)
    record = {**params, "fingerprint": fingerprint,
              "full_version": full_version(version, fingerprint), "files": files, **extra,
              "software": software_versions()}
    (out / BUILD_FILE).write_text(json.dumps(record, indent=2, sort_keys=True,
                                             ensure_ascii=False) + "\n", encoding="utf-8")
    return record


def full_version(version: str, fingerprint: str) -> str:
    """``1.0.0+<first 12 hex digits of the fingerprint>`` (semver build metadata)."""
    return f"{version}+{fingerprint[:12]}"


def software_versions() -> dict[str, str]:

    return {"datasets": datasets.__version__, "pyarrow": pyarrow.__version__}


# -- the dataset card -----------------------------------------------------------------------------

def size_category(rows: int) -> str:
    for bound, label in ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"),
                         (1_000_000, "100K<n<1M"), (10_000_000, "1M<n<10M")):
        if rows < bound:
            return label
    return "10M<n<100M"


def card_yaml(record: Mapping[str, Any], source: GoldSource | None, license: str) -> str:
    """The card's YAML front matter: licence, task, languages, tags and every config's files."""

    task_category = source.task_category if source else {
        "summarization": "summarization", "open_ended": "text-generation"}.get(
        record["task"], "translation")
    configs = [{"config_name": GOLD_CONFIG, "data_files": [
        {"split": SPLIT, "path": f"{DATA_DIR}/{GOLD_CONFIG}/{SPLIT}.parquet"}], "default": True}]
    configs += [{"config_name": c["config_name"],
                 "data_files": [{"split": SPLIT, "path": c["path"]}]} for c in record["configs"]]
    total = sum(f["rows"] for f in record["files"].values())
    front = {
        "pretty_name": _pretty_name(record, source), "license": license,
        "language": list(source.languages) if source else ["en"],
        "task_categories": [task_category], "tags": list(TAGS),
        "size_categories": [size_category(total)], "configs": configs,
    }
    return yaml.safe_dump(front, sort_keys=False, allow_unicode=True, width=1000)


def _pretty_name(record: Mapping[str, Any], source: GoldSource | None) -> str:
    what = source.pretty_name if source else record["input"]["name"]
    return f"blindspot adversarial set: {what}"


def _configs_table(configs: Sequence[Mapping[str, Any]]) -> str:
    lines = ["| config | test | category | level | seeds | rows | applied | mean noise ratio |",
             "|---|---|---|---|---|---|---|---|"]
    for c in configs:
        std = f" ± {c['noise_ratio_std_over_seeds']:.4f}" if len(c["seeds"]) > 1 else ""
        lines.append(f"| `{c['config_name']}` | {c['test']} | {c['category']} | {c['level']} | "
                     f"{','.join(map(str, c['seeds']))} | {c['rows']} | {c['applied']:.1%} | "
                     f"{c['noise_ratio_mean']:.4f}{std} |")
    return "\n".join(lines)


def render_card(record: Mapping[str, Any], source: GoldSource | None,
                license: LicenseChoice) -> str:
    """The README.md dataset card: YAML front matter and a body that explains and credits."""
    inp, cols = record["input"], record["columns"]
    example = record["configs"][0]["config_name"] if record["configs"] else GOLD_CONFIG
    skipped = "\n".join(f"  - `{t}`: {why}" for t, why in record["skipped"].items()
                        ) or "  - none"
    tests = "\n".join(f"  - `{t['name']}` ({t['category']}, v{t['version']}): levels "
                      f"{', '.join(t['levels'])}" for t in record["tests"]) or "  - none"
    about = source.description if source else (
        f"The gold rows of `{inp['name']}` (task: {record['task']}).")
    upstream = _upstream_text(inp["kind"], source)
    limit = f" (first {inp['limit']} rows)" if inp["limit"] else ""
    seeds = ", ".join(map(str, record["seeds"]))
    citations = BLINDSPOT_CITATION + ("\n\n" + source.citation if source else "")
    loading = "\n".join([
        "```python", "from datasets import load_dataset", "",
        "# a local copy of this folder, or the Hub repository id once pushed",
        f'noised = load_dataset("path/to/{record["name"]}", "{example}", split="{SPLIT}")',
        f'gold = load_dataset("path/to/{record["name"]}", "{GOLD_CONFIG}", split="{SPLIT}")',
        "```"])
    body = f"""
# {_pretty_name(record, source)}

An adversarial (stress-test) dataset for text-generation **evaluation metrics**, built with
blindspot from the tests of *On the Blind Spots of Model-Based Evaluation
Metrics for Text Generation* (He et al., ACL 2023). Each config applies one test at one level to
the gold hypotheses (column `{cols['hypothesis']}`); a good metric should score the `perturbed`
text lower than the gold text, in proportion to the damage (`noise_ratio`).

{about}

## Version

- version: **{record['version']}** (full: `{record['full_version']}`)
- content fingerprint: `sha256:{record['fingerprint']}` (sha256 over the build parameters and
  every parquet file's bytes; rebuilding from the same inputs gives the same files and the same
  fingerprint)

## Configs

Every config has one split, `{SPLIT}`. `gold` holds the untouched gold rows; every other config
is `<test>-<level>`, with all seeds stacked (column `seed`) and rows in gold order within a
seed. *applied* is the fraction of rows the test changed (a row it cannot change comes back
unchanged with `applied=False`); *mean noise ratio* is the mean over rows, then over seeds
(± the spread over seeds).

{_configs_table(record['configs'])}

Columns: the gold columns ({', '.join(f'`{c}`' for c in _gold_columns(record, cols))}), then
`perturbed` (the noised hypothesis), `applied`, `noise_ratio`, `perturbation` (the test),
`level` and `seed`. Column roles: hypothesis `{cols['hypothesis']}`, id `{cols['id']}`,
references `{cols['references'] or '-'}`, source `{cols['source'] or '-'}`.

## How to load

{loading}

## Provenance

- task: `{record['task']}`
- input: `{inp['name']}` ({inp['kind']}), {inp['rows']} rows{limit}, sha256 `{inp['sha256']}`
- upstream data: {upstream}
- blindspot version: {record['blindspot_version']}
- tests requested: `{','.join(record['tests_requested'])}`; seeds: {seeds}
- tests run:
{tests}
- tests skipped:
{skipped}

## Licence

The perturbed texts derive from the upstream data, whose licence applies (`{license.license}`:
{license.origin}); use them for research on evaluation metrics.

## Citation

```bibtex
{citations}
```
"""
    return f"---\n{card_yaml(record, source, license.license)}---\n{body}"


def _upstream_text(kind: str, source: GoldSource | None) -> str:
    if source is not None:
        return ", ".join(source.upstream)
    if kind == "demo":
        return "the blindspot demo corpus (texts written for blindspot; no upstream dataset)"
    return "not a registered gold source; cite the input data's own origin"


def choose_license(given: GoldInput, explicit: str | None = None) -> LicenseChoice:
    """The card's licence: ``--license``, else the input's own when known (a gold source, a shared
    file DATA.md describes, a dataset card beside the file, the demo), else ``other``."""
    if explicit:
        return LicenseChoice(check_license(explicit), "given with --license")
    source = given.source or (_source_of_file(given.path) if given.path else None)
    if source is not None:
        return LicenseChoice(source.license, f"the licence of the {source.name} gold source's "
                                             f"upstream data ({', '.join(source.upstream)})")
    if given.kind == "demo":
        return LicenseChoice("mit", "the demo texts are blindspot's own (MIT)")
    if given.path is not None:
        found = KNOWN_FILE_LICENSES.get(given.path.name) or _card_license(given.path)
        if found is not None:
            return found
    return LicenseChoice("other", "not known: the input carries no licence; pass --license "
                                  "with the upstream data's Hub licence id")


def _source_of_file(path: Path) -> GoldSource | None:
    """The gold source whose file ``path`` is (a copy of the shared data), if any."""
    return next((get_gold_source(s["name"]) for s in describe_sources()
                 if get_gold_source(s["name"]).file == path.name), None)


def _card_license(path: Path) -> LicenseChoice | None:
    """The ``license`` of the dataset card (README.md front matter) in the file's folder."""

    card = path.parent / CARD_FILE  # a Hub dataset folder's card
    try:
        text = card.read_text(encoding="utf-8")
        front = yaml.safe_load(text.split("---", 2)[1]) if text.startswith("---") else None
    except (OSError, UnicodeDecodeError, IndexError, yaml.YAMLError):
        return None
    found = front.get("license") if isinstance(front, dict) else None
    if isinstance(found, list) and found:
        found = found[0]
    if not isinstance(found, str) or not found.strip():
        return None
    found = found.strip()
    if not is_hub_license(found):  # a file's content: only a listed id is carried over
        return LicenseChoice("other", f"the dataset card beside the input ({card}) declares "
                                      f"{found!r}, which is not a Hub licence id; pass "
                                      "--license with the upstream data's Hub licence id")
    return LicenseChoice(found, f"the dataset card beside the input ({card.name})")


def _with_references(given: GoldInput) -> GoldInput:
    """A file's ``reference`` column kept as ``references``, the column name ``blindspot run``
    reads first (a gold source keeps its registered columns)."""
    if given.source is not None or given.references_column is not None:
        return given
    names = list(given.ds.column_names)
    found = next((c for c in ROLE_CANDIDATES["references"] if c in names), None)
    if found is None:
        return given
    ds = given.ds if found == REFERENCES else given.ds.rename_column(found, REFERENCES)
    return replace(given, ds=ds, references_column=REFERENCES)


def _gold_columns(record: Mapping[str, Any], cols: Mapping[str, Any]) -> list[str]:
    """The gold columns that the perturbed configs repeat (the bulky ones stay in ``gold``)."""
    return [c for c in record["gold_columns"] if c not in cols["gold_only"]]


# -- pushing --------------------------------------------------------------------------------------
#
# Two ways to publish a built folder, one result: the dataset repository ``repo_id`` whose newest
# commit holds exactly the folder's files, and an annotated tag ``v<version>`` on the commit of the
# first push of that version (the Hub's revision: ``load_dataset(..., revision="v1.0.0")``).
# - the Hub API (the default; the real Hub): create_repo, upload_folder, create_tag, with the
#   token from HF_TOKEN or the stored ``huggingface-cli login``;
# - ``git_root``: a commit and tag written straight into the git repository
#   ``<git_root>/datasets/<org>/<name>`` that a self-hosted Hub server serves through the Hub's
#   download API (olah's ``mirrors-path``), for servers that take no uploads.

#: the git branch a pushed repository's ``main`` revision is
MAIN_BRANCH = "main"
#: who the git path's commits and tags are by (no user name or address is read from the machine)
GIT_IDENTITY = {"GIT_AUTHOR_NAME": "blindspot", "GIT_AUTHOR_EMAIL": "blindspot@localhost",
                "GIT_COMMITTER_NAME": "blindspot", "GIT_COMMITTER_EMAIL": "blindspot@localhost"}
_REPO_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*$")


def commit_title(record: Mapping[str, Any]) -> str:
    """What a push's commit says it holds: the record's ``title`` (a report card's), else an
    adversarial dataset."""
    return str(record.get("title", "blindspot adversarial dataset"))


def version_tag(version: str) -> str:
    """The tag (Hub revision) of a build's semantic version: ``v1.0.0``."""
    return f"v{version}"


def _find_token(token: str | None) -> str | None:
    """``token``, else ``HF_TOKEN`` or the stored login; a stored token that cannot be read is a
    :class:`PushError` (never a traceback, and never the token's text)."""
    if token:
        return token
    try:
        return get_token()
    except OSError as error:
        raise PushError(f"cannot read the stored Hugging Face token ({error.strerror}: "
                        f"{error.filename}); log in again with `huggingface-cli login` or set "
                        f"HF_TOKEN") from error


def push_adversarial_dataset(folder: str | os.PathLike[str], repo_id: str,
                             token: str | None = None, private: bool = False,
                             git_root: str | os.PathLike[str] | None = None) -> str:
    """Publish a built folder as dataset ``repo_id`` and tag it ``v<version>``.

    Through the Hub API unless ``git_root`` is given (see above). The API path needs a token
    (``token=``, ``HF_TOKEN`` or ``huggingface-cli login``) and the network; whatever stops a push
    raises :class:`PushError` with one line saying what and that the folder is ready. The token is
    only ever sent to the endpoint (``HF_ENDPOINT``, else the Hub), never written or printed.
    Returns where the dataset is now.
    """
    path = Path(folder).resolve()
    if not (path / BUILD_FILE).is_file() or not (path / CARD_FILE).is_file():
        raise PushError(f"{path} is not a built blindspot dataset folder (no {BUILD_FILE} or "
                        f"{CARD_FILE}); build it first with build_adversarial_dataset(...)")
    if not _REPO_ID.match(repo_id) or ".." in repo_id:
        raise PushError(f"repository id {repo_id!r} must look like 'org/name'")
    record = json.loads((path / BUILD_FILE).read_text(encoding="utf-8"))
    if git_root is not None:
        return _commit_into_git(path, repo_id, Path(git_root), record)
    try:
        found = _find_token(token)
    except PushError as error:
        raise PushError(f"cannot push to {repo_id}: {error}. The dataset folder is ready at "
                        f"{path}.") from error
    problems = []
    if hub_offline():
        problems.append("the Hugging Face Hub is unreachable (offline mode: HF_HUB_OFFLINE is "
                        "set)")
    if not found:
        problems.append("no Hugging Face token: log in with `huggingface-cli login` or set "
                        "HF_TOKEN")
    if problems:
        raise PushError(f"cannot push to {repo_id}: " + "; ".join(problems)
                        + f". The dataset folder is ready at {path}.")
    return _upload(path, repo_id, found, private, record)


def _one_line(text: str, limit: int = 300) -> str:
    """``text`` on one line (a server's multi-line error body), at most ``limit`` characters."""
    return " ".join(text.split())[:limit]


def _upload(path: Path, repo_id: str, token: str | None, private: bool,
            record: Mapping[str, Any]) -> str:
    """The Hub API path: create the repository, upload the folder in one commit, tag it."""
    api = HfApi(token=token)
    try:
        api.create_repo(repo_id, repo_type="dataset", private=private, exist_ok=True)
        api.upload_folder(repo_id=repo_id, folder_path=str(path), repo_type="dataset",
                          commit_message=f"{commit_title(record)} {record['full_version']}",
                          delete_patterns=[f"{DATA_DIR}/**"])  # a config a rebuild dropped goes
        api.create_tag(repo_id, tag=version_tag(record["version"]), repo_type="dataset",
                       exist_ok=True, tag_message=f"fingerprint sha256:{record['fingerprint']}")
    except OfflineModeIsEnabled as error:
        raise PushError(f"the Hugging Face Hub is unreachable ({error}); the dataset folder is "
                        f"ready at {path}") from error
    except HfHubHTTPError as error:
        status = getattr(error.response, "status_code", None)
        hint = {401: " (the token is invalid; log in again with `huggingface-cli login`)",
                403: " (the token cannot write to this repository; use a token with write "
                     "access to it)",
                405: " (this server takes no uploads; push into the git repository it serves "
                     "with --push-git)"}.get(status or 0, "")
        raise PushError(f"the Hub refused the upload to {repo_id}: "
                        f"{_one_line(str(error).replace(token or chr(0), '***'))}{hint}; "
                        f"the dataset folder is ready at {path}") from error
    except (OSError, ConnectionError) as error:
        raise PushError(f"the Hugging Face Hub at {hub_endpoint()} is unreachable "
                        f"({type(error).__name__}: {_one_line(str(error), 200)}); the dataset "
                        f"folder is ready at {path}") from error
    return f"{hub_endpoint()}/datasets/{repo_id}"


def hub_endpoint() -> str:
    """The Hub the API path talks to: ``HF_ENDPOINT``, else huggingface.co."""
    return hub_constants.ENDPOINT.rstrip("/")


def _git(repo: Path, *args: str, env: Mapping[str, str] | None = None,
         path: Path | None = None) -> str:
    """Run ``git --git-dir=<repo> <args>`` (with the folder as work tree when given); its output,
    or a :class:`PushError` with git's own message on one line."""
    command = ["git", f"--git-dir={repo}", *([f"--work-tree={path}"] if path else []), *args]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=300,
                              env={**os.environ, **GIT_IDENTITY, **(env or {})})
    except (OSError, subprocess.TimeoutExpired) as error:
        raise PushError(f"git could not run ({error}); install git, or push through the Hub "
                        f"API without --push-git") from error
    if done.returncode != 0:
        raise PushError(f"git {args[0]} failed in {repo}: "
                        f"{_one_line(done.stderr or done.stdout)}")
    return done.stdout.strip()


def _commit_into_git(path: Path, repo_id: str, root: Path, record: Mapping[str, Any]) -> str:
    """The git path: commit the folder's files as the new tree of ``main`` in the bare repository
    ``<root>/datasets/<repo_id>`` (created when missing), then tag the commit ``v<version>``
    unless that version's tag exists (a tag, as on the Hub, keeps the commit it was made on)."""
    if not root.is_dir():
        raise PushError(f"--push-git {root}: no such folder (the folder of git repositories the "
                        f"Hub server serves); the dataset folder is ready at {path}")
    repo = root / "datasets" / repo_id
    try:
        if not (repo / "HEAD").is_file():
            repo.parent.mkdir(parents=True, exist_ok=True)
            _git(repo, "init", "--quiet", "--bare", f"--initial-branch={MAIN_BRANCH}")
        with tempfile.TemporaryDirectory() as scratch:
            index = {"GIT_INDEX_FILE": str(Path(scratch) / "index")}
            _git(repo, "add", "--all", "--force", ".", env=index, path=path)
            tree = _git(repo, "write-tree", env=index)
        branch = f"refs/heads/{MAIN_BRANCH}"
        parent = _git(repo, "for-each-ref", "--format=%(objectname)", branch)
        parents = ["-p", parent] if parent else []
        commit = _git(repo, "commit-tree", tree, *parents, "-m",
                      f"{commit_title(record)} {record['full_version']}")
        _git(repo, "update-ref", branch, commit, *([parent] if parent else []))
        tag = version_tag(record["version"])
        if not _git(repo, "tag", "--list", tag):
            _git(repo, "tag", "-a", tag, "-m", f"fingerprint sha256:{record['fingerprint']}",
                 commit)
    except PushError as error:
        raise PushError(f"{error}; the dataset folder is ready at {path}") from error
    except OSError as error:
        raise PushError(f"cannot write the git repository {repo} ({error.strerror}); the "
                        f"dataset folder is ready at {path}") from error
    return f"{repo} (git, branch {MAIN_BRANCH}, tag {tag})"


# -- what the builders' commands share ----------------------------------------------------------

def parse_levels(items: Sequence[str] | None) -> dict[str, list[str]] | None:
    """``["truncation=0.1,0.2", ...]`` (``--levels``) as ``{"truncation": ["0.1", "0.2"]}``."""
    if not items:
        return None
    out: dict[str, list[str]] = {}
    for item in items:
        test, sep, values = item.partition("=")
        if not sep or not test.strip() or not values.strip():
            raise ValueError(f"--levels takes TEST=LEVEL[,LEVEL...], got {item!r}")
        out[test.strip()] = [v.strip() for v in values.split(",") if v.strip()]
    return out


def default_out(data: str, name: str | None = None) -> Path:
    """Where ``build-dataset`` writes without ``--out``: ``<datasets folder>/<name>``
    (:func:`blindspot.paths.datasets_dir`: where the Space's Browse tab looks), the name
    ``blindspot-<source or file stem>-adversarial`` by default."""
    if name:
        return datasets_dir() / name
    base = get_gold_source(data).name if is_gold_source(data) else Path(data).stem
    return datasets_dir() / f"blindspot-{base}-adversarial"


def push_built(folder: Path, repo_id: str | None, git_root: str | None = None,
               private: bool = False) -> str | None:
    """Push a built ``folder`` as a builder's ``--push`` and ``--push-git`` say: where it went,
    or None without ``--push``. Whatever stops the push is a :class:`PushError` (the folder
    stays complete)."""
    if git_root and not repo_id:
        raise PushError(f"--push-git needs --push ORG/NAME (the repository to commit into); the "
                        f"dataset folder is ready at {folder.resolve()}")
    if not repo_id:
        return None
    return push_adversarial_dataset(folder, repo_id, private=private, git_root=git_root)
