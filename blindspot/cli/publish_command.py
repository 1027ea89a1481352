"""``blindspot publish``: build and push the prebuilt adversarial sets this project offers.

The building and pushing is :func:`blindspot.datasets_scripts.publish.publish` (imported when the
command runs), one set per gold source whose licence allows it.
"""

from __future__ import annotations

from pathlib import Path

import typer

from blindspot import defaults
from blindspot.cli._options import SEEDS_TEXT
from blindspot.cli.build_dataset_command import DATA_DIR, PUSH_GIT_HELP
from blindspot.datasets_scripts.gold_sources import publishable_sources
from blindspot.errors import BlindspotInputError, message
from blindspot.exit_codes import fail

#: the sets ``--sets`` chooses among, with their licences
OFFERED = ", ".join(f"{s.name} ({s.license})" for s in publishable_sources())


def publish(
    org: str = typer.Option(..., help="the Hub user or organisation to publish under"),
    sets: str | None = typer.Option(None, help="comma-separated subset of the sets offered: "
                                               f"{OFFERED} (default: all)"),
    tests: str = typer.Option(defaults.TESTS, help="suites and/or test names, comma-separated "
                                                   "(`blindspot list` names them)"),
    seeds: str = typer.Option(SEEDS_TEXT, help="comma-separated seeds"),
    version: str = typer.Option("1.0.0", "--version", help="semantic version of this release "
                                                           "(the tag v<version>)"),
    limit: int | None = typer.Option(None, help="use only the first N gold rows of each set"),
    data_dir: str | None = DATA_DIR,
    out: Path | None = typer.Option(None, help="folder the sets are built in, one subfolder each "
                                               "(default: the datasets folder: "
                                               "$BLINDSPOT_DATASETS_DIR, else out/datasets)"),
    mlm: str | None = typer.Option(None, help="masked LM for tests that need one (default: those "
                                              "tests are skipped)"),
    lm: str | None = typer.Option(None, help="causal LM / tokenizer for tests that need one"),
    private: bool = typer.Option(False, "--private", help="create the Hub repositories as "
                                                          "private"),
    push_git: str | None = typer.Option(
        None, "--push-git", metavar="DIR",
        help=PUSH_GIT_HELP.replace("with --push: ", "").replace("ORG/NAME",
                                                                "ORG/blindspot-<set>")),
) -> None:
    """Build the prebuilt adversarial sets (the gold sets whose licence allows it) and push each
    as ORG/blindspot-<set>, tagged v<version>."""
    from blindspot.datasets_scripts.build_adversarial import PushError
    from blindspot.datasets_scripts.publish import PublishSettings
    from blindspot.datasets_scripts.publish import publish as publish_sets  # datasets, spaCy

    settings = PublishSettings(org, sets, tests, seeds, version, limit, data_dir, out, mlm, lm,
                               private, push_git)
    try:
        publish_sets(settings, typer.echo)
    except (BlindspotInputError, ValueError, PushError) as error:
        fail(message(error))
