"""One run pipeline: data loaded whole is a chunked run's single chunk, so every chunk size writes
the same ``results.json``, and a chunked run killed half-way resumes from its run state to the
very same bytes, scoring nothing twice.

TER is lower-is-better: the run state keeps the scorer's own (unsigned) scores and the run signs
them when it reads them, so a resumed run that mixed the two would flip its verdicts.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from engine_support import SHARED_DATA

from blindspot.protocols.rank import run_blindspot
from blindspot.scoring.scorer import SCORERS

ROWS = 10
# WMT21 de-en: short sentences (TER is slow on long texts); local_swap and negation parse, and
# the source column goes through every chunk
RUN = dict(task="translation", tests="truncation,local_swap,negation", seeds=[1, 2],
           progress=False)
METRICS = "ter,chrf"
WMT21 = SHARED_DATA / "wmt21_de_en_translation.jsonl"


@pytest.fixture(scope="module")
def gold_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("one-pipeline") / "gold.jsonl"
    with open(WMT21, encoding="utf-8") as rows, open(path, "w", encoding="utf-8") as out:
        for _, line in zip(range(ROWS), rows, strict=False):
            row = json.loads(line)
            out.write(json.dumps({k: row[k] for k in ("id", "source", "gold", "reference")})
                      + "\n")
    return path


@pytest.fixture(scope="module")
def whole(gold_file: Path, tmp_path_factory: pytest.TempPathFactory) -> bytes:
    """results.json of the run that loads the data whole (no score cache)."""
    out = tmp_path_factory.mktemp("whole")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("BLINDSPOT_SCORE_CACHE", "0")
        run_blindspot(str(gold_file), METRICS, out=out, **RUN)
    return (out / "results.json").read_bytes()


@pytest.mark.parametrize("chunk_size", [1, 3, ROWS, 25])  # one row; not a divisor; all; more
def test_every_chunk_size_writes_the_whole_runs_results(
        gold_file: Path, whole: bytes, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        chunk_size: int) -> None:
    monkeypatch.setenv("BLINDSPOT_SCORE_CACHE", "0")  # every text scored by this run itself
    results = run_blindspot(str(gold_file), METRICS, out=tmp_path, chunk_size=chunk_size, **RUN)
    assert (tmp_path / "results.json").read_bytes() == whole
    tests = results["datasets"]["gold.jsonl"]["metrics"]["ter.ter"]["tests"]
    assert set(tests) == {"truncation", "local_swap", "negation"}
    assert all(t["status"] in ("pass", "fail") for t in tests.values())


def _counting(monkeypatch: pytest.MonkeyPatch, scored: list[int],
              stop_after: int | None = None) -> None:
    """Count the inputs TER scores (raise KeyboardInterrupt, a kill, on batch ``stop_after``)."""
    scorer = SCORERS["ter"]
    real = scorer.score_batch
    batches = [0]

    def score_batch(self: Any, inputs: list[Any]) -> list[dict[str, float]]:
        batches[0] += 1
        if batches[0] == stop_after:
            raise KeyboardInterrupt
        scores = real(self, inputs)
        scored.append(len(inputs))
        return scores

    monkeypatch.setattr(scorer, "score_batch", score_batch)


def test_a_killed_chunked_run_resumes_to_the_same_bytes(
        gold_file: Path, whole: bytes, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BLINDSPOT_SCORE_CACHE", "0")  # only the run state can spare a rescoring
    settings = dict(chunk_size=4, **RUN)
    full: list[int] = []
    with monkeypatch.context() as patch:
        _counting(patch, full)
        run_blindspot(str(gold_file), METRICS, out=tmp_path / "full", **settings)
    assert (tmp_path / "full" / "results.json").read_bytes() == whole

    before: list[int] = []
    with monkeypatch.context() as patch:
        _counting(patch, before, stop_after=len(full) // 2)  # in the second of three chunks
        with pytest.raises(KeyboardInterrupt):
            run_blindspot(str(gold_file), METRICS, out=tmp_path / "resumed", **settings)
    assert not (tmp_path / "resumed" / "results.json").exists()
    assert 0 < sum(before) < sum(full)

    after: list[int] = []
    with monkeypatch.context() as patch:
        _counting(patch, after)
        run_blindspot(str(gold_file), METRICS, out=tmp_path / "resumed", **settings)
    assert (tmp_path / "resumed" / "results.json").read_bytes() == whole
    # what the killed run scored is read back from the run state, never scored again
    assert sum(before) + sum(after) == sum(full)


def test_the_kept_anchors_are_those_of_the_data_given(gold_file: Path, tmp_path: Path) -> None:
    """chrF reads no source, but its copied-source anchor does: the same rows without and then
    with a source column, in one run state, keep each its own anchors (the state's key once left
    the sources out, and the second run read the first run's null)."""
    state = tmp_path / "state"
    without = tmp_path / "no-source.jsonl"
    without.write_text("".join(json.dumps({k: v for k, v in json.loads(line).items()
                                           if k != "source"}) + "\n"
                               for line in gold_file.read_text(encoding="utf-8").splitlines()),
                       encoding="utf-8")
    settings = dict(RUN, tests="truncation", seeds=[1])

    def anchors(path: Path, folder: Path) -> dict[str, Any]:
        results = run_blindspot(str(path), "chrf", state_dir=folder, **settings)
        (dataset,) = results["datasets"].values()
        return dataset["metrics"]["chrf.chrf"]["anchors"]

    assert anchors(without, state)["copied_source"] is None
    kept = anchors(gold_file, state)
    fresh = anchors(gold_file, tmp_path / "fresh-state")
    assert kept == fresh and isinstance(kept["copied_source"], float)


#: the second run: the open-ended suite (positioned_error reads SmolLM2's tokenizer, the
#: substitution tests WordNet) on rows whose every perturbation the run state already keeps
SECOND_RUN = """
import sys
from blindspot.protocols.rank import run_blindspot
run_blindspot("demo", ["rep_ngram"], task="open_ended", tests="all", seeds=[1],
              state_dir=sys.argv[1], progress=False)
loaded = sorted(m for m in ("transformers", "torch", "nltk.corpus.reader.wordnet", "checklist")
                if m in sys.modules)
print("loaded:", ",".join(loaded))
"""


def test_a_cached_run_loads_no_test_resource(tmp_path: Path) -> None:
    """A run whose perturbed cells are all in the run state builds no test: no tokenizer, no
    WordNet, no CheckList is loaded (a second ``make demo`` spent most of its time on them)."""
    state = tmp_path / "state"
    first = subprocess.run([sys.executable, "-c", SECOND_RUN, str(state)], capture_output=True,
                           text=True, check=True)
    # the first run perturbs, so it loads them: the check below can fail
    assert "transformers" in first.stdout and "nltk.corpus.reader.wordnet" in first.stdout
    again = subprocess.run([sys.executable, "-c", SECOND_RUN, str(state)], capture_output=True,
                           text=True, check=True)
    assert again.stdout.strip().endswith("loaded:"), again.stdout
