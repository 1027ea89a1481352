"""The one shape of a protocol (issue 17): ``execute`` gives a typed result and writes nothing;
``report`` writes the report folder from that result alone, byte for byte what ``run`` writes
with an ``out``, through the one writer (issue 29: exactly the files ``render`` declares, a
result with a NaN writes nothing); ``to_dict`` is results.json, and it validates against the
JSON Schema generated from the result's dataclass."""

from __future__ import annotations

import atexit
import contextlib
import csv
import functools
import json
import math
from collections.abc import Callable
from dataclasses import fields, replace
from pathlib import Path

import jsonschema
import pytest
from conftest import SHARED_DATA
from judge_support import Behaviour, chat_server

from blindspot.protocols.interface import (
    PROTOCOLS,
    Protocol,
    ProtocolDeclaration,
    ProtocolRequest,
    ProtocolResult,
    get_protocol,
)
from blindspot.protocols.self_bias import SelfBiasResult
from blindspot.search.job import SearchResult

WMT = SHARED_DATA / "wmt21_de_en_translation.jsonl"
MENLI = SHARED_DATA / "menli_wmt20_de_adversarial.csv"
SUMMEVAL = SHARED_DATA / "summeval_expert_judgments.jsonl"
CNNDM = SHARED_DATA / "cnndm_summeval100_summarization.jsonl"


def _wmt_rows(n: int) -> list[dict]:
    with open(WMT, encoding="utf-8") as handle:
        return [json.loads(line) for _, line in zip(range(n), handle, strict=False)]


def _self_bias_table(folder: Path) -> str:
    """Four WMT21 rows as (system, hypothesis, ref) rows of three of its systems."""
    path = folder / "outputs.jsonl"
    with open(path, "w", encoding="utf-8") as handle:
        for row in _wmt_rows(4):
            for system in ("Facebook-AI", "Nemo", "ICL"):
                handle.write(json.dumps({"system": system, "hypothesis": row["systems"][system],
                                         "ref": row["reference"]}) + "\n")
    return str(path)


