"""``blindspot build-challenge``: a challenge set (DEMETR, ACES) as a Hub-ready dataset folder.

The building is :func:`blindspot.datasets_scripts.challenge_builder.build_challenge_dataset`
(imported when the command runs); ``--format`` takes the names of
:data:`blindspot.challenge_sets.names.FORMAT_NAMES` (free of imports: the formats' readers are
loaded by the command).
"""

from __future__ import annotations

from enum import Enum
from pathlib import Path

import typer

from blindspot.challenge_sets.names import FORMAT_NAMES
from blindspot.errors import BlindspotInputError, message
from blindspot.exit_codes import fail
from blindspot.paths import datasets_dir

#: ``--format``'s choices: a misspelt one is refused before any work, with "did you mean"
FormatName = Enum("FormatName", {name: name for name in sorted(FORMAT_NAMES)}, type=str)  # type: ignore[misc]


def build_challenge(
    form: FormatName = typer.Option(..., "--format", help="the challenge set's format"),
    data: str = typer.Option(..., help="a DEMETR .json file or folder, or an ACES .tsv file"),
    out: Path | None = typer.Option(None, help="output folder (default: <datasets folder>/"
                                               "<name>)"),
    version: str = typer.Option("1.0.0", "--version", help="the dataset version its card "
                                                           "states"),
    name: str | None = typer.Option(None, help="dataset name (default: "
                                               "blindspot-<format>-<data>)"),
) -> None:
    """Build a challenge set (DEMETR, ACES) as a Hub-ready dataset folder."""
    from blindspot.datasets_scripts.challenge_builder import build_challenge_dataset  # pyarrow

    name = name or f"blindspot-{form.value}-{Path(data).stem}"
    try:
        folder = build_challenge_dataset(form.value, data, out or datasets_dir() / name,
                                         version, name)
    except (BlindspotInputError, ValueError, FileNotFoundError) as error:
        fail(message(error))
    typer.echo(f"wrote {folder}")
