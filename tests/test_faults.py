"""Faults of the machine x the command line and ``run_blindspot``: one line, an exit status, and
a state that resumes to the bytes of an uninterrupted run.

The table :data:`TABLE` is the contract, as the bad-input table is for bad input: each fault is
made for real (a small tmpfs mounted and filled, or, where mounting is not permitted, a
file-size limit; a real SIGINT to the process group, as Ctrl-C sends, and a real SIGTERM to a
real child process; a ``--num-proc`` worker process really killed with SIGKILL), then the run's
one line and exit status are checked, and the same command (or call) is run again where the run
stopped, to the bytes of the uninterrupted run's ``results.json``. Lexical metrics on the demo
data: ``chrf`` and ``words``, a user's function that can be held at a gate (``WORDS_GATE``) so
that a signal lands mid-run, however loaded the machine. ``FAULTS_TABLE=path`` writes each row's
figures there as JSON lines (what docs/reliability.md shows).
"""

from __future__ import annotations

import json
import os
import re
import resource
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path

import pytest

from blindspot.faults import OutOfSpaceError
from blindspot.protocols.rank import run_blindspot

TESTS = "truncation"
SEEDS = [1, 2]
#: the scoring cells of a run: 2 metrics x (the gold rows + 5 truncation levels)
CELLS = 12
#: the cells of ``words`` an interrupted run scores before it waits at the gate for its signal
GATE_PASSES = 2
WORDS = '''
import os
import time


def words(predictions):
    # with WORDS_GATE set, each call takes one pass from that folder (removing a file is atomic,
    # so whichever process scores takes it) and, with none left, waits for the test's signal
    gate = os.environ.get("WORDS_GATE")
    while gate and not any(_took(os.path.join(gate, name)) for name in sorted(os.listdir(gate))):
        time.sleep(0.05)
    return [float(len(p.split())) for p in predictions]


def _took(path):
    try:
        os.remove(path)
    except FileNotFoundError:
        return False
    return True
'''
#: the API run as a child process: a RunInterrupted is its one line and its exit status
API_SCRIPT = """
import sys
from blindspot.faults import RunInterrupted
from blindspot.protocols.rank import run_blindspot

try:
    run_blindspot("demo", sys.argv[1], task="summarization", tests=sys.argv[2], seeds=[1, 2],
                  out=sys.argv[3], progress=False)
except RunInterrupted as stop:
    print(stop, file=sys.stderr)
    sys.exit(stop.exit_code)
"""
INTERRUPTED = r"interrupted: (\d+) of 12 cells kept in {state}; run the same command to resume"
NO_SPACE = (r"no space left in {folder}\S* \([\d.]+ (bytes|KB|GB) free(, files limited to "
            r"[\d.]+ KB)?\) while writing .+ \(it "
            r"needs at least [\d.]+ (bytes|KB)\); (\d+ of 12 cells kept in {state}|every cell is "
            r"kept in {state}): free some space there or choose another folder, then run the "
            r"same command to resume")


@dataclass(frozen=True)
class Fault:
    """A row: a fault, the entry point it is driven through, the one line it must give
    (a regular expression; ``{state}``, ``{folder}``: the run's state folder, the full disk) and
    the exit status (the API: the child's, or 0 when the call returned, 1 when it raised
    :class:`OutOfSpaceError`)."""

    fault: str
    entry: str
    line: str
    code: int


CACHE_FULL = (r"warning: the cache {folder}/\S+\.sqlite cannot grow: its disk has [\d.]+ "
              r"(bytes|KB) left; going on without caching what does not fit \(the results are "
              r"the same\)\. Set BLINDSPOT_CACHE to a folder on a disk with room to move the cache")
WORKER_LOST = (r"warning: a --num-proc worker process died while perturbing demo-summarization "
               r"\(rows 1-30, [1-5] of 5 cells left\); perturbing them again with fresh workers")
#: the API's worker row runs as a user's program: run_blindspot with num_proc=2
WORKER_SCRIPT = """
import sys
from blindspot.protocols.rank import run_blindspot

run_blindspot("demo", sys.argv[1], task="summarization", tests=sys.argv[2], seeds=[1, 2],
              out=sys.argv[3], progress=False, num_proc=2)
"""

