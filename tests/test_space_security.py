"""The public Space under hostile input, driven over HTTP on loopback (issue 16).

One app process for the module (the real ``blindspot space`` command, small operator limits
given as flags), talked to with ``gradio_client`` as any visitor could, and with plain HTTP for
what a client library would not send. Every hostile value of :data:`SPACE_TABLE` must be refused
with a clear message, and the file system is checked around each call: nothing new anywhere
under the test's root except inside the visitor's session folder and gradio's own upload cache
(where every upload lands first, by gradio's design); the ``state_dir`` target stays absent; no
response ever holds a line of ``/etc/passwd``. The limits of a session (runs, run time) and the
error messages' hiding of server folders are checked on the workspace itself.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from gradio_client import Client, handle_file
from gradio_client.exceptions import AppError
from space_support import served_space

from blindspot.space.limits import SpaceLimits
from blindspot.space.session import RunLimitError, Workspace, session_key

#: the operator's limits for this module (flags of `blindspot space`)
MAX_ROWS, MAX_UPLOAD_MB, MAX_RUNS = 20, 0.2, 1
PASSWD_LINES = [line for line in Path("/etc/passwd").read_text().splitlines() if line.strip()]
#: the stress tab's inputs as the page leaves them (the demo, rouge, truncation, seed 1)
STRESS = {"kind_in": "demo", "task_in": "summarization", "built_in": None, "upload_in": None,
          "extra_in": "", "tests_in": ["truncation"], "seeds_in": "1", "protocol_in": "rank",
          "options_in": "", "file_in": None}
SEARCH = {"kind_in": "demo", "task_in": "translation", "built_in": None, "upload_in": None,
          "metric_in": "chrf", "panel_in": ["bleu"], "noise_in": 0.1, "calls_in": 300,
          "seconds_in": 30, "seed_in": 0, "limit_in": 1}

CHECKUP = {"kind_in": "demo", "task_in": "translation", "built_in": None, "upload_in": None,
           "metric_in": "chrf", "rows_in": 4}


@dataclass
class Space:
    """The served app and the folders it may write to."""

    url: str
    root: Path       #: everything the app process could write lies under it
    tmp: Path        #: its TMPDIR: the workspace root is made there
    uploads: Path    #: gradio's upload cache (GRADIO_TEMP_DIR)
    target: Path     #: the state_dir a hostile visitor names

    def workspace(self) -> Path:
        (root,) = self.tmp.glob("blindspot-space-*")
        return root

    def session_folder(self, client: Client) -> Path:
        return self.workspace() / session_key(client.session_hash)


@pytest.fixture(scope="module")
def space(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Space]:
    root = tmp_path_factory.mktemp("hostile")
    for name in ("tmp", "gradio", "cwd", "datasets"):
        (root / name).mkdir()
    args = ["--datasets-dir", str(root / "datasets"), "--max-rows", str(MAX_ROWS),
            "--max-upload-mb", str(MAX_UPLOAD_MB), "--max-runs", str(MAX_RUNS)]
    env = {"TMPDIR": str(root / "tmp"), "GRADIO_TEMP_DIR": str(root / "gradio")}
    with served_space(args, root / "cwd", root / "space.log", env) as url:
        yield Space(url, root, root / "tmp", root / "gradio", root / "target")


@pytest.fixture
def client(space: Space) -> Iterator[Client]:
    """A fresh visitor (its own gradio session)."""
    visitor = Client(space.url, verbose=False)
    yield visitor
    _leave(visitor)


def _leave(visitor: Client) -> None:
    """End the visitor's session without waiting: gradio_client's ``close`` waits a second for
    its heartbeat thread, which notices only at its stream's next message (35 tests here)."""
    threading.Thread(target=visitor.close, daemon=True).start()


def _files(root: Path) -> set[Path]:
    return {p for p in root.rglob("*") if p.is_file()}


def _outside_the_session(space: Space, client: Client, before: set[Path]) -> set[Path]:
    """Files that appeared since ``before`` outside the session folder and the upload cache."""
    session = space.session_folder(client)
    return {p for p in _files(space.root) - before
            if not (p.is_relative_to(session) or p.is_relative_to(space.uploads)
                    or p == space.root / "space.log")}


