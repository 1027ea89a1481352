"""Bad input x every entry point: a one-paragraph message naming file, line/row, field and fix;
exit status 1 before any work (2 when a finished run has tests in error); never a traceback;
nothing written, nothing dropped or reordered.

The table :data:`TABLE` is the whole contract: (bad input, entry point) -> message fragment and
exit status (CLI) or exception type (Python API, ``compute``).
"""

from __future__ import annotations

import ast
import json
import re
import socket
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import evaluate
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from blindspot.cli import app
from blindspot.errors import BlindspotInputError, message
from blindspot.evaluate_modules import module_path
from blindspot.io import read_table
from blindspot.protocols.interface import ProtocolRequest, get_protocol
from blindspot.protocols.rank import run_blindspot

#: a tqdm progress bar ("Generating train split: 3 examples [00:00, 2.1 examples/s]",
#: "streaming:  67%|###  | 2/3 [00:00<00:00, 2.82row/s]"), up to its closing bracket
PROGRESS = re.compile(r"[^\r\n]*?\[\d\d:\d\d[^\]]*\]")
GOLD = ["The cat sat on the mat all afternoon.", "Dogs bark loudly at night in the city.",
        "Rain fell over the quiet town until dawn."]
REFS = ["A cat sat on a mat.", "The dogs barked at night.", "It rained in the town."]


def _jsonl(rows: list[dict[str, Any]]) -> bytes:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode()


def _rows(gold: list[Any]) -> list[dict[str, Any]]:
    return [{"id": f"r{i}", "gold": g, "references": r}
            for i, (g, r) in enumerate(zip(gold, REFS, strict=True))]


def _parquet(path: Path, gold: list[Any]) -> None:
    pq.write_table(pa.table({"id": ["r0", "r1", "r2"], "gold": gold, "references": REFS}), path)


#: every bad file, by name: its bytes (or a writer for binary formats)
FILES: dict[str, bytes | Callable[[Path], None]] = {
    "int_gold.jsonl": _jsonl(_rows([0, 1, 2])),
    "null_gold.jsonl": _jsonl(_rows([GOLD[0], None, GOLD[2]])),
    "mixed_gold.jsonl": _jsonl(_rows([GOLD[0], GOLD[1], 7])),
    "bad_line.jsonl": _jsonl(_rows(GOLD)[:1]) + b'{"id": "r1", "gold": "x"\n' + _jsonl(_rows(GOLD)[2:]),
    "blank.jsonl": b"\n   \n\n",
    "empty.jsonl": b"",
    "latin1.jsonl": _jsonl(_rows(GOLD)[:1]) + json.dumps(
        {"id": "r1", "gold": "Café crème.", "references": "x"}, ensure_ascii=False
    ).encode("latin-1") + b"\n",
    "null_gold.csv": b"id,gold,references\nr0,The cat sat.,A cat.\nr1,,Dogs.\nr2,Rain fell.,Rain.\n",
    "int_gold.csv": b"id,gold,references\nr0,1,A cat.\nr1,2,Dogs.\n",
    "latin1.csv": "id,gold,references\nr0,The cat sat.,A cat.\nr1,Café crème.,Café.\n".encode("latin-1"),
    "header_only.csv": b"id,gold,references\n",
    "null_gold.parquet": lambda p: _parquet(p, [GOLD[0], None, GOLD[2]]),
    "int_gold.parquet": lambda p: _parquet(p, [1, 2, 3]),
    "empty.parquet": b"",
    "rows.tsv": b"id\tgold\nr0\tThe cat sat.\n",
}

ENTRIES = ("run", "run --chunk-size", "perturb", "build-dataset", "run_blindspot")

