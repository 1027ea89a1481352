"""Test session set-up: offline, and caches in a fresh temporary folder (no state leaks in)."""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import ray_support
from filelock import FileLock
from hypothesis import settings

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# pytest-xdist runs one worker per core: one torch thread each, or they fight over the cores
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")
os.environ["BLINDSPOT_CACHE"] = tempfile.mkdtemp(prefix="blindspot-test-cache-")
# Ray, single-node on loopback (tests/ray_support.py): read when ray is imported, so set first
os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")

#: the real data beside the repository (never copied into it)
SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"

# Property tests are reproducible: the same examples on every run and machine (derandomized, no
# example database written into the checkout). HYPOTHESIS_PROFILE=explore searches afresh.
settings.register_profile("ci", derandomize=True, database=None, deadline=None, print_blob=True)
settings.register_profile("explore", derandomize=False, deadline=None, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

#: `make check` runs `pytest --quick`: the tests marked `quick` (no model load, seconds in all).
#: Only the modules that use the mark are imported at all, so the loop never pays for the imports
#: of the others; a quick test that pulls in torch (every model load does) fails by name.
QUICK = "quick"

#: the xdist group of the tests that start a Ray cluster, and the fixture that puts a test in it
RAY_GROUP = "ray"
RAY_LOCK_FIXTURE = "one_ray_at_a_time"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--quick", action="store_true",
                     help="only the tests marked quick (make check): lint-speed, no model loads")


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    if not config.getoption("--quick") or collection_path.suffix != ".py":
        return None
    if not collection_path.name.startswith("test_"):
        return None
    return f"pytest.mark.{QUICK}" not in collection_path.read_text(encoding="utf-8")


#: how many files the suite's closing summary lists by their time (``--durations`` lists tests)
SLOWEST_FILES = 20
#: seconds per test file (set-up, call and tear-down of its tests, summed over the workers)
FILE_SECONDS: dict[str, float] = {}


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    path = report.nodeid.split("::", 1)[0]
    FILE_SECONDS[path] = FILE_SECONDS.get(path, 0.0) + report.duration


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    """Where the suite's time went, per file (issue 41: the suite's budget is 15 min of 2
    workers): the slowest files and the total of all, in worker-seconds."""
    if config.getoption("--durations") is None or not FILE_SECONDS:
        return
    slowest = sorted(FILE_SECONDS.items(), key=lambda item: -item[1])[:SLOWEST_FILES]
    terminalreporter.write_sep("=", f"slowest {len(slowest)} files (worker-seconds)")
    for path, seconds in slowest:
        terminalreporter.write_line(f"{seconds:8.1f}s {path}")
    terminalreporter.write_line(f"{sum(FILE_SECONDS.values()):8.1f}s all {len(FILE_SECONDS)} files")


@pytest.hookimpl(trylast=True)  # after xdist's own (inert) group suffix
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    _group_the_ray_tests(config, items)
    if not config.getoption("--quick"):
        return
    quick = [item for item in items
             if item.get_closest_marker(QUICK) and not item.get_closest_marker("slow")]
    if len(quick) < len(items):
        config.hook.pytest_deselected(items=[item for item in items if item not in quick])
        items[:] = quick


def _group_the_ray_tests(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Every test that starts a Ray cluster (it requests :func:`one_ray_at_a_time`, directly or
    through a fixture) joins the ``ray`` xdist group: ``--dist loadgroup`` (pyproject.toml) sends the
    group to one worker, which runs the Ray tests one after another while the other worker goes
    on with the rest of the suite (neither waits for the other)."""
    for item in items:
        if RAY_LOCK_FIXTURE in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.xdist_group(RAY_GROUP))
    if getattr(config.option, "loadgroup", False):  # an xdist worker under --dist loadgroup
        for item in items:
            _tag_with_group(item)


def _tag_with_group(item: pytest.Item) -> None:
    """``nodeid@group``: how an xdist worker tells the controller a test's group. xdist 3.8 sets
    it through ``item._nodeid``, which pytest 9.2 no longer reads (its node ids are structured),
    so the groups were silently ignored (pytest-dev/pytest-xdist#1386); this sets the id pytest
    reads, with the suffix xdist would have written, unless xdist already did."""
    groups = sorted({str(mark.args[0] if mark.args else mark.kwargs.get("name", "default"))
                     for mark in item.iter_markers("xdist_group")})
    suffix = "@" + "_".join(groups)
    if not groups or item.nodeid.endswith(suffix):
        return
    item._id = type(item.id).parse(item.nodeid + suffix)  # pytest 9.2's NodeId
    if not item.nodeid.endswith(suffix):
        raise pytest.UsageError(
            f"{item.nodeid}: its xdist group {suffix} could not be attached to its node id, so "
            "--dist loadgroup would not keep the group's tests on one worker: update "
            "tests/conftest.py::_tag_with_group for this pytest/pytest-xdist")


@pytest.fixture(autouse=True)
def _quick_tests_load_no_model(request: pytest.FixtureRequest) -> Iterator[None]:
    yield
    if request.config.getoption("--quick") and "torch" in sys.modules:
        pytest.fail(f"{request.node.nodeid} is marked quick but imported torch (a model load): "
                    "remove its quick mark, or keep the model out of it", pytrace=False)


@pytest.fixture(scope="session")
def one_ray_at_a_time(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Requested by :func:`ray_head`, the session's one Ray cluster: two clusters on two cores at
    once made each several times slower, and the Ray client test ran past its timeout in
    clean-clone CI (74 s alone). Its tests form one xdist group (see
    :func:`_group_the_ray_tests`), so under ``--dist loadgroup`` this lock beside the workers'
    temporary folders is never waited for; it still keeps the clusters apart under another
    ``--dist`` mode."""
    with FileLock(str(tmp_path_factory.getbasetemp().parent / "blindspot-ray.lock")):
        yield


# -- tests that read the real data beside the repository ------------------------------------------
#: The mark of a test that reads ``../shared`` (:data:`SHARED_DATA`: the real data, never copied
#: into the repository). In a clone without it (a contributor's) the test skips and says why;
#: where ``CI`` is set, a missing ``../shared`` fails the test instead: CI never skips it.
SHARED_DATA_MARK = "shared_data"


def pytest_runtest_setup(item: pytest.Item) -> None:
    if item.get_closest_marker(SHARED_DATA_MARK) is None or SHARED_DATA.is_dir():
        return
    reason = (f"reads the real data in {SHARED_DATA} (../shared/data beside the clone), which "
              "this clone does not have")
    if os.environ.get("CI"):
        pytest.fail(f"{reason}; CI must have it", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="session")
def ray_head(one_ray_at_a_time: None) -> Iterator[ray_support.Head]:
    """The session's one Ray cluster (tests/ray_support.py), started on first use: every test
    that needs Ray joins it, in this process (:func:`ray_driver`) or from one of its own."""
    with ray_support.running_head() as head:
        yield head


@pytest.fixture(scope="module")
def ray_driver(ray_head: ray_support.Head) -> Iterator[Any]:
    """This process joined to :func:`ray_head` for a module: its ``engine="ray"`` runs use it."""
    from ray import cloudpickle

    cloudpickle.register_pickle_by_value(ray_support)  # the workers cannot import tests/
    with ray_support.driver(ray_head) as ray:
        yield ray
