"""Build a challenge set (DEMETR, ACES) read in its published format as a Hub-ready folder.

``blindspot build-challenge --format demetr --data demetr/dataset --out FOLDER`` reads the files
with :mod:`blindspot.challenge_sets.formats` and writes the items in one table layout for both
benchmarks (``id, phenomenon, group, source, reference, good, bad``: a good metric scores
``good`` strictly above ``bad``), one config per phenomenon plus a default ``all`` config, with
the blind-spots builder's machinery (fixed parquet options, content fingerprint, card front
matter), so that rebuilding from the same files gives the same bytes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from blindspot.challenge_sets.formats import FORMATS, ChallengeItem, read_challenge_set
from blindspot.datasets_scripts.build_adversarial import (
    CARD_FILE,
    DATA_DIR,
    SPLIT,
    TAGS,
    check_version,
    prepare_out_dir,
    sha256_file,
    size_category,
    write_build_record,
    write_config_file,
)
from blindspot.report.files import slugify

LAYOUT = "blindspot-challenge-set/1"
ALL_CONFIG = "all"
COLUMNS = tuple(ChallengeItem.__dataclass_fields__)


def _features() -> Any:
    import datasets

    return datasets.Features({c: datasets.Value("string") for c in COLUMNS})


def _input_files(path: Path) -> list[Path]:
    return sorted(path.glob("*.json")) if path.is_dir() else [path]


def build_challenge_dataset(form: str, data: str | Path, out_dir: str | Path,
                            version: str = "1.0.0", name: str | None = None) -> Path:
    """Write the challenge set in ``data`` (format ``form``) to ``out_dir``; returns the folder."""
    import pyarrow as pa

    version = check_version(version)
    challenge = read_challenge_set(form, data)
    out = Path(out_dir)
    prepare_out_dir(out)
    by_phenomenon: dict[str, list[ChallengeItem]] = {}
    for item in challenge.items:
        by_phenomenon.setdefault(item.phenomenon, []).append(item)
    files: dict[str, dict[str, Any]] = {}
    configs: list[dict[str, Any]] = []
    features = _features()
    for phenomenon, items in by_phenomenon.items():
        config = slugify(phenomenon)
        if any(c["config_name"] == config for c in configs):
            raise ValueError(f"phenomena {phenomenon!r} and another one share the config name "
                             f"{config!r}; rename one of them in {data}")
        table = pa.table({c: [getattr(i, c) for i in items] for c in COLUMNS})
        write_config_file(out, config, table, features, files)
        configs.append({"config_name": config, "phenomenon": phenomenon, "rows": len(items),
                        "group": items[0].group})
    params = {"layout": LAYOUT, "name": name or f"blindspot-{form}-{Path(data).stem}",
              "version": version, "format": form, "benchmark": FORMATS[form].paper,
              "input": {"name": Path(data).name,
                        "files": {p.name: sha256_file(p) for p in _input_files(Path(data))}},
              "skipped": challenge.skipped, "configs": configs}
    record = write_build_record(out, params, files, version)
    (out / CARD_FILE).write_text(render_card(record), encoding="utf-8")
    return out


def card_front_matter(record: dict[str, Any]) -> str:
    import yaml

    configs = [{"config_name": ALL_CONFIG, "data_files": [
        {"split": SPLIT, "path": f"{DATA_DIR}/*/{SPLIT}.parquet"}], "default": True}]
    configs += [{"config_name": c["config_name"], "data_files": [
        {"split": SPLIT, "path": f"{DATA_DIR}/{c['config_name']}/{SPLIT}.parquet"}]}
        for c in record["configs"]]
    total = sum(c["rows"] for c in record["configs"])
    front = {"pretty_name": f"{record['format'].upper()} challenge set (blindspot layout)",
             "license": "other", "task_categories": ["translation"],
             "tags": [*TAGS, record["format"], "challenge-set", "preference"],
             "size_categories": [size_category(total)], "configs": configs}
    return yaml.safe_dump(front, sort_keys=False, allow_unicode=True, width=1000)


def render_card(record: dict[str, Any]) -> str:
    rows = [f"| `{c['config_name']}` | {c['phenomenon']} | {c['group'] or '-'} | {c['rows']} | "
            f"{record['skipped'].get(c['phenomenon'], 0)} |" for c in record["configs"]]
    body = f"""
# {record['format'].upper()} challenge set: {record['input']['name']}

{record['benchmark']}, read from its published files by blindspot and written in one layout:
`{', '.join(COLUMNS)}`. A good metric scores `good` strictly above `bad` against the `reference`
(or, ref-free, the `source`). Run it with
`blindspot run --protocol preference --format {record['format']} --data <the original files>`.

| config | phenomenon | group | rows | skipped (not correctly perturbed) |
|---|---|---|---|---|
{chr(10).join(rows)}

## Version

- version: **{record['version']}** (full: `{record['full_version']}`)
- content fingerprint: `sha256:{record['fingerprint']}`

## Licence

The texts are the benchmark's; its own licence and citation apply.
"""
    return f"---\n{card_front_matter(record)}---\n{body}"


__all__ = ["build_challenge_dataset"]