def _no_passwd(text: str) -> None:
    leaked = [line for line in PASSWD_LINES if line in text]
    assert not leaked, f"a line of /etc/passwd reached the visitor: {leaked[0]!r}"


def _write(folder: Path, name: str, data: bytes) -> str:
    path = folder / name
    path.write_bytes(data)
    return handle_file(str(path))


def _rows(count: int) -> bytes:
    return "".join(f'{{"gold": "Text number {i}.", "id": {i}}}\n' for i in range(count)).encode()


#: files a visitor uploads: name -> content (written on the client side, then uploaded)
FILES: dict[str, bytes] = {
    "evil.py": b"import os\nos.system('cat /etc/passwd')\n",
    "script.csv": b"#!/bin/sh\ncat /etc/passwd\n",
    "rows.jsonl": _rows(MAX_ROWS + 1),
    "big.csv": b"gold,id\n" + b"x" * 250_000 + b",1\n",
    "fake.parquet": b"gold\nnot parquet\n",
    "scores.csv": b"#!/usr/bin/env python\nprint(open('/etc/passwd').read())\n",
}

#: entry point x hostile input -> the message fragment the visitor gets (values naming a file of
#: FILES are uploaded first). The same table is in the report of issue 16.
SPACE_TABLE = [
    ("stress options", {"protocol_in": "deviation", "options_in": "human_scores=/etc/passwd"},
     "protocol option 'human_scores' names a file: upload it in the 'Protocol file' box"),
    ("stress options", {"protocol_in": "deviation",
                        "options_in": "human_scores=../../../../etc/passwd"},
     "protocol option 'human_scores' names a file"),
    ("stress options", {"protocol_in": "correlation", "kind_in": "upload",
                        "options_in": "references=/etc/passwd"},
     "protocol option 'references' names a file"),
    ("stress options", {"options_in": "state_dir={target}"},
     "protocol option 'state_dir' cannot be set from this Space (it is a server or engine "
     "setting); options you can set here: bootstrap_seed, levels, tolerance, worst_examples"),
    ("stress options", {"options_in": "engine=ray"}, "'engine' cannot be set from this Space"),
    ("stress options", {"options_in": "address=127.0.0.1:1"},
     "'address' cannot be set from this Space"),
    ("stress options", {"options_in": "chunk_size=5"}, "'chunk_size' cannot be set from this"),
    ("stress options", {"options_in": "batch_size=100000000"},
     "'batch_size' cannot be set from this Space"),
    ("stress options", {"options_in": "colour=red"},
     "'colour' is not an option of the rank protocol; valid options: bootstrap_seed, levels, "
     "tolerance, worst_examples"),
    ("stress options", {"options_in": "tolerance=-1"},
     "tolerance=-1 is not accepted by this Space: tolerance must be a number >= 0"),
    ("stress options", {"protocol_in": "preference", "kind_in": "upload",
                        "options_in": "combine_with=bertscore@/etc"},
     "model '/etc' of metric spec 'bertscore@/etc' is not allowed here"),
    ("stress metric specs", {"extra_in": "rouge@/etc"},
     "model '/etc' of metric spec 'rouge@/etc' is not allowed here; name an offline model: "
     "minilm, smollm2"),
    ("stress metric specs", {"extra_in": "./my_metric/"}, "bad metric spec './my_metric/'"),
    ("stress metric specs", {"extra_in": "bertscore.f1@../../models"},
     "model '../../models' of metric spec"),
    ("stress metric specs", {"extra_in": "bertscore.f1@roberta-large"},
     "Hub models and local paths are off on this Space: its operator can allow Hub ids with "
     "`blindspot space --allow-hub-models`"),
    ("stress data upload", {"kind_in": "upload", "upload_in": "evil.py"}, "Invalid file type"),
    ("stress data upload", {"kind_in": "upload", "upload_in": "script.csv"},
     "script.csv is a script, not a data file"),
    ("stress data upload", {"kind_in": "upload", "upload_in": "fake.parquet"},
     "fake.parquet is not a Parquet file"),
    ("stress data upload", {"kind_in": "upload", "upload_in": "rows.jsonl"},
     f"rows.jsonl has {MAX_ROWS + 1} rows; this Space reads at most {MAX_ROWS} rows per upload"),
    ("stress data upload", {"kind_in": "upload", "upload_in": "big.csv"},
     f"big.csv is 0.3 MB; uploads must be smaller than {MAX_UPLOAD_MB} MB on this Space"),
    ("stress protocol file", {"protocol_in": "deviation", "file_in": "evil.py"},
     "Invalid file type"),
    ("stress protocol file", {"protocol_in": "deviation", "file_in": "scores.csv"},
     "scores.csv is a script, not a data file"),
    ("stress built dataset", {"kind_in": "built dataset", "built_in": "../../etc"},
     "not in the list of choices"),
    ("search target", {"metric_in": "bertscore.f1@/etc"}, "model '/etc' of metric spec"),
    ("search target", {"metric_in": "./my_metric/"}, "bad metric spec './my_metric/'"),
    ("search panel", {"panel_in": ["bleu", "bertscore@roberta-large"]},
     "Hub models and local paths are off on this Space"),
    ("search data upload", {"kind_in": "upload", "upload_in": "script.csv"},
     "script.csv is a script, not a data file"),
    ("checkup metric", {"metric_in": "rouge@/etc"},
     "model '/etc' of metric spec 'rouge@/etc' is not allowed here"),
    ("checkup metric", {"metric_in": "./my_metric/"}, "bad metric spec './my_metric/'"),
    ("checkup metric", {"metric_in": "bertscore.f1@roberta-large"},
     "Hub models and local paths are off on this Space"),
    ("checkup rows", {"rows_in": MAX_ROWS + 1},
     f"Value {MAX_ROWS + 1} is greater than maximum value {MAX_ROWS}"),
    ("checkup data upload", {"kind_in": "upload", "upload_in": "script.csv"},
     "script.csv is a script, not a data file"),
    ("checkup data upload", {"kind_in": "upload", "upload_in": "rows.jsonl"},
     f"rows.jsonl has {MAX_ROWS + 1} rows; this Space reads at most {MAX_ROWS} rows per upload"),
    ("checkup built dataset", {"kind_in": "built dataset", "built_in": "../../etc"},
     "not in the list of choices"),
]
ENDPOINTS = {"stress": ("/stress_test", STRESS), "search": ("/search", SEARCH),
             "checkup": ("/checkup", CHECKUP)}