NOT_TEXT = "1 row(s) are not text"
#: per bad file, the fragment every entry point prints (overridden per entry below)
MESSAGES: dict[str, str] = {
    "int_gold.jsonl": "int_gold.jsonl, row 1, field 'gold': 3 row(s) are not text: row 1 is int 0; "
                      "row 2 is int 1; row 3 is int 2. Give every row a 'gold' text",
    "null_gold.jsonl": f"null_gold.jsonl, row 2, field 'gold': {NOT_TEXT}: row 2 is empty (null)",
    "mixed_gold.jsonl": f"mixed_gold.jsonl, row 3, field 'gold': {NOT_TEXT}: row 3 is int 7",
    "bad_line.jsonl": "bad_line.jsonl, line 2: not valid JSON (Expecting ',' delimiter at column 1)"
                      ". Each line must hold one JSON object",
    "blank.jsonl": "blank.jsonl: the file has only blank lines, no rows. Give it rows",
    "empty.jsonl": "empty.jsonl: the file is empty. Give it rows: one JSON object per line",
    "latin1.jsonl": "latin1.jsonl, line 2: the file is not UTF-8 text (e.g. Latin-1 or "
                    "Windows-1252). Re-encode it as UTF-8, e.g. iconv -f latin1 -t utf-8 "
                    "latin1.jsonl > latin1.utf8.jsonl",
    "null_gold.csv": f"null_gold.csv, row 2, field 'gold': {NOT_TEXT}: row 2 is empty (null)",
    "int_gold.csv": "int_gold.csv, row 1, field 'gold': 2 row(s) are not text: row 1 is int 1",
    "latin1.csv": "latin1.csv, line 3: the file is not UTF-8 text",
    "header_only.csv": "header_only.csv: the file has a header line but no rows",
    "null_gold.parquet": f"null_gold.parquet, row 2, field 'gold': {NOT_TEXT}: row 2 is empty",
    "int_gold.parquet": "int_gold.parquet, row 1, field 'gold': 3 row(s) are not text: row 1 is int 1",
    "empty.parquet": "empty.parquet: the file is empty. Give it rows: a Parquet file",
    "rows.tsv": "rows.tsv: unsupported file type '.tsv'. Use one of .csv, .json, .jsonl, .parquet",
    "missing.jsonl": "input file not found",
    "folder": "this is a folder, not a data file",
}
STREAM_ONLY = "--chunk-size streams a local .jsonl or .parquet file"
#: (file, entry) pairs whose message differs from the file's own
OVERRIDES: dict[tuple[str, str], str] = {
    # a streamed run sees one chunk (2 rows) at a time: it counts that chunk's bad rows
    ("int_gold.jsonl", "run --chunk-size"): "int_gold.jsonl, row 1, field 'gold': 2 row(s) are "
                                             "not text: row 1 is int 0; row 2 is int 1",
    ("int_gold.parquet", "run --chunk-size"): "int_gold.parquet, row 1, field 'gold': 2 row(s) "
                                               "are not text: row 1 is int 1; row 2 is int 2",
    **{(name, "run --chunk-size"): STREAM_ONLY for name in FILES if name.endswith((".csv", ".tsv"))},
    ("folder", "run --chunk-size"): STREAM_ONLY,
    ("missing.jsonl", "build-dataset"): "gold file not found",
    ("folder", "build-dataset"): "is neither a file nor a gold source",
}
#: the exception run_blindspot raises where it is not BlindspotInputError
API_ERRORS: dict[str, type[Exception]] = {"missing.jsonl": FileNotFoundError}


@dataclass(frozen=True)
class Case:
    """One row of the table: an input, an entry point, the expected fragment and outcome."""

    given: str   #: a file in FILES (or missing.jsonl, folder), or an option / a compute call
    entry: str
    message: str
    exit: int | type[Exception]


def _file_cases() -> list[Case]:
    names = [*FILES, "missing.jsonl", "folder"]
    cases = []
    for name in names:
        for entry in ENTRIES:
            message = OVERRIDES.get((name, entry), MESSAGES[name])
            exit_: int | type[Exception] = 1
            if entry == "run_blindspot":
                exit_ = API_ERRORS.get(name, BlindspotInputError)
                if name in ("folder", "rows.tsv"):
                    exit_ = BlindspotInputError
            cases.append(Case(name, entry, message, exit_))
    return cases


SEEDS_RANGE = "seed 99999999999999999999 is out of range; seeds are whole numbers from 0 to"
NUM_PROC = ("--num-proc (num_proc) must be a whole number of worker processes, at least 1, or "
            "left out to work in this process")
ROUGE_OPTIONS = ("metric 'rouge' has no option 'bogus'; its options are rouge_types, "
                 "use_stemmer, measure")