TABLE = [
    Fault("cache_disk_full", "cli", CACHE_FULL, 0),
    Fault("cache_disk_full", "api", CACHE_FULL, 0),
    Fault("output_disk_full", "cli", "error: " + NO_SPACE, 1),
    Fault("output_disk_full", "api", NO_SPACE, 1),
    Fault("report_disk_full", "api", NO_SPACE, 1),
    # interrupted twice, then resumed: the second run resumes the first's state
    Fault("sigint", "cli", INTERRUPTED, 130),
    Fault("sigterm", "cli", INTERRUPTED, 143),
    Fault("sigint", "api", INTERRUPTED, 130),
    Fault("sigterm", "api", INTERRUPTED, 143),
    Fault("worker_killed", "cli", WORKER_LOST, 0),
    Fault("worker_killed", "api", WORKER_LOST, 0),
]


@dataclass
class Outcome:
    """What a row gave: its one line, its exit status, the resumed run's results.json."""

    line: str
    code: int
    resumed: bytes
    seconds: float = 0.0
    disk: str = ""


# -- the runs -------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def words(tmp_path_factory: pytest.TempPathFactory) -> str:
    script = tmp_path_factory.mktemp("metric") / "words.py"
    script.write_text(WORDS, encoding="utf-8")
    return f"chrf,{script}:words"


@pytest.fixture(scope="module")
def uninterrupted(words: str, tmp_path_factory: pytest.TempPathFactory) -> bytes:
    """results.json of the run with room, never stopped (this process, the test's cache)."""
    out = tmp_path_factory.mktemp("uninterrupted")
    run_blindspot("demo", words, task="summarization", tests=TESTS, seeds=SEEDS, out=out,
                  progress=False)
    return (out / "results.json").read_bytes()


def _command(metrics: str, out: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "blindspot.cli", "run", "--task", "summarization", "--data",
            "demo", "--metrics", metrics, "--tests", TESTS, "--seeds", "1,2", "--out", str(out),
            *extra]


def _env(cache: Path, gate: Path | None = None) -> dict[str, str]:
    env = dict(os.environ, BLINDSPOT_CACHE=str(cache))
    env.pop("WORDS_GATE", None)
    return env if gate is None else {**env, "WORDS_GATE": str(gate)}


def _gate(folder: Path, passes: int) -> Path:
    """A gate that lets ``words`` score ``passes`` cells, then holds it (see :data:`WORDS`)."""
    folder.mkdir(parents=True, exist_ok=True)
    for number in range(passes):
        (folder / f"pass-{number}").touch()
    return folder


def _last_line(stderr: str) -> str:
    return stderr.strip().split("\n")[-1].split("\r")[-1]


def _lines(stderr: str, start: str) -> list[str]:
    return [part for line in stderr.split("\n") for part in line.split("\r")
            if part.startswith(start)]


def _cli(command: list[str], env: dict[str, str], limit: Callable[[], None] | None = None
         ) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=300,
                          preexec_fn=limit)


def _api(metrics: str, out: Path, **options: object) -> bytes:
    run_blindspot("demo", metrics, task="summarization", tests=TESTS, seeds=SEEDS, out=out,
                  progress=False, **options)
    return (out / "results.json").read_bytes()


# -- a full disk, for real ------------------------------------------------------------------------

class SmallDisk:
    """A folder on a disk of ``size`` bytes: a tmpfs mounted there (as root), else, where
    mounting is not permitted, a file-size limit (RLIMIT_FSIZE) of ``fsize`` on the processes
    that write there (then every file they write is limited, the run state's SQLite files and
    the cache's too: the cache alone, or the report alone, cannot be)."""

    def __init__(self, folder: Path, size: int, fsize: int) -> None:
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs",
                                  str(folder)], capture_output=True) if _may_mount() else None
        self.mode = "tmpfs" if mounted is not None and mounted.returncode == 0 else "fsize"
        self.size = size if self.mode == "tmpfs" else fsize

    def describe(self) -> str:
        kind = "tmpfs" if self.mode == "tmpfs" else "file-size limit (RLIMIT_FSIZE)"
        return f"{kind} of {self.size // 1024} KiB"

    def limit(self) -> Callable[[], None] | None:
        """What a child process runs before it starts: the file-size limit (fsize mode)."""
        if self.mode == "tmpfs":
            return None
        size = self.size
        return lambda: resource.setrlimit(resource.RLIMIT_FSIZE,
                                          (size, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))

    @contextmanager
    def here(self) -> Iterator[None]:
        """The limit on this process for the block (fsize mode; a tmpfs needs none)."""
        if self.mode == "tmpfs":
            yield
            return
        before = resource.getrlimit(resource.RLIMIT_FSIZE)
        resource.setrlimit(resource.RLIMIT_FSIZE, (self.size, before[1]))
        try:
            yield
        finally:
            resource.setrlimit(resource.RLIMIT_FSIZE, before)

    def make_room(self) -> None:
        """Room at last: the tmpfs grown to 64 MB (fsize mode: the limit is simply not set)."""
        if self.mode == "tmpfs":
            subprocess.run(["mount", "-o", "remount,size=64m", str(self.folder)], check=True)

    def close(self) -> None:
        if self.mode == "tmpfs":
            subprocess.run(["umount", "-l", str(self.folder)], check=True)