@pytest.mark.parametrize("entry, hostile, message", SPACE_TABLE,
                         ids=[f"{e}: {list(h.values())[-1]}" for e, h, _ in SPACE_TABLE])
def test_hostile_input_is_refused_and_writes_nothing_outside_the_session(
        space: Space, client: Client, tmp_path: Path, entry: str, hostile: dict,
        message: str) -> None:
    api, defaults = ENDPOINTS[entry.split()[0]]
    inputs = dict(defaults)
    for key, value in hostile.items():
        if isinstance(value, str) and value in FILES:
            value = _write(tmp_path, value, FILES[value])
        elif isinstance(value, str):
            value = value.format(target=space.target)
        inputs[key] = value
    before = _files(space.root)
    with pytest.raises(AppError) as refused:
        client.predict(**inputs, api_name=api)
    text = " ".join(str(refused.value).split())
    assert message in text
    _no_passwd(text)
    assert str(space.tmp) not in text and str(space.uploads) not in text  # no server folder
    assert _outside_the_session(space, client, before) == set()
    assert not space.target.exists()


@pytest.mark.parametrize("path", ["/etc/passwd", "{uploads}/../../../../etc/passwd"])
def test_a_server_path_that_was_never_uploaded_is_refused(space: Space, path: str) -> None:
    """What a client library would not send: a file input naming a server path directly."""
    data = {**STRESS, "kind_in": "upload", "upload_in": {
        "path": path.format(uploads=space.uploads), "meta": {"_type": "gradio.FileData"},
        "orig_name": "rows.csv"}}
    order = ("kind_in", "task_in", "built_in", "upload_in", "hyp", "ref", "src", "idc",
             "picked", "extra_in", "tests_in", "seeds_in", "protocol_in", "options_in",
             "file_in", "runs")
    values = {**data, "hyp": "(none)", "ref": "(none)", "src": "(none)", "idc": "(none)",
              "picked": ["rouge"], "runs": None}
    before = _files(space.root)
    call = f"{space.url}gradio_api/call/stress_test"
    event = httpx.post(call, json={"data": [values[k] for k in order]}).json()["event_id"]
    stream = httpx.get(f"{call}/{event}", timeout=60).text
    assert "event: error" in stream and "was not uploaded by a user" in stream
    _no_passwd(stream)
    assert {p for p in _files(space.root) - before if p != space.root / "space.log"} == set()
    for served in ("/etc/passwd", str(space.workspace())):
        response = httpx.get(f"{space.url}gradio_api/file={served}")
        assert response.status_code == 403
        _no_passwd(response.text)


