"""Test session set-up: offline, and caches in a fresh temporary folder (no state leaks in)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

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