#: bad settings (CLI flags for `run`; keywords for run_blindspot and compute)
SETTING_CASES = [
    Case("--option rouge.bogus=1", "run", ROUGE_OPTIONS, 1),
    Case("--seeds 99999999999999999999", "run", SEEDS_RANGE, 1),
    Case("--seeds 1,x", "run", "--seeds must be whole numbers (comma-separated in a string), "
                               "got '1,x'", 1),
    Case("--num-proc 0", "run", f"{NUM_PROC}; got 0", 1),
    Case("--num-proc -2", "run", f"{NUM_PROC}; got -2", 1),
    Case("--num-proc two", "run", "Invalid value for '--num-proc'", 1),
    Case("--num-proc 0", "perturb", f"{NUM_PROC}; got 0", 1),
    Case("--num-proc 0", "build-dataset", f"{NUM_PROC}; got 0", 1),
    Case("--seeds 99999999999999999999", "build-dataset", SEEDS_RANGE, 1),
    Case("metric_options={'rouge': {'bogus': 1}}", "run_blindspot", ROUGE_OPTIONS, ValueError),
    Case("seeds=[99999999999999999999]", "run_blindspot", SEEDS_RANGE, ValueError),
    Case("num_proc=0", "run_blindspot", f"{NUM_PROC}; got 0", ValueError),
    Case("no references column", "run", "no_refs.jsonl: metric 'rouge.rougeL' needs references, "
         "and the data has no references column (its columns: id, gold). Name the column that "
         "holds them with --references-column", 1),
]
#: the evaluate modules' compute
MODULE_CASES = [
    Case("rouge: predictions=[], references=[]", "compute",
         "rouge: predictions is empty; give at least one prediction", ValueError),
    Case("chrf: predictions=[], references=[]", "compute",
         "chrf: predictions is empty; give at least one prediction", ValueError),
    Case("blindspot: predictions=[1, 2, 3]", "compute",
         "row 1, field 'predictions': 3 row(s) are not text: row 1 is int 1", BlindspotInputError),
    Case("blindspot: predictions with None", "compute",
         "row 2, field 'predictions': 1 row(s) are not text: row 2 is empty (null)",
         BlindspotInputError),
    Case("blindspot: references with a number", "compute",
         "row 3, field 'references': 1 row(s) are not text: row 3 is int 5", BlindspotInputError),
    Case("blindspot: seeds='1,x'", "compute", "seeds must be whole numbers", ValueError),
    Case("blindspot: seeds=99999999999999999999", "compute", SEEDS_RANGE, ValueError),
    Case("blindspot: metric='rogue'", "compute", "unknown metric 'rogue'; valid metrics: "
         "bartscore,", BlindspotInputError),
]
TABLE = _file_cases() + SETTING_CASES + MODULE_CASES


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every bad file of FILES, a good file and one without references."""
    root = tmp_path_factory.mktemp("bad-input")
    for name, content in FILES.items():
        if callable(content):
            content(root / name)
        else:
            (root / name).write_bytes(content)
    (root / "good.jsonl").write_bytes(_jsonl(_rows(GOLD)))
    (root / "no_refs.jsonl").write_bytes(_jsonl([{"id": r["id"], "gold": r["gold"]}
                                                 for r in _rows(GOLD)]))
    (root / "folder").mkdir()
    return root


def _cli_args(case: Case, folder: Path, out: Path) -> list[str]:
    """The command line of a CLI case: the bad file, or the good file with the bad setting."""
    data = folder / case.given
    if case.given.startswith("--") or case.given.startswith("no references"):
        data = folder / ("no_refs.jsonl" if case.given.startswith("no references") else "good.jsonl")
    setting = case.given.split() if case.given.startswith("--") else []
    if case.entry.startswith("run"):
        chunk = ["--chunk-size", "2"] if case.entry == "run --chunk-size" else []
        return ["run", "--data", str(data), "--metrics", "rouge", "--tests", "truncation",
                "--seeds", "1", "--out", str(out), *chunk, *setting]
    if case.entry == "perturb":
        return ["perturb", str(data), "--test", "truncation", "--level", "0.5", "-o",
                str(out / "out.jsonl"), *setting]
    return ["build-dataset", "--data", str(data), "--task", "summarization", "--tests",
            "truncation", "--seeds", "1", "--out", str(out), *setting]


def _api_call(case: Case, folder: Path, out: Path) -> None:
    settings: dict[str, Any] = {"tests": "truncation", "seeds": [1], "progress": False,
                                "out": out}
    data = str(folder / case.given)
    if "=" in case.given:  # a keyword setting on the good file
        key, _, value = case.given.partition("=")
        settings[key] = ast.literal_eval(value)
        data = str(folder / "good.jsonl")
    run_blindspot(data, "rouge", **settings)


def _compute(case: Case) -> None:
    name, _, call = case.given.partition(": ")
    module = evaluate.load(f"metrics/{name}")
    if name != "blindspot":
        module.compute(predictions=[], references=[])
        return
    kwargs: dict[str, Any] = {"predictions": list(GOLD), "references": list(REFS),
                              "metric": "rouge", "tests": "truncation", "progress": False}
    if call.startswith("predictions=[1"):
        kwargs["predictions"] = [1, 2, 3]
    elif call.startswith("predictions with None"):
        kwargs["predictions"][1] = None
    elif call.startswith("references"):
        kwargs["references"][2] = 5
    else:
        key, _, value = call.partition("=")
        kwargs[key] = ast.literal_eval(value)
    module.compute(**kwargs)


@pytest.mark.parametrize("case", TABLE, ids=lambda c: f"{c.entry}|{c.given}")
def test_bad_input_table(case: Case, folder: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    if isinstance(case.exit, int):
        result = CliRunner().invoke(app, _cli_args(case, folder, out))
        stderr = " ".join(result.stderr.split())
        assert result.exit_code == case.exit, result.output
        # an uncaught exception also exits 1 under CliRunner: it must have been a clean exit
        assert result.exception is None or isinstance(result.exception, SystemExit), \
            result.exception
        assert "Traceback" not in result.output
        assert case.message in stderr, result.output
        if case.exit == 1 and "Invalid value" not in stderr:  # (click's own usage box)
            # one paragraph after "error: ", and nothing else but progress bars
            lines = [line for line in re.split(r"[\r\n]+", PROGRESS.sub("", result.stderr))
                     if line.strip()]
            assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
            assert not (out / "results.json").exists() and not (out / "out.jsonl").exists()
        return
    with pytest.raises(case.exit) as raised:
        if case.entry == "compute":
            _compute(case)
        else:
            _api_call(case, folder, out)
    assert case.message in str(raised.value)
    assert not (out / "results.json").exists()


WRONG_COLUMNS = ("wrong.jsonl: metric 'rouge.rougeL' needs references, and the data has no "
                 "references column (its columns: text, ref). Name the column that holds them "
                 "with --references-column ref (from Python: columns={'references': 'ref'}); "
                 "nothing was run")


@pytest.fixture(scope="module")
def wrong_columns(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A jsonl whose references sit in a column the run does not look for (``ref``)."""
    path = tmp_path_factory.mktemp("wrong-columns") / "wrong.jsonl"
    path.write_bytes(_jsonl([{"text": g, "ref": r} for g, r in zip(GOLD, REFS, strict=True)]))
    return path