def _may_mount() -> bool:
    return os.geteuid() == 0 and os.environ.get("BLINDSPOT_FAULTS_DISK") != "fsize"


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Callable[[str, int], SmallDisk]]:
    made: list[SmallDisk] = []

    def make(name: str, size: int, fsize: int = 0) -> SmallDisk:
        made.append(SmallDisk(tmp_path / name, size, fsize))
        return made[-1]

    yield make
    for disk in made:
        disk.close()


def _fill(disk: SmallDisk, leave: int) -> None:
    """Fill the tmpfs but ``leave`` bytes (a cache that opens, then cannot grow)."""
    free = os.statvfs(disk.folder)
    (disk.folder / "filler").write_bytes(b"\0" * max(0, free.f_bavail * free.f_frsize - leave))


# -- the drivers, one per fault --------------------------------------------------------------------

def cache_disk_full(row: Fault, metrics: str, tmp_path: Path, small_disk: Callable[..., SmallDisk],
                    capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> Outcome:
    disk = small_disk("cache", 600 * 1024)
    if disk.mode != "tmpfs":
        pytest.skip("a file-size limit holds every file a process writes, not the cache's "
                    "alone: this row needs a tmpfs (run as root)")
    _fill(disk, 48 * 1024)
    out = tmp_path / "out"
    if row.entry == "cli":
        done = _cli(_command(metrics, out), _env(disk.folder))
        stderr, code = done.stderr, done.returncode
    else:
        monkeypatch.setenv("BLINDSPOT_CACHE", str(disk.folder))
        capfd.readouterr()
        _api(metrics, out)
        stderr, code = capfd.readouterr().err, 0
    warnings = _lines(stderr, "warning: the cache")
    assert len(warnings) == 1, stderr[-3000:]  # once, not once per cell
    return Outcome(warnings[0], code, (out / "results.json").read_bytes(),
                   disk=disk.describe())


def output_disk_full(row: Fault, metrics: str, tmp_path: Path,
                     small_disk: Callable[..., SmallDisk], capfd: pytest.CaptureFixture[str],
                     monkeypatch: pytest.MonkeyPatch) -> Outcome:
    disk = small_disk("out", 224 * 1024, fsize=64 * 1024)
    cache = tmp_path / "cache"
    command = _command(metrics, disk.folder)
    if row.entry == "cli":
        stopped = _cli(command, _env(cache), disk.limit())
        line, code = _last_line(stopped.stderr), stopped.returncode
        assert "Traceback" not in stopped.stderr and code == 1, stopped.stderr[-3000:]
    else:
        monkeypatch.setenv("BLINDSPOT_CACHE", str(cache))
        with pytest.raises(OutOfSpaceError) as raised, disk.here():
            _api(metrics, disk.folder)
        line, code = str(raised.value), 1
    _nothing_half_written(disk.folder)
    disk.make_room()
    if row.entry == "cli":
        resumed = _cli(command, _env(cache))
        assert resumed.returncode == 0, resumed.stderr[-3000:]
        result = (disk.folder / "results.json").read_bytes()
    else:
        result = _api(metrics, disk.folder)
    return Outcome(line, code, result, disk=disk.describe())


def report_disk_full(row: Fault, metrics: str, tmp_path: Path,
                     small_disk: Callable[..., SmallDisk], capfd: pytest.CaptureFixture[str],
                     monkeypatch: pytest.MonkeyPatch) -> Outcome:
    """The run state has room (``state_dir``), the report folder has not: every cell is kept,
    and no report file is half-written."""
    disk = small_disk("report", 24 * 1024)
    if disk.mode != "tmpfs":
        pytest.skip("a file-size limit holds the run state's files too, not the report's alone: "
                    "this row needs a tmpfs (run as root)")
    monkeypatch.setenv("BLINDSPOT_CACHE", str(tmp_path / "cache"))
    state = tmp_path / "state"
    with pytest.raises(OutOfSpaceError) as raised, disk.here():
        _api(metrics, disk.folder, state_dir=state)
    _nothing_half_written(disk.folder)
    disk.make_room()
    return Outcome(str(raised.value), 1, _api(metrics, disk.folder, state_dir=state),
                   disk=disk.describe())


def _nothing_half_written(folder: Path) -> None:
    """No temporary file is left, and a results.json there is whole JSON."""
    assert not list(folder.rglob("*.tmp")), list(folder.rglob("*.tmp"))
    if (folder / "results.json").exists():
        json.loads((folder / "results.json").read_text(encoding="utf-8"))


def _kept_cells(state: Path) -> int:
    try:
        with sqlite3.connect(state / "state.sqlite", timeout=1) as con:
            return con.execute("SELECT COUNT(*) FROM cells_v1").fetchone()[0]
    except sqlite3.OperationalError:  # not made yet
        return 0


def _interrupt(command: list[str], env: dict[str, str], state: Path, sig: signal.Signals,
               after: int) -> subprocess.CompletedProcess[str]:
    """Run ``command`` in a session of its own and, once the state holds more than ``after``
    entries, send ``sig``: SIGINT to the whole group, as Ctrl-C does, SIGTERM to the process, as
    ``kill`` does."""
    child = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True, start_new_session=True)
    deadline = time.monotonic() + 300
    while _kept_cells(state) <= after and child.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert child.poll() is None, "the run ended before it could be interrupted"
    if sig == signal.SIGINT:
        os.killpg(child.pid, sig)
    else:
        child.send_signal(sig)
    stdout, stderr = child.communicate(timeout=120)
    assert "Traceback" not in stderr, stderr[-3000:]
    return subprocess.CompletedProcess(command, child.returncode, stdout, stderr)


