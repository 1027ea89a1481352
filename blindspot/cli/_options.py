"""The options and option readers that several commands share: declared once here."""

from __future__ import annotations

import json
from typing import Any

import typer

from blindspot import defaults
from blindspot.exit_codes import FailOn, fail

SEEDS_TEXT = ",".join(map(str, defaults.SEEDS))  # the CLI spells the default seeds "1,2,3,4,5"

#: ``--fail-on``, shared by ``run``, ``stream`` and ``judge-audit`` (where an audit is the test)
FAIL_ON = typer.Option(FailOn.error, "--fail-on", case_sensitive=False,
                       help="exit 3 when a test fails (fail), or fails beyond the noise "
                            "(significant: within-noise fails are ignored); error (default): "
                            "exit 2 only when a test ends in error")

#: ``--split`` and ``--option``, shared by ``run`` and ``checkup``
SPLIT = typer.Option("test", help="split of a Hub dataset")
METRIC_OPTION = typer.Option([], "--option", help="metric option metric.key=value "
                             "(repeatable), e.g. bertscore.idf=true")

#: the options that name the data's columns, shared by the commands that read data (typer
#: option objects are plain metadata, safe to reuse as defaults)
HYPOTHESIS_COLUMN = typer.Option(None, help="the gold text to perturb and score "
                                            "(default: gold or hypothesis)")
REFERENCES_COLUMN = typer.Option(None, help="references: a string or a list "
                                            "(default: references or reference)")
SOURCE_COLUMN = typer.Option(None, help="source text (default: source)")
ID_COLUMN = typer.Option(None, help="row id (default: id, else a text hash)")


def resources(mlm: str | None, lm: str | None, ngram_corpus: str | None) -> dict[str, Any]:
    return {"mlm": mlm, "lm": lm, "ngram_corpus": ngram_corpus}

def parse_options(items: list[str]) -> dict[str, dict[str, Any]]:
    """``metric.key=value`` items as ``{metric: {key: value}}``; values are JSON when they parse."""
    options: dict[str, dict[str, Any]] = {}
    for item in items:
        name, sep, value = item.partition("=")
        metric, dot, key = name.partition(".")
        if not (sep and dot and metric and key):
            fail(f"--option {item!r} must look like metric.key=value, e.g. bertscore.idf=true")
        options.setdefault(metric, {})[key] = json_or_text(value)
    return options

def json_or_text(value: str) -> Any:
    """A command-line value as JSON when it parses (true, 3, [1,2]), else the text itself."""
    try:
        return json.loads(value)
    except ValueError:
        return value

def parse_settings(items: list[str]) -> dict[str, Any]:
    """``key=value`` items as a dict; values are JSON when they parse, else strings."""
    settings: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not (sep and key.strip()):
            fail(f"--protocol-option {item!r} must look like key=value")
        settings[key.strip()] = json_or_text(value)
    return settings