def test_wrong_columns_stop_before_any_work_and_leave_the_earlier_report(
        wrong_columns: Path, tmp_path: Path) -> None:
    """The issue's newcomer: text/ref columns, rouge: exit 1 with one line naming the file, the
    metric, the missing column and the flag, before anything is perturbed, scored or written
    (the earlier report in --out is byte for byte what it was, no run state is made)."""
    out = tmp_path / "report"
    out.mkdir()
    earlier = {"results.json": b'{"earlier": true}\n', "report.md": b"# the earlier run\n"}
    for name, content in earlier.items():
        (out / name).write_bytes(content)
    result = CliRunner().invoke(app, ["run", "--data", str(wrong_columns), "--task",
                                      "summarization", "--metrics", "rouge", "--tests",
                                      "truncation", "--out", str(out)])
    assert result.exit_code == 1, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    lines = [line for line in PROGRESS.sub("", result.stderr).splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0] == f"error: {str(wrong_columns.parent)}/{WRONG_COLUMNS}"
    assert "perturbing" not in result.stderr and "scoring" not in result.stderr
    assert sorted(p.name for p in out.iterdir()) == sorted(earlier)
    assert all((out / name).read_bytes() == content for name, content in earlier.items())
    named = CliRunner().invoke(app, ["run", "--data", str(wrong_columns), "--metrics", "rouge",
                                     "--tests", "truncation", "--seeds", "1",
                                     "--references-column", "ref", "--out", str(tmp_path / "ok")])
    assert named.exit_code == 0, named.output  # the flag the message names is the fix


