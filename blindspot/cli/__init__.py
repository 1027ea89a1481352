"""The ``blindspot`` command: one typer app, one module per command (as spaCy's ``cli/``).

Each command module holds a plain function whose parameters carry their ``typer`` defaults;
:data:`COMMANDS` registers them, in the order ``blindspot --help`` lists them. The options that
several commands share are declared once in :mod:`blindspot.cli._options` (the dataset builders'
in :mod:`blindspot.cli.build_dataset_command`); every command takes ``-h``. The protocol commands
(``run``, ``stream``, ``search``) run through :func:`blindspot.cli._protocol.run_job`.

The heavy edge is imported inside the commands, so ``blindspot --help`` (and ``list``) never pays
for it: the perturbation catalogue (every test module), ``perturbations.dataset`` (datasets,
pandas), ``report.table1`` and the dataset builders (``datasets_scripts``: datasets, scipy,
spaCy), the Space (gradio).
"""

from __future__ import annotations

import gc
from collections.abc import Callable
from typing import Any

import typer

from blindspot.cli import (
    build_challenge_command,
    build_dataset_command,
    build_menli_command,
    card_command,
    checkup_command,
    demo_command,
    install_command,
    judge_audit_command,
    listing,
    metrics_command,
    perturb_command,
    publish_command,
    report_command,
    run_command,
    search_command,
    self_bias_command,
    space_command,
    stream_command,
)
from blindspot.exit_codes import EPILOG, BlindspotGroup, fail
from blindspot.extras import missing_extra
from blindspot.faults import terminate_as_interrupt

#: (name, function, typer settings) of every command, in ``--help`` order
COMMANDS: tuple[tuple[str, Callable[..., Any], dict[str, Any]], ...] = (
    ("list", listing.list_tests, {}),
    ("protocols", listing.list_protocols, {}),
    ("metrics", metrics_command.list_metrics, {}),
    ("perturb", perturb_command.perturb, {}),
    ("demo", demo_command.demo, {}),
    ("run", run_command.run, {"epilog": EPILOG}),
    ("checkup", checkup_command.checkup, {}),
    ("card", card_command.card, {}),
    ("stream", stream_command.stream, {}),
    ("report", report_command.report_table, {}),
    ("install-modules", install_command.install_modules_command, {}),
    ("modules", metrics_command.modules, {}),
    ("build-dataset", build_dataset_command.build_dataset, {}),
    ("build-menli", build_menli_command.build_menli, {}),
    ("build-challenge", build_challenge_command.build_challenge, {}),
    ("publish", publish_command.publish, {}),
    ("self-bias", self_bias_command.self_bias, {}),
    ("search", search_command.search, {}),
    ("judge-audit", judge_audit_command.judge_audit, {}),
    ("space", space_command.space, {}),
)

app = typer.Typer(cls=BlindspotGroup, add_completion=False, no_args_is_help=True,
                  context_settings={"help_option_names": ["-h", "--help"]},
                  help="Stress tests that find the blind spots of text-generation metrics.")
for _name, _command, _settings in COMMANDS:
    app.command(_name, **_settings)(_command)


def main() -> None:
    try:
        with terminate_as_interrupt():  # SIGTERM stops a command as Ctrl-C does (exit 143)
            app()
    except ModuleNotFoundError as error:  # a module of an extra the install left out
        if (line := missing_extra(error)) is None:
            raise
        try:
            fail(line)
        except typer.Exit as done:  # outside the app, an Exit is a plain exit status
            raise SystemExit(done.exit_code) from None
    finally:
        # the command is done: the interpreter's exit would still walk every object it holds
        # (spaCy, WordNet, a model: seconds after a demo) in its last collections; frozen
        # objects are left to the process's end (every file we write is closed already)
        gc.freeze()


__all__ = ["COMMANDS", "app", "main"]
