"""The dataset builders' commands (``build-dataset``, ``build-menli``, ``build-challenge``,
``publish``): each hands its arguments to the builder's own parser (:mod:`blindspot.cli._argparse`)."""

from __future__ import annotations

import typer


def build_dataset(ctx: typer.Context) -> None:
    """Build a Hub-ready adversarial dataset folder (see `blindspot build-dataset --help`)."""
    from blindspot.datasets_scripts.build_adversarial import main as build_main

    raise typer.Exit(code=build_main(list(ctx.args)) or 0)


def build_menli(ctx: typer.Context) -> None:
    """Build a MENLI-style adversarial set folder (see `blindspot build-menli --help`)."""
    from blindspot.datasets_scripts.menli_builder import main as menli_main

    raise typer.Exit(code=menli_main(list(ctx.args)) or 0)


def build_challenge(ctx: typer.Context) -> None:
    """Build a DEMETR or ACES challenge set folder (see `blindspot build-challenge --help`)."""
    from blindspot.datasets_scripts.challenge_builder import main as challenge_main

    raise typer.Exit(code=challenge_main(list(ctx.args)) or 0)


def publish(ctx: typer.Context) -> None:
    """Build and push the prebuilt adversarial sets (see `blindspot publish --help`)."""
    from blindspot.datasets_scripts.publish import main as publish_main

    raise typer.Exit(code=publish_main(list(ctx.args)) or 0)