@pytest.mark.parametrize("protocol", ["rank", "deviation", "search", "checkup"])
def test_every_gold_data_protocol_checks_the_columns_through_the_one_door(
        protocol: str, wrong_columns: Path, tmp_path: Path) -> None:
    """``Protocol.run`` checks before ``execute``: every protocol over gold data, from every
    entry (the CLI, ``run_blindspot``, ``compute()``, the Space's worker all call it). The
    search scores against the gold where the data has no references (its objective): there a
    metric that needs the source (PARENT) finds the column missing."""
    metric = "parent" if protocol == "search" else "rouge"
    request = ProtocolRequest(str(wrong_columns), metric, tests="truncation", seeds=[1],
                              out=tmp_path / "out", progress=False)
    with pytest.raises(BlindspotInputError) as raised:
        get_protocol(protocol).run(request)
    if metric == "rouge":
        assert str(raised.value).endswith(WRONG_COLUMNS)
    else:
        assert "wrong.jsonl: metric 'parent.parent' needs source, and the data has no source column " \
               "(its columns: text, ref)" in str(raised.value)
    assert not (tmp_path / "out").exists()


def test_compute_with_wrong_columns_raises_the_same_line(wrong_columns: Path) -> None:
    with pytest.raises(BlindspotInputError) as raised:
        evaluate.load("metrics/blindspot").compute(data=str(wrong_columns), metric="rouge",
                                                   tests="truncation", progress=False)
    assert str(raised.value).endswith(WRONG_COLUMNS)


def test_a_misspelt_metric_in_compute_is_one_error_not_our_traceback() -> None:
    """From Python, ``compute(metric="rogue")`` raises what the command line prints: one
    BlindspotInputError with the did-you-mean, whose traceback holds the caller's frame and
    compute's own, none of the checks' frames (it was 27 lines through them) and no chained
    error."""
    module = evaluate.load(str(module_path("blindspot")))
    with pytest.raises(BlindspotInputError) as raised:
        module.compute(data="demo", metric="rogue", tests="truncation")
    assert str(raised.value).startswith("unknown metric 'rogue'; valid metrics: bartscore, ")
    assert str(raised.value).endswith("; did you mean 'rouge'?")
    frames = traceback.extract_tb(raised.tb)
    assert [f.name for f in frames] == [
        "test_a_misspelt_metric_in_compute_is_one_error_not_our_traceback", "compute"]
    assert raised.value.__suppress_context__ and raised.value.__cause__ is None


def test_a_hub_id_without_network_is_one_line_at_once(monkeypatch: pytest.MonkeyPatch,
                                                      tmp_path: Path) -> None:
    """Online mode and a Hub that does not answer (a closed port on 127.0.0.1 as its endpoint):
    one line that says so and what to do, exit 1, without huggingface_hub's five retries
    (about 26 s, five tracebacks) and with its closing quote ('demo')."""
    import huggingface_hub.constants

    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(huggingface_hub.constants, "ENDPOINT", f"http://127.0.0.1:{port}")
    started = time.monotonic()
    result = CliRunner().invoke(app, ["run", "--data", "my-org/my-summaries", "--split", "test",
                                      "--metrics", "rouge", "--tests", "truncation", "--out",
                                      str(tmp_path / "hub_report")])
    assert time.monotonic() - started < 20  # not 26 s of retries
    assert result.exit_code == 1
    assert result.stderr.splitlines() == [
        f"error: 'my-org/my-summaries' looks like a Hugging Face Hub dataset id, and the Hub "
        f"cannot be reached (127.0.0.1:{port}: Connection refused). Pass a local "
        f"jsonl/json/csv/parquet file or 'demo' instead; a Hub dataset already in the cache "
        f"loads with HF_HUB_OFFLINE=1"]
    assert not (tmp_path / "hub_report").exists()


def test_an_error_message_keeps_its_closing_quote() -> None:
    assert message(ValueError("pass a file or 'demo'")) == "pass a file or 'demo'"
    assert message(KeyError("unknown test 'x'")) == "unknown test 'x'"  # not KeyError's repr


