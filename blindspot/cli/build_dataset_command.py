"""``blindspot build-dataset``: a versioned, Hub-ready adversarial dataset folder from gold data.

The building is :func:`blindspot.datasets_scripts.build_adversarial.build_adversarial_dataset`
(imported when the command runs: datasets, pyarrow, the perturbations). The options every
builder shares (``--data-dir``, ``--license``, ``--push``, ``--push-git``) are declared here,
with the push that ``build-menli`` makes the same way.
"""

from __future__ import annotations

import json
from pathlib import Path

import typer

from blindspot import defaults
from blindspot.cli._options import SEEDS_TEXT
from blindspot.datasets_scripts.gold_sources import describe_sources
from blindspot.datasets_scripts.hub_licenses import LICENSE_HELP
from blindspot.errors import BlindspotInputError, message
from blindspot.exit_codes import fail
from blindspot.seeding import parse_seeds

#: the gold sources ``--data`` takes, with their tasks
SOURCES = ", ".join(f"{s['name']} ({s['task']})" for s in describe_sources())

#: the options of every builder (typer option objects are plain metadata, safe to share)
DATA_DIR = typer.Option(None, help="folder with the gold files (default: $BLINDSPOT_DATA or "
                                   "../shared/data)")
LICENSE = typer.Option(None, "--license", help=LICENSE_HELP)
VERSION = typer.Option("1.0.0", "--version", help="semantic version of this dataset")
#: the help of ``--push-git`` (``publish`` words it for its own repositories)
PUSH_GIT_HELP = ("with --push: commit and tag into DIR/datasets/ORG/NAME, the git repositories a "
                 "self-hosted Hub server serves (olah's mirrors-path), instead of uploading "
                 "through the Hub API")
#: ``--push`` (the token is never a flag: a command line is visible to every user)
PUSH = typer.Option(None, "--push", metavar="ORG/NAME",
                    help="publish the folder as this Hub dataset repository, tagged v<version> "
                         "(token: HF_TOKEN or `huggingface-cli login`; endpoint: HF_ENDPOINT, "
                         "else the Hub)")
PUSH_GIT = typer.Option(None, "--push-git", metavar="DIR", help=PUSH_GIT_HELP)


def push_and_report(folder: Path, repo_id: str | None, git_root: str | None,
                    private: bool = False) -> None:
    """Push a built folder as ``--push``/``--push-git`` say and print where it went; a push that
    fails is one ``error: `` line and exit 1 (the folder stays complete)."""
    from blindspot.datasets_scripts.build_adversarial import PushError, push_built

    try:
        where = push_built(folder, repo_id, git_root, private=private)
    except PushError as error:
        fail(str(error))
    if where is not None:
        typer.echo(f"pushed to {where}")


def build_dataset(
    data: str = typer.Option(..., help="a jsonl/json/csv/parquet file, 'demo', or a gold "
                                       f"source: {SOURCES}"),
    task: str | None = typer.Option(None, help="summarization | translation | "
                                               "translation_paragraph | open_ended (default: "
                                               "the gold source's own task)"),
    data_dir: str | None = DATA_DIR,
    out: Path | None = typer.Option(None, help="output folder (default: <datasets folder>/"
                                               "<name>; the datasets folder is "
                                               "$BLINDSPOT_DATASETS_DIR, else out/datasets here, "
                                               "where the Space's Browse tab looks)"),
    tests: str = typer.Option(defaults.TESTS, help="suites and/or test names, comma-separated "
                                                   "(`blindspot list` names them)"),
    seeds: str = typer.Option(SEEDS_TEXT, help="comma-separated seeds"),
    levels: list[str] = typer.Option([], "--levels", metavar="TEST=L1,L2",
                                     help="levels of one test instead of the paper's "
                                          "(repeatable)"),
    version: str = VERSION,
    name: str | None = typer.Option(None, help="dataset name (default: "
                                               "blindspot-<source>-adversarial)"),
    limit: int | None = typer.Option(None, help="use only the first N gold rows"),
    column: str = typer.Option("gold", "--column", "--hypothesis-column",
                               help="the hypothesis column (the text to perturb), as `run "
                                    "--hypothesis-column`"),
    id_column: str = typer.Option("id", help="the row-id column"),
    source_column: str | None = typer.Option(None, help="the source column (default: the gold "
                                                        "source's)"),
    mlm: str | None = typer.Option(None, help="masked LM (Hub id, folder or offline short name) "
                                              "for tests that need one"),
    lm: str | None = typer.Option(None, help="causal LM / tokenizer for tests that need one"),
    ngram_corpus: str | None = typer.Option(None, help="corpus for the frequent n-gram test"),
    num_proc: int | None = typer.Option(None, help="worker processes"),
    license: str | None = LICENSE,
    push: str | None = PUSH,
    push_git: str | None = PUSH_GIT,
    private: bool = typer.Option(False, "--private", help="create the Hub repository as "
                                                          "private"),
) -> None:
    """Build a versioned, Hub-ready adversarial dataset folder from gold data."""
    from blindspot.datasets_scripts.build_adversarial import (  # datasets, the perturbations
        BUILD_FILE,
        build_adversarial_dataset,
        default_out,
        parse_levels,
    )

    try:
        folder = build_adversarial_dataset(
            data, task, out or default_out(data, name), tests=tests, seeds=parse_seeds(seeds),
            levels=parse_levels(levels), resources={"mlm": mlm, "lm": lm,
                                                    "ngram_corpus": ngram_corpus},
            column=column, id_column=id_column, source_column=source_column, version=version,
            name=name, num_proc=num_proc, data_dir=data_dir, limit=limit, license=license,
            progress=True)
    except BlindspotInputError as error:  # the perturbations know the row, we know the file
        fail(str(error.in_file(data)))
    except (ValueError, TypeError, KeyError, FileNotFoundError) as error:
        fail(message(error))
    record = json.loads((folder / BUILD_FILE).read_text(encoding="utf-8"))
    typer.echo(f"adversarial dataset {record['name']} {record['full_version']}: "
               f"{len(record['configs'])} configs + gold, written to {folder.resolve()}")
    for skipped, why in record["skipped"].items():
        typer.echo(f"skipped {skipped}: {why}", err=True)
    push_and_report(folder, push, push_git, private=private)