def _menli_slice(folder: Path) -> str:
    """The first row of every error type of the MENLI set."""
    with open(MENLI, encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    first = list({r["error"]: r for r in reversed(rows)}.values())
    path = folder / "slice.csv"
    with open(path, "w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(first)
    return str(path)


def _judgments(folder: Path) -> str:
    """The SummEval judgments of the first three documents (all their systems)."""
    rows = [json.loads(line) for line in SUMMEVAL.read_text(encoding="utf-8").splitlines()]
    keep = list(dict.fromkeys(r["id"] for r in rows))[:3]
    path = folder / "judgments.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows if r["id"] in keep),
                    encoding="utf-8")
    return str(path)


def _grade(body: dict) -> int:
    """A judge with a known bias: a pairwise prompt prefers the first answer, a graded one
    grades by the prompt's length (1-3)."""
    text = body["messages"][-1]["content"]
    return 1 if "Summary 2:" in text else len(text) % 3 + 1


@functools.cache
def _judge_url() -> str:
    """A judge server on 127.0.0.1 for this test process (closed when it ends)."""
    stack = contextlib.ExitStack()
    url, _ = stack.enter_context(chat_server(Behaviour(grader=_grade)))
    atexit.register(stack.close)
    return url


def _length_ratio(predictions: list[str], references: list[list[str]]) -> list[float]:
    """A user's metric given as a Python function (its check-up needs no fresh process)."""
    return [len(p.split()) / max(1, len(refs[0].split()))
            for p, refs in zip(predictions, references, strict=True)]


#: one small real request per registered protocol (its data made in the given folder)
REQUESTS: dict[str, Callable[[Path], ProtocolRequest]] = {
    "rank": lambda folder: ProtocolRequest(
        data=str(WMT), metrics="chrf", task="translation", tests="truncation", seeds=[1],
        progress=False, options={"worst_examples": 1}),
    "preference": lambda folder: ProtocolRequest(
        data=_menli_slice(folder), metrics="chrf,bleu", progress=False),
    "deviation": lambda folder: ProtocolRequest(
        data={"gold": ["The cat sat on the mat.", "Same text."],
              "references": ["A cat was sitting on the mat.", "Same text."]},
        metrics="chrf", task="mt", seeds=[1], progress=False, options={"criteria": "control"}),
    "correlation": lambda folder: ProtocolRequest(
        data=_judgments(folder), metrics="chrf", progress=False,
        options={"references": str(CNNDM)}),
    "search": lambda folder: ProtocolRequest(
        data=str(WMT), metrics="chrf", task="translation", progress=False,
        options={"panel": "bleu", "limit": 2, "max_calls": 60, "embedding_model": None}),
    "self-bias": lambda folder: ProtocolRequest(
        data=_self_bias_table(folder), metrics="chrf=Facebook-AI,ter=Nemo", progress=False,
        columns={"references": "ref"}),
    "checkup": lambda folder: ProtocolRequest(
        data="demo", metrics="chrf", task="translation", progress=False,
        options={"rows": 4, "max_words": 64}),
    "judge-audit": lambda folder: ProtocolRequest(
        data="demo", metrics="llm_judge@judge-model", progress=False,
        metric_options={"llm_judge": {"backend": "openai", "url": _judge_url(), "retries": 0}},
        options={"audits": "position,rubric", "rows": 2, "mode": "greedy"}),
    "card": lambda folder: ProtocolRequest(
        data="demo", metrics=_length_ratio, tests="truncation", seeds=[1], progress=False,
        options={"tasks": "translation", "rows": 4, "checkup_rows": 2, "max_words": 32,
                 "human": _judgments(folder), "human_references": str(CNNDM), "bootstrap": 50,
                 "time_cost": False}),
}


def _files(folder: Path) -> dict[str, bytes]:
    """Every report file under ``folder`` (the resumable state left out) by relative path."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file() and ".state" not in p.relative_to(folder).parts}


def test_every_registered_protocol_has_a_request_here() -> None:
    assert sorted(REQUESTS) == sorted(PROTOCOLS)


def test_every_protocol_reports_through_the_one_writer() -> None:
    """No protocol writes its own folder: ``report`` is the base class's, which hands
    ``render``'s files to :func:`blindspot.report.files.write_folder`."""
    for name in PROTOCOLS:
        assert type(get_protocol(name)).report is Protocol.report, name


def test_every_declaration_names_the_protocol_that_runs_it() -> None:
    """Each declaration's ``implementation`` is a Protocol subclass whose declaration is that
    one; a declaration naming another protocol's class is refused when it would run."""
    for name, declared in PROTOCOLS.items():
        protocol = get_protocol(name)
        assert isinstance(protocol, Protocol) and protocol.declaration is declared
        assert protocol.name == name and get_protocol(name) is protocol  # loaded once
    stray = ProtocolDeclaration("stray", "runs rank's class", "blindspot.protocols.rank:RankProtocol")
    with pytest.raises(TypeError, match="runs the 'rank' declaration, not 'stray'"):
        stray.load()


def _reported_later(name: str, request: ProtocolRequest, tmp_path: Path) -> dict[str, bytes]:
    """Run ``request`` without an out (nothing may be written), report the result, run it again
    with an out: the two folders must hold the same bytes. Returns the files."""
    protocol = get_protocol(name)
    before = set(tmp_path.rglob("*"))
    result = protocol.run(request)
    assert isinstance(result, ProtocolResult) and set(tmp_path.rglob("*")) == before
    written = protocol.report(result, tmp_path / "later")
    assert written and all(p.exists() for p in written)
    protocol.run(replace(request, out=tmp_path / "now"))
    later, now = _files(tmp_path / "later"), _files(tmp_path / "now")
    assert "results.json" in later and later == now
    # exactly the files the protocol renders, results.json first, no temporary file left
    assert [str(p.relative_to(tmp_path / "later")) for p in written] == \
        protocol.render(result).names
    assert sorted(later) == sorted(protocol.render(result).names)
    saved = json.loads(later["results.json"])
    assert saved == result.to_dict()
    jsonschema.validate(saved, type(result).json_schema())
    _nan_writes_nothing(protocol, result, tmp_path / "nan")
    return later


def _with_nan(result: ProtocolResult) -> ProtocolResult:
    """``result`` with a NaN where its renderers only print it: the tool's version, or (a
    result that saves no tool) a score of the self-bias matrix."""
    if "tool" not in result.UNSAVED:
        return replace(result, tool={**result.tool, "version": math.nan})
    assert isinstance(result, SelfBiasResult)
    evaluator = result.evaluators[0]
    return replace(result, std={**result.std, evaluator: {
        s: math.nan for s in result.std[evaluator]}})


def _nan_writes_nothing(protocol: Protocol, result: ProtocolResult, out: Path) -> None:
    """A result results.json cannot hold is refused before any file is written."""
    with pytest.raises(ValueError, match="Out of range float values are not JSON compliant"):
        protocol.report(_with_nan(result), out)
    assert not out.exists()


@pytest.mark.parametrize("name", sorted(REQUESTS))
def test_a_result_is_reported_later_from_itself_alone(name: str, tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    _reported_later(name, REQUESTS[name](data), tmp_path)


def test_search_reports_its_generalisation_run_from_the_result(tmp_path: Path) -> None:
    """The generalisation's rank run is not in results.json but in the result: its report folder
    is written with the search's."""
    rows = tmp_path / "data" / "wmt.jsonl"
    rows.parent.mkdir()
    rows.write_text("".join(json.dumps(r) + "\n" for r in _wmt_rows(6)), encoding="utf-8")
    request = ProtocolRequest(data=str(rows), metrics="chrf", task="translation", seeds=[1],
                              progress=False,
                              options={"panel": "", "limit": 2, "max_calls": 60,
                                       "embedding_model": None, "generalise": True,
                                       "top_patterns": 1})
    files = _reported_later("search", request, tmp_path)
    saved = json.loads(files["results.json"])
    rank = json.loads(files["generalisation/results.json"])
    assert rank["protocol"] == "rank" and rank["config"]["tests"] == [saved["generalisation"]["test"]]
    assert "generalisation_run" not in saved and saved["generalisation"]["rows"] == 6


def test_self_bias_files_keep_their_keys_without_the_common_ones(tmp_path: Path) -> None:
    """self_bias.json never had schema_version, protocol and tool: the typed result keeps them
    in memory, its dict (and so the files) leaves them out."""
    result = get_protocol("self-bias").run(REQUESTS["self-bias"](tmp_path))
    assert isinstance(result, SelfBiasResult) and result.protocol == "self-bias"
    assert list(result.to_dict()) == ["systems", "evaluators", "evaluator_specs", "matrix", "std",
                                      "n", "ranking", "self_preference", "flagged", "errors",
                                      "signatures"]
    assert result.systems == ["Facebook-AI", "Nemo", "ICL"]
    assert result.ranking["ter"][-1] == max(result.matrix["ter"], key=result.matrix["ter"].get)


def test_search_result_leaves_the_generalisation_run_to_the_report() -> None:
    names = [f.name for f in fields(SearchResult)]
    assert names[-1] == "generalisation_run" and SearchResult.UNSAVED == ("generalisation_run",)
    assert names[:-1] == ["schema_version", "protocol", "tool", "config", "budget", "summary",
                          "patterns", "examples", "generalisation"]


@pytest.mark.parametrize("change", ["unknown key", "missing key", "wrong type"])
def test_the_generated_schema_refuses_what_the_dataclass_does_not_declare(change: str,
                                                                         tmp_path: Path) -> None:
    result = get_protocol("search").run(REQUESTS["search"](tmp_path))
    saved = result.to_dict()
    if change == "unknown key":
        saved["timings"] = {}
    elif change == "missing key":
        del saved["budget"]
    else:
        saved["patterns"] = {"article_swap": 1}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(saved, SearchResult.json_schema())


def test_a_schema_fixes_the_protocol_and_lists_only_saved_keys() -> None:
    search = SearchResult.json_schema()
    assert search["properties"]["protocol"] == {"const": "search"}
    assert "generalisation_run" not in search["properties"]
    assert "protocol" not in SelfBiasResult.json_schema()["properties"]
