"""``blindspot publish``: build and push the prebuilt adversarial sets this project offers.

One set per gold source whose licence allows publishing a perturbed copy
(:data:`~blindspot.datasets_scripts.hub_licenses.DERIVATIVES_ALLOWED`: today ``cnndm``, Apache-2.0,
and ``wikitext103``, CC BY-SA 3.0; ``wmt21_de_en`` (``other``) and ``ted_mt_zh_en`` (CC BY-NC-ND 4.0)
are not published). Each is built as ``blindspot build-dataset --data <source>`` builds it and
pushed as ``<org>/blindspot-<source>``, tagged ``v<version>``, so that
``load_dataset("<org>/blindspot-cnndm", "truncation-0.1")`` loads it. Every card names its licence.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from blindspot.cli._argparse import BlindspotArgumentParser
from blindspot.datasets_scripts.build_adversarial import (
    BUILD_FILE,
    PUSH_GIT_HELP,
    build_adversarial_dataset,
    push_and_report,
)
from blindspot.datasets_scripts.gold_sources import (
    GOLD_SOURCES,
    GoldDataMissingError,
    GoldSource,
    get_gold_source,
)
from blindspot.datasets_scripts.hub_licenses import allows_derivatives
from blindspot.errors import BlindspotInputError
from blindspot.exit_codes import ExitCode
from blindspot.paths import datasets_dir
from blindspot.seeding import parse_seeds
from blindspot.suggest import did_you_mean


def publishable_sources() -> list[GoldSource]:
    """The gold sources whose licence allows publishing a perturbed copy, in registry order."""
    return [s for s in GOLD_SOURCES.values() if allows_derivatives(s.license)]


def repo_name(source: GoldSource) -> str:
    """The Hub dataset name of a source's prebuilt set: ``blindspot-<source>``."""
    return f"blindspot-{source.name}"


def choose_sources(names: str | None) -> list[GoldSource]:
    """The sources ``--sets`` names (all publishable ones when None); a source whose licence
    forbids publishing, or an unknown name, is a ValueError that says which are offered."""
    offered = publishable_sources()
    if not names:
        return offered
    chosen = []
    for name in (n.strip() for n in names.split(",") if n.strip()):
        try:
            source = get_gold_source(name)
        except (KeyError, ValueError):
            raise ValueError(f"--sets: unknown set {name!r}; the sets offered are "
                             f"{', '.join(s.name for s in offered)}"
                             f"{did_you_mean(name, (s.name for s in offered))}") from None
        if source not in offered:
            raise ValueError(f"--sets: {source.name} is not published: its licence "
                             f"({source.license}) does not allow sharing a perturbed copy; the "
                             f"sets offered are {', '.join(s.name for s in offered)}")
        chosen.append(source)
    return chosen


def build_parser() -> argparse.ArgumentParser:
    offered = ", ".join(f"{s.name} ({s.license})" for s in publishable_sources())
    parser = BlindspotArgumentParser(
        prog="blindspot publish",
        description="Build the prebuilt adversarial sets (the gold sets whose licence allows it) "
                    "and push each as ORG/blindspot-<set>, tagged v<version>.")
    add = parser.add_argument
    add("--org", required=True, help="the Hub user or organisation to publish under")
    add("--sets", help=f"comma-separated subset of the sets offered: {offered} (default: all)")
    add("--tests", default="fluency,consistency",
        help="suites and/or test names, comma-separated (`blindspot list` names them)")
    add("--seeds", default="1,2,3,4,5", help="comma-separated seeds")
    add("--version", default="1.0.0", help="semantic version of this release (the tag v<version>)")
    add("--limit", type=int, help="use only the first N gold rows of each set")
    add("--data-dir", help="folder with the gold files (default: $BLINDSPOT_DATA or "
                           "../shared/data)")
    add("--out", help="folder the sets are built in, one subfolder each (default: the datasets "
                      "folder: $BLINDSPOT_DATASETS_DIR, else out/datasets)")
    add("--mlm", help="masked LM for tests that need one (default: those tests are skipped)")
    add("--lm", help="causal LM / tokenizer for tests that need one")
    add("--private", action="store_true", help="create the Hub repositories as private")
    add("--push-git", metavar="DIR", help=PUSH_GIT_HELP.replace("with --push: ", "").replace(
        "ORG/NAME", "ORG/blindspot-<set>"))
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Build every chosen set, then push each; returns the exit code (1: bad input or a push
    that failed, whose folder stays built)."""
    args = build_parser().parse_args(list(argv) if argv is not None else None)
    try:
        sources = choose_sources(args.sets)
        seeds = parse_seeds(args.seeds)
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return ExitCode.BAD_INPUT
    out = Path(args.out) if args.out else datasets_dir()
    for source in sources:
        try:
            folder = build_adversarial_dataset(
                source.name, None, out / repo_name(source), tests=args.tests, seeds=seeds,
                resources={"mlm": args.mlm, "lm": args.lm}, version=args.version,
                name=repo_name(source), data_dir=args.data_dir, limit=args.limit,
                progress=True)
        except BlindspotInputError as error:
            print(f"error: {error.in_file(source.file)}", file=sys.stderr)
            return ExitCode.BAD_INPUT
        except (ValueError, TypeError, KeyError, FileNotFoundError,
                GoldDataMissingError) as error:
            print(f"error: {source.name}: {str(error).strip(chr(39) + chr(34))}",
                  file=sys.stderr)
            return ExitCode.BAD_INPUT
        record = json.loads((folder / BUILD_FILE).read_text(encoding="utf-8"))
        print(f"{source.name}: {record['name']} {record['full_version']} ({source.license}), "
              f"{len(record['configs'])} configs + gold, written to {folder.resolve()}")
        code = push_and_report(folder, f"{args.org}/{repo_name(source)}", args.push_git,
                               private=args.private)
        if code:
            return code
    return 0


if __name__ == "__main__":
    sys.exit(main())
