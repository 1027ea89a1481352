"""The one registry idiom (blindspot.registry): names registered once, unknown names answered
with the valid ones and a suggestion, and every registry filled at one place (blindspot.catalog)
whatever the caller imported first."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from blindspot.perturbations.perturbation import REGISTRY, TASKS, Perturbation, Ratio, canonical_task
from blindspot.protocols.interface import PROTOCOLS, get_protocol
from blindspot.registry import Registry, UnknownNameError, snake
from blindspot.scoring.scorer import SCORERS


def test_register_as_decorator_and_as_call_and_read_like_a_dict() -> None:
    colours: Registry[int] = Registry("colour", normalise=snake)

    @colours.register("dark-red", aliases=("maroon",))
    def dark_red() -> int:
        return 1

    colours.register("blue", 2)  # type: ignore[arg-type]
    assert colours.get("Dark Red") is dark_red and colours.get("MAROON") is dark_red
    assert colours["blue"] == 2 and "blue" in colours and "maroon" not in colours
    assert list(colours) == ["dark-red", "blue"] and colours.names() == ["blue", "dark-red"]
    assert dict(colours.items()) == {"dark-red": dark_red, "blue": 2} and len(colours) == 2
    assert colours.get("green", None) is None


def test_a_name_or_alias_is_registered_once() -> None:
    colours: Registry[int] = Registry("colour", normalise=snake)
    colours.register("red", 1, aliases=("scarlet",))
    with pytest.raises(ValueError, match="colour 'red' cannot be registered: 'red' already "
                                         "names the colour 'red'"):
        colours.register("red", 2)
    with pytest.raises(ValueError, match="'scarlet' already names the colour 'red'"):
        colours.register("crimson", 3, aliases=("Scarlet",))
    assert colours.items() == [("red", 1)]  # the refused entries left nothing behind


def test_a_second_test_under_a_taken_alias_is_refused() -> None:
    class Clash(Perturbation):  # its alias is another test's name
        name = "clash"
        aliases = ("Truncation",)
        level_kind = Ratio()

    assert "truncation" in REGISTRY  # read: filled by the catalogue
    with pytest.raises(ValueError, match="test 'clash' cannot be registered: 'truncation' "
                                         "already names the test 'truncation'"):
        REGISTRY.register(Clash.name, Clash, aliases=Clash.aliases)
    assert "clash" not in REGISTRY


@pytest.mark.parametrize(("registry", "given", "message"), [
    (REGISTRY, "trunction", "unknown test 'trunction'; valid tests: addition, .*; did you mean "
                            "'truncation'\\?"),
    (SCORERS, "rogue", "unknown metric 'rogue'; valid metrics: bartscore, .*rouge.*; did you "
                       "mean 'rouge'\\?"),
    (PROTOCOLS, "rnak", "unknown protocol 'rnak'; valid protocols: card, checkup, correlation, "
                        "deviation, judge-audit, preference, rank, search, self-bias; did you "
                        "mean 'rank'\\?"),
    (TASKS, "summarisaton", "unknown task 'summarisaton'; valid tasks: open_ended, "
                            "summarization, translation, translation_paragraph; did you mean "
                            "'summarization'\\?"),
])
def test_an_unknown_name_lists_the_valid_ones_and_the_closest(registry: Registry,
                                                              given: str, message: str) -> None:
    with pytest.raises(UnknownNameError, match=message) as raised:
        registry.get(given)
    assert isinstance(raised.value, ValueError) and isinstance(raised.value, KeyError)
    assert not str(raised.value).startswith('"')  # the message, not KeyError's quoted repr


def test_aliases_resolve_to_the_canonical_entry() -> None:
    assert canonical_task("WIKI") == canonical_task("open-ended") == "open_ended"
    assert TASKS["translation"] == "WMT21 de-en, sentence level"
    assert get_protocol(" Rank ").name == "rank"


FRESH = """
import json, sys
from blindspot.scoring.scorer import SCORERS
from blindspot.perturbations.perturbation import REGISTRY
from blindspot.protocols.interface import PROTOCOLS
before = sorted(m for m in sys.modules if m.startswith(("blindspot.scorers.", "blindspot.perturbations.")))
print(json.dumps({"before": before, "metrics": sorted(SCORERS), "tests": len(REGISTRY),
                  "protocols": list(PROTOCOLS),
                  "datasets": "datasets" in sys.modules}))
"""


def test_a_registry_is_complete_whatever_was_imported_first() -> None:
    """A fresh interpreter that imports only the registries' modules (no provider package) reads
    them complete: filled by blindspot.catalog on first read, not by import side effects."""
    out = subprocess.run([sys.executable, "-c", FRESH], capture_output=True, text=True,
                         check=True).stdout
    found = json.loads(out)
    assert not any(m.startswith("blindspot.scorers.") for m in found["before"])
    assert found["metrics"] == sorted(SCORERS) and "rouge" in found["metrics"]
    # this process may hold tests registered at run time too (a search's pattern rules)
    catalogued = [n for n, c in REGISTRY.items() if c.__module__.startswith("blindspot.perturbations.")]
    assert found["tests"] == len(catalogued) >= 60
    assert found["protocols"] == ["rank", "preference", "deviation", "correlation", "search",
                                  "self-bias", "checkup", "judge-audit", "card"]


def test_a_typed_result_writes_the_keys_of_results_json_in_order() -> None:
    """The typed results (ProtocolResult subclasses) give the results dict the protocols wrote
    before: same keys, same order, so results.json keeps its bytes."""
    from blindspot.protocols.correlation import CorrelationResult
    from blindspot.protocols.deviation import DeviationResult
    from blindspot.protocols.preference_run import PreferenceResult

    tool = {"name": "blindspot", "version": "0"}
    found = PreferenceResult(tool=tool, config={"mode": "ref-based"})
    found.datasets["set"] = {"rows": 2}
    assert json.dumps(found.to_dict()) == json.dumps({
        "schema_version": 1, "protocol": "preference", "tool": tool,
        "config": {"mode": "ref-based"}, "datasets": {"set": {"rows": 2}}})
    assert list(CorrelationResult(tool=tool, config={}, dataset={}, criteria_correlations={},
                                  metrics={}).to_dict()) == [
        "schema_version", "protocol", "tool", "config", "dataset", "criteria_correlations",
        "metrics"]
    assert list(DeviationResult(tool=tool, config={}, dataset={}, templates=[],
                                metrics={}).to_dict()) == [
        "schema_version", "protocol", "tool", "config", "dataset", "templates", "metrics"]


def test_the_order_is_the_catalogues_whatever_was_imported_first() -> None:
    """Protocols' modules imported before the first read, in another order, yet the registry
    lists the order declared in blindspot.protocols.declarations, as `blindspot protocols`
    shows it."""
    script = ("import blindspot.protocols.self_bias, blindspot.protocols.deviation\n"
              "from blindspot.protocols.interface import PROTOCOLS\nprint(','.join(PROTOCOLS))")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == "rank,preference,deviation,correlation,search,self-bias,checkup,judge-audit,card"
