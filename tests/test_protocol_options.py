"""Protocol options are declared once and checked by one function (issue 16).

The declarations themselves (engine settings, paths and models are never visitor-safe; the
defaults are the ones the code runs with), the reading of every kind of value, and the same
refusal through each entry point: ``blindspot run --protocol-option`` (exit non-zero, ``error:``,
no traceback), ``evaluate.load("blindspot/blindspot").compute(protocol_options=...)`` and the Space's
visitor check (the Space over HTTP is in ``test_space_security.py``).
"""

from __future__ import annotations

import inspect
import json
import subprocess
import sys
from dataclasses import fields
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from blindspot.cli import app
from blindspot.protocols.interface import PROTOCOLS
from blindspot.protocols.options import KINDS, OptionError

ROOT = Path(__file__).resolve().parents[1]

#: every declared option as (protocol, option name)
DECLARED = [(p.name, s.name) for p in PROTOCOLS.values() for s in p.options]

#: kinds whose values name something on the server: never settable by a Space visitor
SERVER_KINDS = {"path", "model", "engine"}
#: engine and resource settings, by name: never settable by a Space visitor
ENGINE_SETTINGS = {"state_dir", "engine", "address", "actors", "gpus_per_actor", "chunk_size",
                   "batch_size"}


# -- the declarations ------------------------------------------------------------------------------

def test_server_settings_are_never_visitor_safe() -> None:
    for protocol in PROTOCOLS.values():
        names = [s.name for s in protocol.options]
        assert len(names) == len(set(names)), protocol.name
        for spec in protocol.options:
            assert spec.kind in KINDS, (protocol.name, spec.name)
            if spec.kind in SERVER_KINDS or spec.name in ENGINE_SETTINGS:
                assert not spec.visitor_safe, (protocol.name, spec.name)
            assert not (spec.file and spec.visitor_safe), (protocol.name, spec.name)
    files = {(p.name, s.name) for p in PROTOCOLS.values() for s in p.options if s.file}
    assert files == {("deviation", "human_scores"), ("correlation", "references"),
                     ("card", "human"), ("card", "human_references")}


def test_declared_defaults_are_the_ones_the_code_runs_with() -> None:
    from blindspot.runner.engines import ENGINES
    from blindspot.runner.pipeline import RunSettings
    from blindspot.search.job import search_result

    settings = {f.name: f.default for f in fields(RunSettings)}
    for spec in PROTOCOLS.get("rank").options:
        if spec.name != "state_dir":  # run_blindspot's own argument, default None
            assert spec.default == settings[spec.name], spec.name
    assert PROTOCOLS.get("rank").option("engine").choices == tuple(sorted(ENGINES))
    search = inspect.signature(search_result).parameters
    for spec in PROTOCOLS.get("search").options:
        if spec.name != "panel":  # DEFAULT_PANEL, a tuple of specs
            assert spec.default == search[spec.name].default, spec.name


#: what the protocols' execution code imports (the runner, the judge, the report writer, the
#: models) and listing them must not
EXECUTION_LIBRARIES = ("datasets", "scipy", "matplotlib", "torch")

#: `blindspot protocols` in a fresh interpreter, then the modules it loaded (the last line)
LIST_PROTOCOLS = """
import json, sys
from blindspot.cli import app
app(["protocols"], prog_name="blindspot", standalone_mode=False)
print(json.dumps(sorted(sys.modules)))
"""


def _table_cells(output: str) -> set[tuple[str, str]]:
    """(protocol, option) of every row of the `blindspot protocols` table."""
    rows = [line for line in output.splitlines() if "│" in line]
    return {tuple(c.strip() for c in line.split("│")[1:3]) for line in rows}


@pytest.mark.quick
def test_listing_the_protocols_loads_none_of_their_execution_code() -> None:
    """`blindspot protocols` reads the declarations only (issue 19: under a second, like `list`):
    no runner, judge, report writer or model library, no protocol's own module; and it still
    lists every registered protocol with each of its declared options."""
    out = subprocess.run([sys.executable, "-c", LIST_PROTOCOLS], capture_output=True,
                         text=True, check=True, cwd=ROOT).stdout
    table, _, last = out.rstrip("\n").rpartition("\n")
    loaded = set(json.loads(last))
    assert [m for m in EXECUTION_LIBRARIES if m in loaded] == []
    implementations = {p.implementation.partition(":")[0] for p in PROTOCOLS.values()}
    assert len(implementations) == len(PROTOCOLS) and not implementations & loaded
    listed = _table_cells(table)
    assert {name for name, _ in listed} >= set(PROTOCOLS) == {
        "rank", "preference", "deviation", "correlation", "search", "self-bias", "checkup",
        "judge-audit", "card"}
    assert set(DECLARED) <= listed