def test_an_input_error_says_where_and_what_to_do() -> None:
    error = BlindspotInputError("not valid JSON", file="rows.jsonl", line=4,
                                fix="Each line must hold one JSON object")
    assert str(error) == "rows.jsonl, line 4: not valid JSON. Each line must hold one JSON object"
    assert isinstance(error, ValueError)
    placed = BlindspotInputError("1 row(s) are not text", row=2, field="gold").in_file("a.csv")
    assert str(placed) == "a.csv, row 2, field 'gold': 1 row(s) are not text"
    import pickle

    assert str(pickle.loads(pickle.dumps(placed))) == str(placed)


def test_a_bad_row_refuses_the_whole_file_and_a_good_file_keeps_its_order(folder: Path,
                                                                           tmp_path: Path) -> None:
    """Nothing is silently dropped: one null row among good ones refuses the file (no output
    at all); a good file comes out with every row, in the file's order."""
    out = tmp_path / "out.jsonl"
    refused = CliRunner().invoke(app, ["perturb", str(folder / "null_gold.jsonl"), "--test",
                                       "truncation", "--level", "0.5", "-o", str(out)])
    assert refused.exit_code == 1 and not out.exists()
    shuffled = tmp_path / "shuffled.jsonl"
    order = [2, 0, 1]
    shuffled.write_bytes(_jsonl([_rows(GOLD)[i] for i in order]))
    done = CliRunner().invoke(app, ["perturb", str(shuffled), "--test", "truncation", "--level",
                                    "0.5", "-o", str(out)])
    assert done.exit_code == 0, done.output
    written = read_table(out)
    assert written["id"] == [f"r{i}" for i in order]
    assert written["gold"] == [GOLD[i] for i in order]


def test_a_streamed_run_refuses_a_bad_row_after_the_first_chunk(folder: Path,
                                                                tmp_path: Path) -> None:
    """Row 3 is in the second chunk of 2: the run stops there with its row number, writes no
    report and returns exit status 1."""
    result = CliRunner().invoke(app, ["run", "--data", str(folder / "mixed_gold.jsonl"),
                                      "--metrics", "rouge", "--tests", "truncation", "--seeds",
                                      "1", "--chunk-size", "2", "--out", str(tmp_path / "r")])
    assert result.exit_code == 1
    assert "mixed_gold.jsonl, row 3, field 'gold'" in " ".join(result.stderr.split())
    assert not (tmp_path / "r" / "results.json").exists()


@pytest.mark.parametrize("seeds, expected", [("12", [12]), ("1,2", [1, 2]), (3, [3]),
                                             ([4, 5], [4, 5])])
def test_seeds_mean_the_same_in_compute_as_on_the_command_line(seeds: Any,
                                                               expected: list[int]) -> None:
    out = evaluate.load("metrics/blindspot").compute(
        predictions=GOLD, references=REFS, metric="rouge", tests="word_swap", seeds=seeds,
        progress=False)
    assert out["results"]["config"]["seeds"] == expected


@pytest.mark.parametrize("results, code, errored", [
    # rank / preference: metrics under datasets; one test in error is enough
    ({"datasets": {"d": {"metrics": {"rouge.rougeL": {"error": None, "tests": {
        "truncation": {"status": "fail"}, "negation": {"status": "error"}}}}}}},
     2, ["d: rouge.rougeL / negation"]),
    ({"datasets": {"d": {"metrics": {"rouge.rougeL": {"error": None, "tests": {
        "truncation": {"status": "fail"}, "negation": {"status": "pass"}}}}}}}, 0, []),
    # correlation / deviation: metrics at the top; a metric that could not score
    ({"metrics": {"chrf": {"error": "some scores are NaN"}, "ter": {"error": None}}}, 2, ["chrf"]),
    # search: no metric entries of this kind (its config names the metric as a mapping)
    ({"config": {"metric": {"name": "chrf"}}, "summary": {"metrics": {}}}, 0, []),
])
def test_the_exit_code_of_a_finished_run(results: dict, code: int, errored: list[str]) -> None:
    from blindspot.exit_codes import ended_in_error, run_exit_code

    assert run_exit_code(results) == code
    assert ended_in_error(results) == errored
