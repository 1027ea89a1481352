"""Test session set-up: offline, and caches in a fresh temporary folder (no state leaks in)."""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
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


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--quick", action="store_true",
                     help="only the tests marked quick (make check): lint-speed, no model loads")


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    if not config.getoption("--quick") or collection_path.suffix != ".py":
        return None
    if not collection_path.name.startswith("test_"):
        return None
    return f"pytest.mark.{QUICK}" not in collection_path.read_text(encoding="utf-8")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not config.getoption("--quick"):
        return
    quick = [item for item in items
             if item.get_closest_marker(QUICK) and not item.get_closest_marker("slow")]
    if len(quick) < len(items):
        config.hook.pytest_deselected(items=[item for item in items if item not in quick])
        items[:] = quick


@pytest.fixture(autouse=True)
def _quick_tests_load_no_model(request: pytest.FixtureRequest) -> Iterator[None]:
    yield
    if request.config.getoption("--quick") and "torch" in sys.modules:
        pytest.fail(f"{request.node.nodeid} is marked quick but imported torch (a model load): "
                    "remove its quick mark, or keep the model out of it", pytrace=False)


@pytest.fixture(scope="module")
def one_ray_at_a_time(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The suite's Ray clusters start one at a time across the xdist workers (a lock beside the
    workers' temporary folders): two clusters on two cores at once made each several times
    slower, and the Ray client test ran past its timeout in clean-clone CI (74 s alone)."""
    with FileLock(str(tmp_path_factory.getbasetemp().parent / "blindspot-ray.lock")):
        yield