@pytest.mark.quick
def test_the_protocols_command_lists_every_declared_option() -> None:
    result = CliRunner().invoke(app, ["protocols"], terminal_width=200)
    assert result.exit_code == 0, result.output
    rows = [line for line in result.output.splitlines() if "│" in line]
    assert set(DECLARED) <= _table_cells(result.output)
    state = next(line for line in rows if "state_dir" in line)
    scores = next(line for line in rows if "human_scores" in line)
    assert "│ no " in state and "│ upload " in scores
    # every protocol says what it measures, one with no option (self-bias) too
    for protocol in PROTOCOLS.values():
        assert any(line.startswith(f"│ {protocol.name} ") and protocol.description[:40] in line
                   for line in rows), protocol.name


# -- reading values --------------------------------------------------------------------------------

@pytest.mark.parametrize("protocol, given, read", [
    ("rank", {"worst_examples": "5"}, {"worst_examples": 5}),
    ("rank", {"worst_examples": 5.0, "tolerance": "0.01"}, {"worst_examples": 5,
                                                            "tolerance": 0.01}),
    ("rank", {"levels": {"truncation": ["0.1", 0.2]}}, {"levels": {"truncation": ["0.1", 0.2]}}),
    ("rank", {"engine": "ray", "address": "auto"}, {"engine": "ray", "address": "auto"}),
    ("rank", {"state_dir": None}, {"state_dir": None}),  # None: the default, from Python
    ("preference", {"fixed": "yes", "error_types": " neg, typo"},
     {"fixed": True, "error_types": ["neg", "typo"]}),
    ("preference", {"mode": "ref_free"}, {"mode": "ref_free"}),
    ("deviation", {"criteria": ["coherence"], "normalise": "none"},
     {"criteria": ["coherence"], "normalise": "none"}),
    ("correlation", {"system_column": 7}, {"system_column": "7"}),
    ("search", {"panel": [], "noise_ratio": 1}, {"panel": [], "noise_ratio": 1.0}),
])
def test_values_are_read_by_their_kind_and_reading_twice_changes_nothing(
        protocol: str, given: dict, read: dict) -> None:
    chosen = PROTOCOLS.get(protocol)
    once = chosen.check_options(given)
    assert once == read
    assert chosen.check_options(once) == once


#: what a command line or a JSON parser can hand over for one value
RAW_VALUES = st.one_of(st.text(), st.integers(), st.floats(), st.booleans(), st.none(),
                       st.lists(st.text(max_size=8), max_size=3),
                       st.dictionaries(st.text(max_size=8), st.lists(st.text(max_size=4),
                                                                     max_size=2), max_size=2))


@settings(max_examples=300, deadline=None)
@given(option=st.sampled_from(DECLARED), value=RAW_VALUES, visitor=st.booleans())
def test_any_value_is_read_or_refused_with_an_option_error(option: tuple[str, str], value,
                                                           visitor: bool) -> None:
    """Never another exception (no traceback for any input), and a read value reads the same."""
    protocol, name = PROTOCOLS.get(option[0]), option[1]
    try:
        once = protocol.check_options({name: value}, visitor=visitor)
    except OptionError as error:
        assert f"'{name}'" in str(error) or f"{name}=" in str(error)
        return
    except ValueError as error:  # a metric spec a visitor may not run
        assert protocol.option(name).kind in ("metric", "metrics") and visitor, error
        return
    assert protocol.check_options(once, visitor=visitor) == once


@pytest.mark.parametrize("protocol, given, message", [
    ("rank", {"tolerance": "abc"}, "tolerance='abc' is not accepted by the rank protocol: "
                                   "tolerance must be a number >= 0; valid options: actors,"),
    ("rank", {"tolerance": float("nan")}, "tolerance must be a number >= 0"),
    ("rank", {"worst_examples": 2.5}, "worst_examples must be a whole number >= 0 and <= 1000"),
    ("rank", {"worst_examples": True}, "worst_examples=True is not accepted"),
    ("rank", {"bootstrap_seed": 99999999999999999999},
     "bootstrap_seed must be a whole number >= 0 and <= 4294967295"),
    ("rank", {"levels": [1, 2]}, "levels must be a JSON object of test -> list of levels"),
    ("rank", {"engine": "spark"}, "engine must be an engine name: local, ray"),
    ("rank", {"engine": 5}, "engine=5 is not accepted by the rank protocol: engine must be an "
                            "engine name: local, ray"),
    ("rank", {"tolerence": 0.1}, "'tolerence' is not an option of the rank protocol; valid "
                                 "options: actors, address, batch_size, bootstrap_seed, "
                                 "chunk_size, engine, gpus_per_actor, levels, state_dir, "
                                 "tolerance, worst_examples"),
    ("preference", {"weight": 1.5}, "weight must be a number >= 0 and <= 1"),
    ("preference", {"fixed": "maybe"}, "fixed must be true or false"),
    ("deviation", {"normalise": "zscore"}, "normalise must be one of auto, minmax, none"),
    ("correlation", {"criteria": " , "}, "criteria must be comma-separated names"),
    ("search", {"noise_ratio": 0}, "noise_ratio must be a number > 0 and <= 1"),
    ("search", {"k": "eight"}, "k must be a whole number >= 1 and <= 100"),
])
def test_bad_values_name_the_option_the_value_and_what_is_accepted(protocol: str, given: dict,
                                                                   message: str) -> None:
    with pytest.raises(OptionError) as refused:
        PROTOCOLS.get(protocol).check_options(given)
    assert message in str(refused.value)