def interrupted_twice(entry: str, metrics: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                      ) -> list[Outcome]:
    """Ctrl-C once ``words`` scores (chrf's 6 cells, its anchors and words' gold are kept), then
    the same command again, SIGTERM once it kept a cell more, then the same command to the end.
    Each interrupted run is held at ``words``' gate once it has scored :data:`GATE_PASSES`
    cells, so the signal lands mid-run however slow the machine is."""
    out, cache = tmp_path / "out", tmp_path / "cache"
    if entry == "cli":
        command = _command(metrics, out)
    else:
        command = [sys.executable, "-c", API_SCRIPT, metrics, TESTS, str(out)]
    outcomes = []
    after = 7
    for sig in (signal.SIGINT, signal.SIGTERM):
        gate = _gate(tmp_path / f"gate-{sig.name}", GATE_PASSES)
        stopped = _interrupt(command, _env(cache, gate), out / ".state", sig, after)
        assert not (out / "results.json").exists()
        after = _kept_cells(out / ".state")
        outcomes.append(Outcome(_last_line(stopped.stderr), stopped.returncode, b""))
    if entry == "cli":
        resumed = _cli(command, _env(cache))
        assert resumed.returncode == 0, resumed.stderr[-3000:]
        result = (out / "results.json").read_bytes()
    else:
        monkeypatch.setenv("BLINDSPOT_CACHE", str(cache))
        result = _api(metrics, out)
    for outcome in outcomes:
        outcome.resumed = result
    return outcomes


def _children(pid: int) -> list[int]:
    """The child processes of ``pid`` (Linux: /proc/<pid>/task/*/children)."""
    found = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            found += [int(c) for c in (task / "children").read_text().split()]
        except OSError:  # the thread ended meanwhile
            continue
    return found


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:  # it ended meanwhile
        return b""


@contextmanager
def _killing_a_worker(parent: int, workers: int = 2) -> Iterator[list[int]]:
    """While the block runs, kill one of the pool's worker processes mid-run: each worker
    ``parent`` forks (a child with its command line, not Python's resource tracker) is stopped
    (SIGSTOP) as soon as it is seen, so the pool's cells stay pending (a cell of the demo takes
    milliseconds); once ``workers`` are held (or half a second passed), the first is killed with
    SIGKILL and the others continue. The killed pid is appended to the list."""
    killed: list[int] = []
    done = threading.Event()

    def watch() -> None:
        line = _cmdline(parent)
        held: list[int] = []
        seen: dict[int, float] = {}
        first_seen = 0.0
        while not done.is_set():
            now = time.monotonic()
            for child in _children(parent):
                if child in held or _cmdline(child) != line:
                    continue
                # a child that keeps the run's command line for 3 ms is a forked worker, not a
                # subprocess between its fork and its exec (which would change the line)
                if now - seen.setdefault(child, now) >= 0.003:
                    os.kill(child, signal.SIGSTOP)
                    held.append(child)
                    first_seen = first_seen or now
            if held and (len(held) >= workers or time.monotonic() - first_seen > 0.5):
                os.kill(held[0], signal.SIGKILL)
                killed.append(held[0])
                for child in held[1:]:
                    os.kill(child, signal.SIGCONT)
                return
            time.sleep(0.001)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        yield killed
    finally:
        done.set()
        watcher.join(timeout=10)


