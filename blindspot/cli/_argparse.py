"""The argparse commands (``build-dataset``, ``build-menli``) in the typer commands' manners.

Those builders keep argparse (they are also plain scripts), but through this parser their help
is the same rich panel as every other command's, a usage error is one ``error: `` line with exit
status 1 (argparse's own is 2, which for ``blindspot`` means "tests ended in error") and an
unknown option gets "did you mean".
"""

from __future__ import annotations

import argparse
import sys
from typing import IO, Any, NoReturn

from rich import box
from rich.console import Console
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from blindspot.exit_codes import ExitCode
from blindspot.suggest import did_you_mean

#: the help line of ``--help``, as the typer commands word it
HELP_TEXT = "Show this message and exit."


class BlindspotArgumentParser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose help and usage errors look like the typer commands'."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **{**kwargs, "add_help": False})  # ours, worded as typer's
        self.add_argument("-h", "--help", action="help", help=HELP_TEXT)

    def _check_value(self, action: argparse.Action, value: Any) -> None:
        """A value outside ``choices`` names them, with "did you mean"."""
        if action.choices is not None and value not in action.choices:
            choices = [str(choice) for choice in action.choices]
            raise argparse.ArgumentError(action, f"invalid choice: {value!r} (choose from "
                                                 f"{', '.join(choices)}){did_you_mean(str(value), choices)}")

    def error(self, message: str) -> NoReturn:
        """``error: message; see `prog --help``` on stderr, exit 1 (as the typer commands')."""
        sys.stderr.write(f"error: {message}; see `{self.prog} --help`\n")
        sys.exit(ExitCode.BAD_INPUT)

    def parse_args(self, args=None, namespace=None):  # type: ignore[override]
        parsed, extra = self.parse_known_args(args, namespace)
        if extra:
            options = [o for action in self._actions for o in action.option_strings]
            self.error(f"unrecognised argument(s): {' '.join(extra)}"
                       f"{did_you_mean(extra[0].split('=')[0], options)}")
        return parsed

    # argparse accepts any writer; rich's Console takes a text file, which every caller passes
    def print_help(self, file: IO[str] | None = None) -> None:  # type: ignore[override]
        console = Console(file=file or sys.stdout)
        console.print(Text(f"\n Usage: {self.prog} [OPTIONS]\n"))
        if self.description:
            console.print(Text(f" {self.description}\n"))
        table = Table(box=None, show_header=False, padding=(0, 1))
        for column in ("required", "option", "value", "help"):
            table.add_column(column, overflow="fold", style="bold cyan" if column == "option"
                             else None)
        for action in self._actions:
            table.add_row(*(Text(cell) for cell in _row(action)))  # no markup
        console.print(Panel(table, title="Options", title_align="left", box=box.ROUNDED,
                            border_style="dim"))


def _row(action: argparse.Action) -> tuple[str, str, str, str]:
    """One option of the help panel: ``*`` if required, its names, value kind and help."""
    takes_value = action.nargs != 0
    name = action.metavar if isinstance(action.metavar, str) and action.metavar else action.dest
    value = f"<{name.lower()}>" if takes_value else ""
    help_text = action.help or ""
    if action.choices is not None:
        help_text = ": ".join(filter(None, (help_text, "one of " + " | ".join(map(str, action.choices)))))
    if takes_value and action.default not in (None, argparse.SUPPRESS):
        help_text += f" [default: {action.default}]"
    if action.required:
        help_text += " [required]"
    return ("*" if action.required else "", ", ".join(action.option_strings), value, help_text)