def test_a_session_runs_its_limit_while_the_queue_serves_other_visitors(space: Space) -> None:
    first, second = Client(space.url, verbose=False), Client(space.url, verbose=False)
    try:
        started = time.monotonic()
        job = first.submit(**STRESS, api_name="/stress_test")
        diff = second.predict("The cat sat on the mat today.", "", "summarization",
                              "truncation", "0.5", 1, api_name="/perturb")
        served = time.monotonic() - started
        status = job.result()[0]
        finished = time.monotonic() - started
        assert "finished" in status and "run 1" in status
        assert "The cat sat" in str(diff) and served < finished  # not queued behind the run
        assert (space.session_folder(first) / "runs" / "1" / "results.json").is_file()
        with pytest.raises(AppError) as refused:
            first.predict(**STRESS, api_name="/stress_test")
        assert (f"this session has used its {MAX_RUNS} run, the limit of this Space; download "
                "the reports you need") in str(refused.value)
        assert not (space.session_folder(first) / "runs" / "2").exists()
        with pytest.raises(AppError, match=f"has used its {MAX_RUNS} run"):
            first.predict(**SEARCH, api_name="/search")  # the limit counts every run tab
        # another visitor still gets its run
        assert "finished" in second.predict(**SEARCH, api_name="/search")[0]
    finally:
        _leave(first)
        _leave(second)


def test_a_checkup_through_the_page_shows_verdicts_and_anchors_and_counts_as_a_run(
        space: Space, client: Client) -> None:
    status, verdicts, anchors, report, files = client.predict(**CHECKUP, api_name="/checkup")
    assert status == "Check-up of **chrf** (done)."
    assert [row[:2] for row in verdicts["data"]] == [
        ["Batch and order invariance", "pass"], ["Determinism across processes", "pass"],
        ["Long-input truncation", "pass"], ["Normalisation invariance", "fail"],
        ["Reference handling", "pass"], ["Sanity anchors (score units)", "info"]]
    means = {row[0]: row[1] for row in anchors["data"]}
    assert means["reference"] == 100.0 and means["empty"] == 0.0
    assert "## Sanity anchors (score units): **info**" in report
    assert sorted(Path(f).name for f in files) == ["report.md", "results.json"]
    assert (space.session_folder(client) / "runs" / "1" / "results.json").is_file()
    with pytest.raises(AppError, match=f"has used its {MAX_RUNS} run"):
        client.predict(**CHECKUP, api_name="/checkup")


def test_the_page_states_the_operators_limits(space: Space) -> None:
    config = httpx.get(f"{space.url}config").json()
    intro = next(c["props"]["value"] for c in config["components"]
                 if c.get("props", {}).get("elem_id") == "space-intro")
    assert (f"uploads under {MAX_UPLOAD_MB} MB and up to {MAX_ROWS} rows (.jsonl, .json, .csv, "
            f".parquet); {MAX_RUNS} run per session, each stopped after 900 s; metrics with "
            "offline models only") in intro


