"""The licence ids a Hub dataset card may declare: the one allow-list ``--license`` and an input's
own card are checked against.

The ids are the Hub's own (the "License identifier" column of the Hub documentation's
*Licenses* page, huggingface.co/docs/hub/repositories-licenses). The Hub shows any other value
as no licence at all, so a misspelt ``--license cc-by-4`` would publish a card whose data looks
unlicensed. A licence that is not listed is declared as ``other``, with its name in the card.
"""

from __future__ import annotations

from blindspot.suggest import did_you_mean

#: the Hub's licence identifiers, in the order its documentation lists them
HUB_LICENSES: tuple[str, ...] = (
    "apache-2.0", "mit", "openrail", "bigscience-openrail-m", "creativeml-openrail-m",
    "bigscience-bloom-rail-1.0", "bigcode-openrail-m", "afl-3.0", "artistic-2.0", "bsl-1.0",
    "bsd", "bsd-2-clause", "bsd-3-clause", "bsd-3-clause-clear", "c-uda", "cc", "cc0-1.0",
    "cc-by-2.0", "cc-by-2.5", "cc-by-3.0", "cc-by-4.0", "cc-by-sa-3.0", "cc-by-sa-4.0",
    "cc-by-nc-2.0", "cc-by-nc-3.0", "cc-by-nc-4.0", "cc-by-nd-4.0", "cc-by-nc-nd-3.0",
    "cc-by-nc-nd-4.0", "cc-by-nc-sa-2.0", "cc-by-nc-sa-3.0", "cc-by-nc-sa-4.0",
    "cdla-sharing-1.0", "cdla-permissive-1.0", "cdla-permissive-2.0", "wtfpl", "ecl-2.0",
    "epl-1.0", "epl-2.0", "etalab-2.0", "eupl-1.1", "agpl-3.0", "gfdl", "gpl", "gpl-2.0",
    "gpl-3.0", "lgpl", "lgpl-2.1", "lgpl-3.0", "isc", "lppl-1.3c", "ms-pl", "mpl-2.0", "odc-by",
    "odbl", "openrail++", "osl-3.0", "postgresql", "ofl-1.1", "ncsa", "unlicense", "zlib",
    "pddl", "lgpl-lr", "deepfloyd-if-license", "llama2", "gemma", "unknown", "other",
)

#: how to declare a licence the Hub does not list
UNLISTED = ("a licence the Hub does not list is declared as `other` (the Hub docs' Licenses "
            "page lists the ids)")
#: ``--license`` of every builder (build-dataset, build-menli)
LICENSE_HELP = ("Hub licence id for the card, e.g. cc-by-4.0 (default: the input's own when "
                "known: a gold source's, a dataset card beside the file; else other)")


#: the licence ids under which a perturbed copy (an adaptation) of the data may be published:
#: permissive, attribution and share-alike licences. Not: a no-derivatives licence (cc-by-nd,
#: cc-by-nc-nd), ``other`` and ``unknown`` (terms the card cannot vouch for). ``blindspot publish``
#: publishes only the gold sources whose licence is listed here.
DERIVATIVES_ALLOWED: tuple[str, ...] = (
    "apache-2.0", "mit", "cc0-1.0", "cc-by-2.0", "cc-by-2.5", "cc-by-3.0", "cc-by-4.0",
    "cc-by-sa-3.0", "cc-by-sa-4.0", "cc-by-nc-4.0", "cc-by-nc-sa-4.0", "odc-by", "pddl",
)


def allows_derivatives(value: str) -> bool:
    """True when data under licence ``value`` may be published as a perturbed copy."""
    return value in DERIVATIVES_ALLOWED


def is_hub_license(value: str) -> bool:
    """True when ``value`` is one of the Hub's licence ids (they are lower case)."""
    return value in HUB_LICENSES


def check_license(value: str) -> str:
    """``value`` when it is a Hub licence id; else a ValueError naming ``--license``, the closest
    ids and how to declare an unlisted licence."""
    if is_hub_license(value):
        return value
    raise ValueError(f"--license {value!r} is not a Hub licence id"
                     f"{did_you_mean(value, HUB_LICENSES)}; {UNLISTED}")
