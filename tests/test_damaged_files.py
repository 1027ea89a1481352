"""Damaged files on disk: caches heal themselves, the user's run state is never touched.

Every case writes garbage bytes into, or truncates, a real file of its kind and goes through the
real code path: the store itself, then ``blindspot run`` (a fresh process where the process-wide
parser and score cache must open the damaged files, the CLI in-process for the run state).
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from engine_support import write_cnndm_gold
from typer.testing import CliRunner

from blindspot.cli import app
from blindspot.exit_codes import ExitCode
from blindspot.sqlite_utils import DamagedStoreError, KeyValueStore

#: one xdist group: its module fixtures (the clean run every damaged one is compared with)
#: are set up once, not once per worker
pytestmark = pytest.mark.xdist_group("damaged_files")

ROOT = Path(__file__).resolve().parents[1]
GARBAGE = b"this is not a database, just bytes a disk or a person left here\n" * 64
RUN_ARGS = ["--metrics", "chrf", "--tests", "truncation,verb_lemmatization", "--seeds", "1"]


def filled_store(path: Path, rows: int = 3000, derived: bool = True) -> KeyValueStore:
    store = KeyValueStore(path, "t_v1", derived=derived)
    store.put_many((f"key-{i}", f"value {i} " * 8) for i in range(rows))
    return store


def closed(path: Path) -> None:
    """Checkpoint the WAL into the file, as a finished process leaves it."""
    con = sqlite3.connect(path)
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    con.close()


# -- the store ------------------------------------------------------------------------------------

def test_healthy_store_is_left_alone(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    path = tmp_path / "c.sqlite"
    filled_store(path, rows=10)
    closed(path)
    again = KeyValueStore(path, "t_v1", derived=True)
    assert again.get_many(["key-3"]) == {"key-3": "value 3 " * 8}
    assert capsys.readouterr().err == ""
    assert not list(tmp_path.glob("*corrupt*"))


@pytest.mark.parametrize("damage", ["garbage", "truncated", "short", "schema"])
def test_damaged_cache_is_moved_aside_with_one_warning(tmp_path: Path, damage: str,
                                                       capsys: pytest.CaptureFixture) -> None:
    path = tmp_path / "scores.sqlite"
    filled_store(path)
    closed(path)
    if damage == "garbage":
        path.write_bytes(GARBAGE)
    elif damage == "truncated":
        os.truncate(path, path.stat().st_size // 2)
    elif damage == "short":
        os.truncate(path, 40)
    else:
        path.unlink()
        con = sqlite3.connect(path)
        con.execute("CREATE TABLE t_v1 (k INTEGER, v BLOB)")
        con.commit()
        con.close()
    before = path.read_bytes()
    store = KeyValueStore(path, "t_v1", derived=True)
    warning = capsys.readouterr().err
    assert warning.count("warning: ") == 1 and str(path) in warning
    assert "scores.sqlite.corrupt-1" in warning
    assert (tmp_path / "scores.sqlite.corrupt-1").read_bytes() == before  # kept, not deleted
    assert len(store) == 0
    store.put_many([("a", "1")])
    assert store.get_many(["a", "key-1"]) == {"a": "1"}
    KeyValueStore(path, "t_v1", derived=True)  # the healed file opens silently
    assert capsys.readouterr().err == ""


def test_second_damage_gets_the_next_free_name(tmp_path: Path,
                                               capsys: pytest.CaptureFixture) -> None:
    path = tmp_path / "parses.sqlite"
    for _ in range(2):
        path.write_bytes(GARBAGE)
        KeyValueStore(path, "t_v1", derived=True)
    assert (tmp_path / "parses.sqlite.corrupt-1").is_file()
    assert (tmp_path / "parses.sqlite.corrupt-2").is_file()
    assert capsys.readouterr().err.count("warning: ") == 2


def test_damage_met_by_a_query_heals_once(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """A page garbled in the middle passes the checks on open; the first query that reads it
    heals the cache, once, and the query is answered from the fresh one."""
    path = tmp_path / "features.sqlite"
    filled_store(path)
    closed(path)
    size = path.stat().st_size
    with path.open("r+b") as handle:  # the last pages: the header and first leaves intact
        handle.seek(size - 4 * 4096)
        handle.write(b"\xff" * 4 * 4096)
    store = KeyValueStore(path, "t_v1", derived=True)
    assert capsys.readouterr().err == ""
    assert store.get_many([f"key-{i}" for i in range(3000)]) == {}
    warning = capsys.readouterr().err
    assert warning.count("warning: ") == 1 and str(path) in warning
    assert "malformed" in warning
    store.put_many([("b", "2")])
    assert store.get_many(["b"]) == {"b": "2"} and len(store) == 1
    assert capsys.readouterr().err == ""


def test_damaged_user_store_is_reported_and_untouched(tmp_path: Path) -> None:
    path = tmp_path / ".state" / "state.sqlite"
    path.parent.mkdir()
    path.write_bytes(GARBAGE)
    with pytest.raises(DamagedStoreError) as caught:
        KeyValueStore(path, "cells_v1", derived=False)
    message = str(caught.value)
    assert str(path) in message and "not an SQLite database" in message
    assert f"Delete {path.parent}" in message
    assert path.read_bytes() == GARBAGE
    assert not list(path.parent.glob("*.corrupt-*"))


# -- blindspot run --------------------------------------------------------------------------------

def cli_run(data: Path, out: Path, cache: Path) -> subprocess.CompletedProcess:
    """``blindspot run`` in a fresh process with its own cache folder."""
    env = {**os.environ, "BLINDSPOT_CACHE": str(cache), "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "blindspot.cli", "run", "--data", str(data),
                           *RUN_ARGS, "--out", str(out)], env=env, cwd=ROOT, text=True,
                          capture_output=True, timeout=600)


@pytest.fixture(scope="module")
def clean_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A run on 3 CNN/DM rows with a fresh cache: its data, report folder and cache."""
    root = tmp_path_factory.mktemp("clean")
    data = write_cnndm_gold(root / "gold.jsonl", 3)
    done = cli_run(data, root / "report", root / "cache")
    assert done.returncode == 0, done.stderr
    assert {"scores.sqlite", "parses.sqlite"} <= {p.name for p in (root / "cache").iterdir()}
    return {"data": data, "report": root / "report", "cache": root / "cache"}


