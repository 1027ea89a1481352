"""Tests of "did you mean" on every misspelt name, and of the usage errors of every command.

The data is the embedded demo corpus (real texts with the columns id, source, gold, references).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.main import get_command
from typer.testing import CliRunner

from blindspot.cli import app
from blindspot.suggest import close_names, did_you_mean

pytestmark = pytest.mark.quick  # make check: no model load

runner = CliRunner()


def test_close_names_ignore_case_and_keep_the_valid_spelling() -> None:
    assert close_names("ROGUE", ["rouge", "bleu", "chrf"]) == ["rouge"]
    assert did_you_mean("trunaction", ["truncation", "negation"]) == (
        "; did you mean 'truncation'?")


def test_nothing_is_suggested_when_nothing_is_close() -> None:
    assert did_you_mean("zzzz", ["rouge", "bleu"]) == ""


@pytest.mark.parametrize("args, message", [
    (["--metrics", "rogue"], "unknown metric 'rogue'; valid metrics: "),
    (["--metrics", "rouge.rougeLL"], "metric 'rouge' has no output 'rougeLL'"),
    (["--metrics", "rouge", "--tests", "trunction"], "unknown test 'trunction'; valid tests: "),
    (["--metrics", "rouge", "--tests", "fluncy"], "unknown test 'fluncy'; valid tests: "),
    (["--metrics", "rouge", "--task", "summarisaton"], "unknown task 'summarisaton'"),
    (["--metrics", "rouge", "--hypothesis-column", "gld"], "hypothesis column 'gld' not found"),
    (["--metrics", "rouge", "--protocol", "rnak"], "unknown protocol 'rnak'"),
    (["--metrics", "rouge", "--protocol-option", "tolerence=0.1"],
     "'tolerence' is not an option of the rank protocol"),
])
def test_a_misspelt_name_gets_the_closest_valid_one(tmp_path: Path, args: list[str],
                                                     message: str) -> None:
    result = runner.invoke(app, ["run", "--data", "demo", "--out", str(tmp_path / "r"), *args])
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert result.stderr.startswith("error: ") and message in result.stderr
    suggested = {"rogue": "rouge", "rouge.rougeLL": "rougeL", "trunction": "truncation",
                 "fluncy": "fluency", "summarisaton": "summarization", "gld": "gold",
                 "rnak": "rank", "tolerence=0.1": "tolerance"}[args[-1]]
    assert result.stderr.rstrip().endswith(f"did you mean '{suggested}'?")


def test_perturb_suggests_the_text_column(tmp_path: Path) -> None:
    data = tmp_path / "in.jsonl"
    data.write_text('{"id": 1, "summary": "The cat sat on the mat."}\n')
    result = runner.invoke(app, ["perturb", str(data), "-o", str(tmp_path / "o.jsonl"), "--test",
                                 "truncation", "--level", "0.5", "--column", "sumary"])
    assert result.exit_code == 1
    assert result.stderr.rstrip().endswith("did you mean 'summary'?")


@pytest.mark.parametrize("command", ["build-dataset", "build-menli"])
def test_the_builders_fail_like_the_others(command: str) -> None:
    """A usage error is one `error: ` line and exit 1 (click's own is a usage box and 2)."""
    missing = runner.invoke(app, [command], prog_name="blindspot")
    assert missing.exit_code == 1
    assert missing.stderr == f"error: Missing option '--data'; see `blindspot {command} --help`\n"
    misspelt = runner.invoke(app, [command, "--data", "demo", "--licence", "mit"],
                             prog_name="blindspot")
    assert misspelt.exit_code == 1
    assert misspelt.stderr == (f"error: no such option: --licence; did you mean '--license'?; "
                               f"see `blindspot {command} --help`\n")
    wrong_type = runner.invoke(app, [command, "--data", "demo", "--limit", "many"])
    assert wrong_type.exit_code == 1
    assert wrong_type.stderr.startswith("error: Invalid value for '--limit': ")
    assert wrong_type.stderr.count("\n") == 1 and wrong_type.stdout == ""


@pytest.mark.parametrize("command", ["build-dataset", "build-menli", "run"])
def test_every_command_has_the_same_help_panel(command: str) -> None:
    result = runner.invoke(app, [command, "--help"], prog_name="blindspot")
    assert result.exit_code == 0
    assert f"Usage: blindspot {command} [OPTIONS]" in " ".join(result.stdout.split())
    assert "╭─ Options ─" in result.stdout
    assert "--data" in result.stdout and "[required]" in result.stdout


#: the libraries the commands import only when they run: the builders' (datasets, spaCy...)
#: and the pipeline's heavy edge (pyarrow, numpy, torch, matplotlib)
BUILDER_LIBRARIES = ("datasets", "spacy", "scipy", "huggingface_hub", "num2words", "pyarrow",
                     "numpy", "torch", "transformers", "matplotlib")

#: the help of every builder and of the protocol commands, and `blindspot protocols`, in a fresh
#: interpreter, then the modules it loaded (the last line)
BUILDERS_HELP = """
import json, sys
from blindspot.cli import app
for command in (["build-dataset", "--help"], ["build-menli", "--help"],
                ["build-challenge", "--help"], ["publish", "--help"], ["run", "--help"],
                ["stream", "--help"], ["search", "--help"], ["protocols"]):
    try:
        app(command, prog_name="blindspot")
    except SystemExit as done:
        assert done.code == 0, command
print(json.dumps(sorted(sys.modules)))
"""


def test_the_builders_help_loads_none_of_their_libraries() -> None:
    """`blindspot build-dataset --help` (and the other builders'), `run --help` and `protocols`
    stay fast: they name the gold sources, sets, options and protocols without loading
    datasets, spaCy, scipy, pyarrow, numpy or torch."""
    out = subprocess.run([sys.executable, "-c", BUILDERS_HELP], capture_output=True, text=True,
                         check=True, env={**os.environ, "COLUMNS": "300"}).stdout
    help_text, _, last = out.rstrip("\n").rpartition("\n")
    assert [m for m in BUILDER_LIBRARIES if m in json.loads(last)] == []
    assert "cnndm (summarization)" in help_text and "cnndm (apache-2.0)" in help_text


def test_a_second_name_only_when_it_is_as_close() -> None:
    assert close_names("word_dorp", ["word_drop", "word_swap", "typo"]) == ["word_drop"]
    assert sorted(close_names("ab", ["abc", "abd"])) == ["abc", "abd"]  # a tie names both


@pytest.mark.parametrize("args, message", [
    (["run", "--data", "demo", "--metrics", "chrf", "--protocl", "rank"],
     "error: no such option: --protocl; did you mean '--protocol'?; see `blindspot run --help`\n"),
    (["rnu"], "error: unknown command 'rnu'; valid commands: list, protocols, metrics, perturb, "
              "demo, run, checkup, card, stream, report, install-modules, modules, build-dataset, "
              "build-menli, build-challenge, publish, self-bias, search, judge-audit, space; did "
              "you mean 'run'?; see `blindspot --help`\n"),
    (["perturb", "--hepl"], "error: no such option: --hepl; did you mean '--help'?; "
                            "see `blindspot perturb --help`\n"),
    (["report"], "error: Missing argument 'results'; see `blindspot report --help`\n"),
])
def test_typer_usage_errors_are_one_error_line_with_did_you_mean(args: list[str],
                                                                   message: str) -> None:
    """click's own usage errors (a rich panel, "Possible options: ...", exit 2) come out as the
    project's other errors do: one `error: ` line, our "did you mean", exit 1."""
    result = runner.invoke(app, args, prog_name="blindspot")
    assert result.exit_code == 1
    assert result.stderr == message and result.stdout == ""


@pytest.mark.parametrize("args, message", [
    (["build-challenge", "--format", "demtr", "--data", "x"],
     "error: --format 'demtr' is not one of aces, demetr; did you mean 'demetr'?; "
     "see `blindspot build-challenge --help`\n"),
    (["run", "--data", "demo", "--metrics", "chrf", "--fail-on", "sigificant"],
     "error: --fail-on 'sigificant' is not one of error, fail, significant; did you mean "
     "'significant'?; see `blindspot run --help`\n"),
    (["build-challenge", "--format", "xyz", "--data", "x"],
     "error: --format 'xyz' is not one of aces, demetr; see `blindspot build-challenge --help`\n"),
])
def test_a_wrong_choice_names_the_choices_with_did_you_mean(args: list[str], message: str) -> None:
    result = runner.invoke(app, args, prog_name="blindspot")
    assert result.exit_code == 1
    assert result.stderr == message and result.stdout == ""


def test_every_command_is_one_line_of_help_in_the_commands_list() -> None:
    """typer's rich mode keeps a docstring's line breaks in the commands list ("the input length
    it is blind\\npast"): each command's list entry is its first paragraph, on one line."""
    group = get_command(app)
    entries = {name: command.short_help for name, command in group.commands.items()}
    assert all(entry and "\n" not in entry for entry in entries.values()), entries
    assert entries["checkup"].startswith("A metric's check-up: batch/order invariance, determinism, "
                                         "the input length it is blind past, normalisation")
    result = runner.invoke(app, ["build-challenge", "-h"], prog_name="blindspot")
    assert result.exit_code == 0 and "Show this message and exit." in result.stdout
    assert "--format" in result.stdout and "aces|demetr" in result.stdout