#: runs of the worker_killed row before it gives up catching a worker mid-run
ATTEMPTS = 6


def worker_killed(row: Fault, metrics: str, tmp_path: Path, small_disk: Callable[..., SmallDisk],
                  capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> Outcome:
    """A pool worker killed mid-run. The demo's cells take milliseconds, so the pool may finish
    before a worker is caught (more often on a loaded machine, where the watcher thread waits
    its turn): then the run (whole, the same bytes) is made again, up to 6 times, until a kill
    lands while cells are pending."""
    for attempt in range(ATTEMPTS):
        out, cache = tmp_path / f"out{attempt}", tmp_path / f"cache{attempt}"
        command = (_command(metrics, out, "--num-proc", "2") if row.entry == "cli"
                   else [sys.executable, "-c", WORKER_SCRIPT, metrics, TESTS, str(out)])
        child = subprocess.Popen(command, env=_env(cache), stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True)
        with _killing_a_worker(child.pid) as killed:
            _, stderr = child.communicate(timeout=300)
        assert "Traceback" not in stderr, stderr[-3000:]  # nor from the pool's other workers
        assert child.returncode == 0, stderr[-3000:]
        warnings = _lines(stderr, "warning: a --num-proc worker")
        if warnings:
            assert killed
            return Outcome(warnings[0], child.returncode, (out / "results.json").read_bytes())
    raise AssertionError(f"no kill landed while cells were pending in {ATTEMPTS} runs: "
                         f"{stderr[-3000:]}")


DRIVERS: dict[str, Callable[..., Outcome]] = {
    "cache_disk_full": cache_disk_full, "output_disk_full": output_disk_full,
    "report_disk_full": report_disk_full, "worker_killed": worker_killed}


def _check(row: Fault, outcome: Outcome, folder: Path, state: Path, uninterrupted: bytes
           ) -> None:
    """The row's one line, its exit status, and the resumed run's bytes."""
    pattern = row.line.format(state=re.escape(str(state)), folder=re.escape(str(folder)))
    assert re.fullmatch(pattern, outcome.line), outcome.line
    assert outcome.code == row.code, outcome.line
    kept = re.search(r"(\d+) of 12 cells kept", outcome.line)
    if kept:  # it stopped mid-run, having kept some of the cells (and not all of them)
        assert 0 < int(kept.group(1)) < CELLS, outcome.line
    assert outcome.resumed == uninterrupted
    if os.environ.get("FAULTS_TABLE"):
        with open(os.environ["FAULTS_TABLE"], "a", encoding="utf-8") as table:
            table.write(json.dumps({**asdict(row), **asdict(outcome), "resumed": "same bytes",
                                    "line": outcome.line}) + "\n")


ONE_RUN = [row for row in TABLE if row.fault in DRIVERS]


@pytest.mark.parametrize("row", ONE_RUN, ids=[f"{r.fault}-{r.entry}" for r in ONE_RUN])
def test_fault(row: Fault, words: str, uninterrupted: bytes, tmp_path: Path,
               small_disk: Callable[..., SmallDisk], capfd: pytest.CaptureFixture[str],
               monkeypatch: pytest.MonkeyPatch) -> None:
    start = time.perf_counter()
    outcome = DRIVERS[row.fault](row, words, tmp_path, small_disk, capfd, monkeypatch)
    outcome.seconds = round(time.perf_counter() - start, 1)
    folder = tmp_path / {"cache_disk_full": "cache", "report_disk_full": "report"}.get(
        row.fault, "out")
    state = tmp_path / "state" if row.fault == "report_disk_full" else folder / ".state"
    _check(row, outcome, folder, state, uninterrupted)


@pytest.mark.parametrize("entry", ["cli", "api"])
def test_interrupted_twice_then_resumed(entry: str, words: str, uninterrupted: bytes,
                                        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Ctrl-C (exit 130), the same command again, SIGTERM (exit 143) having kept more cells,
    the same command to the end: the uninterrupted run's bytes."""
    start = time.perf_counter()
    first, second = interrupted_twice(entry, words, tmp_path, monkeypatch)
    first.seconds = second.seconds = round(time.perf_counter() - start, 1)
    rows = [row for row in TABLE if row.entry == entry and row.fault in ("sigint", "sigterm")]
    for row, outcome in zip(rows, (first, second), strict=True):
        _check(row, outcome, tmp_path / "out", tmp_path / "out" / ".state", uninterrupted)
    counts = [int(re.findall(r"(\d+) of", o.line)[0]) for o in (first, second)]
    assert counts[0] < counts[1], "the second run did not resume the first's state"