def test_run_heals_damaged_caches_with_the_results_of_a_clean_run(
        clean_run: dict[str, Path], tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "scores.sqlite").write_bytes(GARBAGE)
    parses = cache / "parses.sqlite"
    shutil.copy(clean_run["cache"] / "parses.sqlite", parses)
    os.truncate(parses, parses.stat().st_size // 2)
    done = cli_run(clean_run["data"], tmp_path / "report", cache)
    assert done.returncode == 0, done.stderr
    warnings = [line for line in done.stderr.splitlines() if "warning: " in line]
    assert len(warnings) == 2, done.stderr
    assert any(str(cache / "scores.sqlite") in w and "not an SQLite database" in w
               for w in warnings)
    assert any(str(parses) in w and "truncated" in w for w in warnings)
    assert (cache / "scores.sqlite.corrupt-1").read_bytes() == GARBAGE
    assert (json.loads((tmp_path / "report" / "results.json").read_text())
            == json.loads((clean_run["report"] / "results.json").read_text()))


def test_run_refuses_a_damaged_run_state_and_leaves_it(clean_run: dict[str, Path],
                                                       tmp_path: Path) -> None:
    out = tmp_path / "report"
    shutil.copytree(clean_run["report"], out)
    state = out / ".state" / "state.sqlite"
    os.truncate(state, 50)
    before = state.read_bytes()
    result = CliRunner().invoke(app, ["run", "--data", str(clean_run["data"]), *RUN_ARGS,
                                      "--out", str(out)])
    assert result.exit_code == ExitCode.BAD_INPUT
    assert result.stderr.startswith("error: ") and "Traceback" not in result.output
    message = "".join(result.stderr.split())
    assert str(state) in message and f"Delete{state.parent}" in message
    assert state.read_bytes() == before
    assert not list(state.parent.glob("*.corrupt-*"))


def test_run_deletes_suites_saved_in_the_old_layout(clean_run: dict[str, Path],
                                                    tmp_path: Path) -> None:
    """A suite saved before one file per cell (a ``datasets`` folder) matches no run's key any
    more: the next run deletes it, and keeps its own suites."""
    out = tmp_path / "report"
    shutil.copytree(clean_run["report"], out)
    (results_file := out / "results.json").unlink()
    suites = out / ".state" / "suites"
    kept = sorted(p.name for p in suites.iterdir())
    old = suites / ("0" * 32)
    old.mkdir()
    (old / "dataset_info.json").write_text("{}", encoding="utf-8")
    (old / "data-00000-of-00001.arrow").write_bytes(b"old perturbed texts")
    result = CliRunner().invoke(app, ["run", "--data", str(clean_run["data"]), *RUN_ARGS,
                                      "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert not old.exists() and sorted(p.name for p in suites.iterdir()) == kept and kept
    assert (json.loads(results_file.read_text())
            == json.loads((clean_run["report"] / "results.json").read_text()))


def test_run_remakes_a_truncated_suite(clean_run: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "report"
    shutil.copytree(clean_run["report"], out)
    (results_file := out / "results.json").unlink()
    arrow = sorted((out / ".state" / "suites").glob("*/cell-*.arrow"))[0]
    half = arrow.stat().st_size // 2
    os.truncate(arrow, half)
    result = CliRunner().invoke(app, ["run", "--data", str(clean_run["data"]), *RUN_ARGS,
                                      "--out", str(out)])
    assert result.exit_code == 0, result.output
    message = "".join(result.stderr.split())
    assert message.count("warning:") == 1 and str(arrow.parent) in message
    aside = arrow.parent.with_name(arrow.parent.name + ".corrupt-1")
    assert (aside / arrow.name).stat().st_size == half  # kept as it was
    assert (json.loads(results_file.read_text())
            == json.loads((clean_run["report"] / "results.json").read_text()))
