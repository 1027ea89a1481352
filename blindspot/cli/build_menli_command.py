"""``blindspot build-menli``: a MENLI-style adversarial set as a Hub-ready dataset folder.

The building is :func:`blindspot.datasets_scripts.menli_builder.build_menli_dataset` (imported
when the command runs); the options it shares with ``build-dataset`` are declared there.
"""

from __future__ import annotations

import json
from pathlib import Path

import typer

from blindspot.cli.build_dataset_command import (
    DATA_DIR,
    LICENSE,
    PUSH,
    PUSH_GIT,
    VERSION,
    push_and_report,
)
from blindspot.errors import message
from blindspot.exit_codes import fail


def build_menli(
    data: str = typer.Option(..., help="a jsonl/json/csv/parquet file or a gold source "
                                       "(wmt21_de_en)"),
    data_dir: str | None = DATA_DIR,
    out: Path | None = typer.Option(None, help="output folder (default: <datasets folder>/"
                                               "<name>: $BLINDSPOT_DATASETS_DIR, else "
                                               "out/datasets here)"),
    attacks: str = typer.Option("menli", help="'menli' or MENLI attack names, comma-separated"),
    seed: int = typer.Option(1, help="the attacks' seed"),
    per_error: int | None = typer.Option(None, help="keep at most N rows per error type "
                                                    "(MENLI: 200)"),
    limit: int | None = typer.Option(None, help="use only the first N input rows"),
    source_column: str = typer.Option("source", help="the source text"),
    ref_column: str = typer.Option("gold", help="the anchor reference"),
    para_column: str = typer.Option("reference", help="the paraphrase of the reference"),
    r_column: str | None = typer.Option(None, help="a literal translation of the source (for "
                                                   "ref-free rows)"),
    r_system: str | None = typer.Option(None, help="take r from this MT system's output in "
                                                   "--systems-column (wmt21_de_en default: "
                                                   "Online-B)"),
    systems_column: str = typer.Option("systems", help="the MT systems' outputs (a dict per "
                                                       "row)"),
    id_column: str = typer.Option("id", help="the row-id column"),
    no_number_paraphrase: bool = typer.Option(
        False, "--no-number-paraphrase", help="keep the paraphrase column for num rows instead "
                                              "of the numbers-in-words reference"),
    version: str = VERSION,
    name: str | None = typer.Option(None, help="dataset name (default: "
                                               "blindspot-<data>-menli-adversarial)"),
    license: str | None = LICENSE,
    push: str | None = PUSH,
    push_git: str | None = PUSH_GIT,
) -> None:
    """Build a MENLI-style adversarial set (error, id, source, ref, r, hyp_para, hyp_adv_based,
    hyp_adv_free) as a Hub-ready dataset folder."""
    from blindspot.datasets_scripts.build_adversarial import BUILD_FILE
    from blindspot.datasets_scripts.menli_builder import (  # spaCy, num2words, datasets
        MenliRoles,
        build_menli_dataset,
        default_out,
    )

    roles = MenliRoles(source_column, ref_column, para_column, r_column, r_system,
                       systems_column, id_column)
    try:
        folder = build_menli_dataset(
            data, out or default_out(data, name),
            None if roles == MenliRoles() else roles,  # no flag: the gold source's own roles
            attacks=attacks, seed=seed, per_error=per_error, version=version, name=name,
            data_dir=data_dir, limit=limit, number_paraphrase=not no_number_paraphrase,
            license=license)
    except (ValueError, TypeError, KeyError, FileNotFoundError) as error:
        fail(message(error))
    record = json.loads((folder / BUILD_FILE).read_text(encoding="utf-8"))
    counts = ", ".join(f"{a['error']} {a['rows']}" for a in record["attacks"])
    typer.echo(f"MENLI-style set {record['name']} {record['full_version']}: {counts}; written "
               f"to {folder.resolve()}")
    push_and_report(folder, push, push_git)