def test_a_visitor_may_set_only_the_visitor_safe_options() -> None:
    rank = PROTOCOLS.get("rank")
    assert rank.check_options({"tolerance": "0.01", "levels": {"truncation": ["0.1"]}},
                              visitor=True) == {"tolerance": 0.01,
                                                "levels": {"truncation": ["0.1"]}}
    for name, value in (("state_dir", "/tmp/x"), ("engine", "ray"), ("address", "h:1"),
                        ("chunk_size", 5), ("batch_size", 8), ("actors", 2)):
        assert rank.check_options({name: value}) == {name: value}  # the CLI may
        with pytest.raises(OptionError, match=rf"'{name}' cannot be set from this Space"):
            rank.check_options({name: value}, visitor=True)
    with pytest.raises(OptionError, match="'human_scores' names a file: upload it"):
        PROTOCOLS.get("deviation").check_options({"human_scores": "scores.csv"}, visitor=True)
    with pytest.raises(OptionError, match="'mlm' cannot be set from this Space"):
        PROTOCOLS.get("search").check_options({"mlm": "/models/bert"}, visitor=True)
    preference = PROTOCOLS.get("preference")
    assert preference.check_options({"combine_with": "bertscore.f1@minilm"}, visitor=True)
    with pytest.raises(ValueError, match="Hub models and local paths are off"):
        preference.check_options({"combine_with": "bertscore@roberta-large"}, visitor=True)
    assert preference.check_options({"combine_with": "bertscore@roberta-large"}, visitor=True,
                                    allow_hub_models=True)
    with pytest.raises(ValueError, match="model '/etc' of metric spec"):  # never a path
        preference.check_options({"combine_with": "bertscore@/etc"}, visitor=True,
                                 allow_hub_models=True)


# -- the same refusal through every entry point ----------------------------------------------------

#: entry point x bad option -> the message fragment (the CLI also exits non-zero, no traceback)
ENTRY_TABLE = [
    ("cli", "rank", ["tolerance=abc"], "tolerance='abc' is not accepted by the rank protocol"),
    ("cli", "rank", ["worst_examples=-1"], "worst_examples must be a whole number >= 0"),
    ("cli", "rank", ["engine=spark"], "engine must be an engine name: local, ray"),
    ("cli", "rank", ["seed=3"], "'seed' is not an option of the rank protocol; valid options: "
                                "actors, address,"),
    ("cli", "rank", ["bootstrap_seed=99999999999999999999"], "<= 4294967295"),
    ("cli", "deviation", ["normalise=zscore"], "normalise must be one of auto, minmax, none"),
    ("cli", "preference", ["weight=2"], "weight must be a number >= 0 and <= 1"),
    ("cli", "correlation", ["system_column={}"], "system_column must be a text"),
    ("cli", "search", ["noise_ratio=0"], "noise_ratio must be a number > 0 and <= 1"),
    ("compute", "rank", {"tolerance": "abc"}, "tolerance='abc' is not accepted by the rank"),
    ("compute", "rank", {"chunk_size": 0}, "chunk_size must be a whole number >= 1"),
    ("compute", "rank", {"nope": 1}, "'nope' is not an option of the rank protocol; valid "
                                     "options: actors,"),
    ("compute", "preference", {"mode": "sideways"},
     "mode must be one of ref-based, ref-free"),
    ("compute", "deviation", {"tolerance": float("inf")}, "tolerance must be a number >= 0"),
]


@pytest.fixture(scope="module")
def blindspot_module():
    import evaluate

    from blindspot.evaluate_modules import module_path

    return evaluate.load(str(module_path("blindspot")))


@pytest.mark.parametrize("entry, protocol, bad, message", ENTRY_TABLE,
                         ids=[f"{e}-{p}-{b}" for e, p, b, _ in ENTRY_TABLE])
def test_every_entry_point_refuses_a_bad_option_the_same_way(
        tmp_path, blindspot_module, entry: str, protocol: str, bad, message: str) -> None:
    if entry == "cli":
        options = [a for item in bad for a in ("--protocol-option", item)]
        result = CliRunner().invoke(app, ["run", "--data", "demo", "--metrics", "rouge",
                                          "--protocol", protocol, *options, "--out",
                                          str(tmp_path / "out")])
        text = " ".join(result.output.split())
        assert result.exit_code == 1 and text.startswith("error: ")
        assert message in text and "Traceback" not in text
        assert not (tmp_path / "out").exists()  # refused before any work
    else:
        with pytest.raises(ValueError) as refused:
            blindspot_module.compute(data="demo", metric="rouge", protocol=protocol,
                                     protocol_options=bad, progress=False)
        assert message in str(refused.value)
