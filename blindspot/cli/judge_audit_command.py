"""The ``blindspot judge-audit`` command: the ``judge-audit`` protocol (the judge audits of
:mod:`blindspot.judge_audit`) on the first rows of a dataset.

A plain function with ``typer`` defaults, registered in :data:`blindspot.cli.COMMANDS`. Its audit
settings are the protocol's declared options
(:data:`blindspot.protocols.declarations.JUDGE_AUDIT`, through
:func:`~blindspot.cli._declared.declared_options`); the judge is the request's metric,
``llm_judge@MODEL`` from ``--model``, with ``--judge-options``, ``--judge-url`` and ``--max-calls``
as its metric options, as ``blindspot run`` passes them. The repeatable ``--judge`` and
``--tolerance`` stay the command's own flags, mapped onto the ``judges`` and
``<audit>_tolerance`` options. It runs the protocol as ``blindspot run --protocol judge-audit``
does, through :func:`blindspot.cli._protocol.run_job`: the judge (its server's URL as ``run``
shows it), one line per audit (its verdict and why), the judge's flags, and, with ``--out``,
``results.json`` and ``report.md`` there (never the key); ``--fail-on fail`` exits 3 when an
audit fails, as ``blindspot run --fail-on fail`` does when a test fails.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from blindspot.cli._declared import declared_options
from blindspot.cli._options import FAIL_ON
from blindspot.cli._protocol import run_job
from blindspot.cli.run_command import _judge_options
from blindspot.exit_codes import FailOn, fail
from blindspot.protocols.declarations import JUDGE_AUDIT

#: ``--tolerance AUDIT=VALUE`` sets the option ``AUDIT_tolerance``
TOLERANCE = "_tolerance"
#: the audits with a tolerance option
TOLERANT = tuple(s.name.removesuffix(TOLERANCE) for s in JUDGE_AUDIT.options
                 if s.name.endswith(TOLERANCE))


def _tolerances(items: list[str]) -> dict[str, str]:
    """``--tolerance audit=value`` items as the audits' tolerance options (checked by the
    protocol)."""
    options = {}
    for item in items:
        name, sep, value = (part.strip() for part in item.partition("="))
        if not sep or name not in TOLERANT:
            fail(f"--tolerance {item!r} must look like audit=value for an audit with a "
                 f"tolerance ({', '.join(TOLERANT)}), e.g. position=0.2")
        options[name + TOLERANCE] = value
    return options


@declared_options(JUDGE_AUDIT, "template", "pairwise", "audits", "rows", "test", "level",
                  "repeats", "mode")
def judge_audit(
    data: str = typer.Option("demo", "--data", help="jsonl/csv/parquet file, Hub id, or 'demo'"),
    task: str = typer.Option("summarization", help="the data's task"),
    model: str = typer.Option("smollm2", help="the judge's model (a short name, a folder, a Hub "
                              "id, or the name a --judge-url server knows): the protocol's "
                              "metric llm_judge@MODEL"),
    judge: list[str] = typer.Option([], "--judge", help="panel: one judge as options over the "
                                    "base judge, e.g. rubric=reworded or model=./other "
                                    "(repeatable; default: the rubric as written, reversed, "
                                    "reworded)"),
    judge_options: str = typer.Option("", "--judge-options", help="more options of the judge, "
                                      "key=value,... e.g. temperature=0.3,max_tokens=16"),
    judge_url: str | None = typer.Option(None, "--judge-url", help="an OpenAI-compatible "
                                            "server (its key from $OPENAI_API_KEY)"),
    max_calls: int | None = typer.Option(None, "--max-calls", min=0, help="refuse an audit "
                                            "that needs more judge calls than this"),
    tolerance: list[str] = typer.Option([], "--tolerance", help="an audit's tolerance, "
                                        "audit=value (repeatable), e.g. position=0.2"),
    out: Path | None = typer.Option(None, help="folder for results.json and report.md"),
    fail_on: FailOn = FAIL_ON,
    options: dict[str, Any] | None = None,
) -> None:
    """The judge's own blind spots: position (pairwise order), rubric order and wording,
    flakiness of a sampled judge, and panels of several judges, on the data's first rows.
    Exits 0 once judged, like `blindspot run`; a failed audit says FAIL, and with --fail-on
    fail it exits 3."""
    from blindspot.protocols.judge_audit_run import judge_variant  # the audits' code: heavy

    try:
        settings = judge_variant(judge_options, "--judge-options")
    except ValueError as error:
        fail(str(error))
    chosen = {**(options or {}), **_tolerances(tolerance)}
    if judge:
        chosen["judges"] = judge
    metric_options = _judge_options({"llm_judge": settings}, judge_url,
                                    max_calls)
    run_job("judge-audit", out, fail_on, data=data, metrics=f"llm_judge@{model}", task=task,
            metric_options=metric_options, options=chosen)
