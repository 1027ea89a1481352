"""A protocol's declared options are its commands' flags (blindspot.cli._declared): declared once,
they appear in ``--help`` and reach the protocol's request, checked by its one validation."""

from __future__ import annotations

from typing import Any

import click
import pytest
import typer
from typer.testing import CliRunner

from blindspot.cli import app
from blindspot.cli._declared import declared_options, flag
from blindspot.exit_codes import BlindspotGroup
from blindspot.protocols.declarations import ENGINE_OPTIONS, RANK, SEARCH
from blindspot.protocols.interface import ProtocolDeclaration
from blindspot.protocols.options import OptionSpec

pytestmark = pytest.mark.quick

TOY = ProtocolDeclaration("toy", "a protocol declared in the test", implementation="x:Y", options=(
    OptionSpec("max_calls", "int", "calls at most", minimum=1),
    OptionSpec("ratio", "float", "a ratio", default=0.5),
    OptionSpec("generalise", "bool", "check it generalises", default=False),
    OptionSpec("panel", "metrics", "other metrics"),
    OptionSpec("mode", "choice", "the anchor", default="ref", choices=("ref", "src")),
))


def _toy_app(seen: list[dict[str, Any]], **settings: Any) -> typer.Typer:
    @declared_options(TOY, **settings)
    def toy(data: str = typer.Option(..., "--data"), options: dict[str, Any] | None = None) -> None:
        seen.append({"data": data, "options": options})

    toy_app = typer.Typer(cls=BlindspotGroup)
    toy_app.command("toy")(toy)
    toy_app.command("other")(lambda: None)  # a group, as blindspot's app is
    return toy_app


def _flags(command: click.Command) -> set[str]:
    return {name for param in command.params for name in param.opts if name != "--help"}


def test_a_declared_option_is_a_flag_whose_value_reaches_the_options() -> None:
    seen: list[dict[str, Any]] = []
    done = CliRunner().invoke(_toy_app(seen), ["toy", "--data", "d", "--max-calls", "7",
                                               "--generalise", "--panel", "", "--mode", "src"])
    assert done.exit_code == 0, done.output
    # set values arrive; the ratio left at its default is left to the protocol; '' is "none"
    assert seen == [{"data": "d", "options": {"max_calls": 7, "generalise": True,
                                              "panel": None, "mode": "src"}}]


def test_unset_and_default_values_are_left_to_the_protocol() -> None:
    seen: list[dict[str, Any]] = []
    done = CliRunner().invoke(_toy_app(seen), ["toy", "--data", "d", "--ratio", "0.5",
                                               "--no-generalise"])
    assert done.exit_code == 0, done.output
    assert seen == [{"data": "d", "options": {}}]


def test_a_command_may_show_its_own_default() -> None:
    seen: list[dict[str, Any]] = []
    toy_app = _toy_app(seen, defaults={"ratio": 0.25})
    assert CliRunner().invoke(toy_app, ["toy", "--data", "d"]).exit_code == 0
    assert seen[0]["options"] == {"ratio": 0.25}
    shown = " ".join(CliRunner().invoke(toy_app, ["toy", "--help"]).output.split())
    assert "a ratio" in shown and "[default: 0.25]" in shown


def test_help_shows_each_declared_option_with_what_it_accepts() -> None:
    shown = " ".join(CliRunner().invoke(_toy_app([]), ["toy", "--help"]).output.split())
    for spec in TOY.options:
        assert flag(spec) in shown and spec.help in shown
    assert "--no-generalise" in shown and "one of ref, src" in shown


def test_a_wrong_type_is_a_usage_error() -> None:
    done = CliRunner().invoke(_toy_app([]), ["toy", "--data", "d", "--max-calls", "many"])
    assert done.exit_code == 1
    assert done.output.startswith("error: Invalid value for '--max-calls'")


def test_an_option_declared_twice_is_refused() -> None:
    with pytest.raises(TypeError, match=r"declares \['ratio'\] itself and through the toy"):
        @declared_options(TOY)
        def twice(ratio: float = typer.Option(1.0), options: dict[str, Any] | None = None) -> None:
            pass


def test_search_takes_every_search_option_as_a_flag() -> None:
    command = typer.main.get_command(app).commands["search"]  # type: ignore[attr-defined]
    assert {flag(spec) for spec in SEARCH.options} <= _flags(command)


def test_run_and_stream_take_the_engine_options_from_the_rank_declaration() -> None:
    commands = typer.main.get_command(app).commands  # type: ignore[attr-defined]
    engine = {flag(RANK.option(name)) for name in ENGINE_OPTIONS}
    assert engine <= _flags(commands["run"])
    assert "--chunk-size" in _flags(commands["stream"])
    stream_help = " ".join(CliRunner().invoke(app, ["stream", "--help"]).output.split())
    assert "stream each data file" in stream_help and "[default: 2000]" in stream_help
