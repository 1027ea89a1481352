"""``blindspot publish``: build and push the prebuilt adversarial sets this project offers.

One set per gold source whose licence allows publishing a perturbed copy
(:data:`~blindspot.datasets_scripts.hub_licenses.DERIVATIVES_ALLOWED`: today ``cnndm``, Apache-2.0,
and ``wikitext103``, CC BY-SA 3.0; ``wmt21_de_en`` (``other``) and ``ted_mt_zh_en`` (CC BY-NC-ND 4.0)
are not published). Each is built as ``blindspot build-dataset --data <source>`` builds it and
pushed as ``<org>/blindspot-<source>``, tagged ``v<version>``, so that
``load_dataset("<org>/blindspot-cnndm", "truncation-0.1")`` loads it. Every card names its licence.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from blindspot import defaults
from blindspot.datasets_scripts.build_adversarial import (
    BUILD_FILE,
    build_adversarial_dataset,
    push_built,
)
from blindspot.datasets_scripts.gold_sources import (
    GoldSource,
    get_gold_source,
    publishable_sources,
)
from blindspot.errors import BlindspotInputError
from blindspot.paths import datasets_dir
from blindspot.seeding import parse_seeds
from blindspot.suggest import did_you_mean


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


@dataclass(frozen=True)
class PublishSettings:
    """What ``blindspot publish`` builds and where it pushes (its options, with their defaults)."""

    org: str  #: the Hub user or organisation the sets go under
    sets: str | None = None  #: comma-separated subset of :func:`publishable_sources` (None: all)
    tests: str = defaults.TESTS
    seeds: str | Sequence[int] = defaults.SEEDS
    version: str = "1.0.0"
    limit: int | None = None  #: the first N gold rows of each set
    data_dir: str | None = None
    out: Path | None = None  #: the folder the sets are built in (None: the datasets folder)
    mlm: str | None = None
    lm: str | None = None
    private: bool = False
    push_git: str | None = None  #: a self-hosted Hub server's git repositories, not the Hub API


def publish(settings: PublishSettings, report: Callable[[str], None] = print) -> None:
    """Build every chosen set, then push it, one set after the other; ``report`` gets a line
    when a set is built and when it is pushed. Bad settings, a set that cannot be built and a
    push that fails stop it with a ValueError, :class:`~blindspot.errors.BlindspotInputError` or
    :class:`~blindspot.datasets_scripts.build_adversarial.PushError` naming the set (the folders
    built so far stay complete)."""
    sources = choose_sources(settings.sets)
    seeds = parse_seeds(settings.seeds)
    out = settings.out or datasets_dir()
    for source in sources:
        try:
            folder = build_adversarial_dataset(
                source.name, None, out / repo_name(source), tests=settings.tests, seeds=seeds,
                resources={"mlm": settings.mlm, "lm": settings.lm}, version=settings.version,
                name=repo_name(source), data_dir=settings.data_dir, limit=settings.limit,
                progress=True)
        except BlindspotInputError as error:  # the perturbations know the row, we the file
            raise error.in_file(source.file) from None
        except (ValueError, TypeError, KeyError, FileNotFoundError) as error:
            raise ValueError(f"{source.name}: {str(error).strip(chr(39) + chr(34))}") from error
        record = json.loads((folder / BUILD_FILE).read_text(encoding="utf-8"))
        report(f"{source.name}: {record['name']} {record['full_version']} ({source.license}), "
               f"{len(record['configs'])} configs + gold, written to {folder.resolve()}")
        where = push_built(folder, f"{settings.org}/{repo_name(source)}", settings.push_git,
                           private=settings.private)
        report(f"pushed to {where}")


__all__ = ["PublishSettings", "choose_sources", "publish", "publishable_sources", "repo_name"]