def test_the_page_lists_only_the_options_a_visitor_may_set(space: Space, client: Client) -> None:
    from blindspot.protocols.interface import PROTOCOLS

    for protocol in ("rank", "deviation", "correlation", "preference"):
        hint = str(client.predict(protocol, None, "", api_name="/on_protocol")[0])
        for spec in PROTOCOLS.get(protocol).options:
            shown = f"- `{spec.name}`: " in hint
            assert shown == (spec.visitor_safe and not spec.file), (protocol, spec.name)
    hint = str(client.predict("rank", None, "", api_name="/on_protocol")[0])
    assert "- `tolerance`: a mean score may rise by this much and still count as a decrease " \
           "(a number \\>= 0; default 1e-05)" in hint


# -- the workspace's limits, without a server -----------------------------------------------------

def _long_request(out: Path) -> dict:
    return {"protocol": "rank", "data": "demo", "task": "summarization", "columns": None,
            "metrics": ["rouge"], "tests": ["fluency"], "seeds": [1, 2, 3, 4, 5],
            "out": str(out), "options": {}}


def test_a_run_past_the_time_limit_is_stopped_with_a_clear_message(tmp_path: Path) -> None:
    space = Workspace(tmp_path / "space", SpaceLimits(run_seconds=3))
    folder = space.new_run_folder("s")
    started = time.monotonic()
    assert space.run_to_end("s", _long_request(folder), folder, None) == "failed"
    assert time.monotonic() - started < 60
    assert space.failure("s") == ("the run was stopped after 3 s, the time limit of this Space; "
                                  "pick fewer rows, tests or metrics, or run `blindspot run` "
                                  "locally")
    assert not (folder / "results.json").exists()


def test_runs_per_session_are_counted_per_session(tmp_path: Path) -> None:
    space = Workspace(tmp_path, SpaceLimits(max_runs=2))
    assert [space.new_run_folder("a").name for _ in range(2)] == ["1", "2"]
    with pytest.raises(RunLimitError, match="this session has used its 2 runs"):
        space.new_run_folder("a")
    assert space.new_run_folder("b").name == "1"


def test_a_failure_shows_the_error_without_server_folders_or_the_log(tmp_path: Path) -> None:
    space = Workspace(tmp_path / "space")
    folder = space.new_run_folder("s")
    missing = space.folder("s", "uploads") / "gone.jsonl"
    request = {**_long_request(folder), "tests": ["truncation"], "seeds": [1],
               "data": str(missing)}
    assert space.run_to_end("s", request, folder, None) == "failed"
    shown = space.failure("s")
    assert "uploads/gone.jsonl" in shown and str(tmp_path) not in shown
    assert "Traceback" not in shown and "Traceback" in (folder / "run.log").read_text()


def test_the_operator_sets_the_limits_with_environment_variables() -> None:
    from blindspot.space.limits import limits_from_env

    assert limits_from_env({}) == SpaceLimits()
    chosen = limits_from_env({"BLINDSPOT_SPACE_ALLOW_HUB_MODELS": "1",
                              "BLINDSPOT_SPACE_RUN_SECONDS": "60",
                              "BLINDSPOT_SPACE_MAX_UPLOAD_MB": "5"})
    assert chosen == SpaceLimits(allow_hub_models=True, run_seconds=60.0, max_upload_mb=5.0)
    assert limits_from_env({"BLINDSPOT_SPACE_ALLOW_HUB_MODELS": "no"}).allow_hub_models is False
    with pytest.raises(ValueError, match=r"BLINDSPOT_SPACE_MAX_RUNS='0' must be above 0"):
        limits_from_env({"BLINDSPOT_SPACE_MAX_RUNS": "0"})
    with pytest.raises(ValueError, match=r"BLINDSPOT_SPACE_MAX_ROWS='2.5' must be a whole number"):
        limits_from_env({"BLINDSPOT_SPACE_MAX_ROWS": "2.5"})
