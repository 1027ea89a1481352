"""Streamed runs (``--chunk-size``): chunk by chunk, the main job's very results and report."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from engine_support import write_cnndm_gold

from blindspot.errors import BlindspotInputError
from blindspot.perturbations.dataset import plan_suite
from blindspot.protocols.rank import run_blindspot
from blindspot.runner.state import SavedSuite
from blindspot.runner.stream import iter_chunks
from blindspot.scoring.scorer import SCORERS

# truncation is deterministic (one seed); the others are random and three of them parse;
# repetition is judged by its own rule (every level below gold, with a bootstrap over rows)
RUN = dict(task="summarization",
           tests="truncation,sentence_switching,negation,local_swap,repetition",
           seeds=[1, 2], progress=False)
SMALL = dict(task="summarization", tests="truncation", seeds=[1], progress=False)


@pytest.fixture(scope="module")
def gold_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_cnndm_gold(tmp_path_factory.mktemp("stream") / "gold.jsonl", 40)


@pytest.fixture(scope="module")
def small_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_cnndm_gold(tmp_path_factory.mktemp("small") / "gold.jsonl", 12)


def _report_files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file() and ".state" not in p.parts}


def test_streamed_run_writes_the_in_memory_report_byte_for_byte(
        gold_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BLINDSPOT_SCORE_CACHE", "0")  # both runs score every text themselves
    streamed = run_blindspot(str(gold_file), "rouge,chrf", out=tmp_path / "streamed",
                             chunk_size=7, **RUN)  # 40 rows: 5 chunks of 7 and one of 5
    whole = run_blindspot(str(gold_file), "rouge,chrf", out=tmp_path / "whole", **RUN)
    assert streamed == whole
    files = _report_files(tmp_path / "whole")
    assert {"results.json", "report.md", "report.html"} <= set(files)
    assert _report_files(tmp_path / "streamed") == files
    (dataset,) = whole["datasets"].values()
    assert dataset["rows"] == 40 and dataset["skipped_tests"] == {}
    tests = dataset["metrics"]["chrf.chrf"]["tests"]
    assert set(tests) == {"truncation", "sentence_switching", "negation", "local_swap",
                          "repetition"}
    for judged in tests.values():  # what the old streaming command could not give
        assert judged["per_sample"] and len(judged["worst_examples"]) == 3
        assert judged["explanation"] and judged["deciding"]["ci_low"] is not None
    assert tests["repetition"]["rule"] == "below_gold"
    # the worst examples come from rows of every chunk, not only the first
    rows = {e["id"]: i for i, e in enumerate(json.loads(line) for line in
                                             gold_file.read_text(encoding="utf-8").splitlines())}
    assert max(rows[e["id"]] for t in tests.values() for e in t["worst_examples"]) >= 7
    # the spilled rows are gone; the run state keeps the scores, to resume, but no finished
    # chunk's perturbed texts (they grow with the rows); the whole run keeps its one suite, a
    # file per cell
    kept = sorted(p.name for p in (tmp_path / "streamed" / ".state").iterdir())
    assert "state.sqlite" in kept and "suites" in kept
    assert not [name for name in kept if name.startswith("run-")]
    assert not list((tmp_path / "streamed" / ".state" / "suites").iterdir())
    (suite,) = (tmp_path / "whole" / ".state" / "suites").iterdir()
    cells = len(plan_suite(RUN["tests"], RUN["task"], RUN["seeds"], None, {}).items)
    assert sorted(p.name for p in suite.iterdir()) == sorted(f"cell-{i}.arrow"
                                                             for i in range(cells))


def _stopping(monkeypatch: pytest.MonkeyPatch, batches: list[int],
              stop_after: int | None = None) -> None:
    """Count chrF's scored batches; raise KeyboardInterrupt (a kill) on batch ``stop_after``."""
    scorer = SCORERS["chrf"]
    real = scorer.score_batch

    def score_batch(self: Any, inputs: list[Any]) -> list[dict[str, float]]:
        if len(batches) + 1 == stop_after:
            raise KeyboardInterrupt
        batches.append(len(inputs))
        return real(self, inputs)

    monkeypatch.setattr(scorer, "score_batch", score_batch)


def test_a_killed_streamed_run_keeps_one_chunks_suite_and_resumes(
        small_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A finished chunk's perturbed texts leave the run state once every metric scored them:
    killed in the second of three chunks, the state keeps that chunk's suite only, and the
    resumed run perturbs the first chunk again, reads its scores back, scores nothing twice
    and writes the uninterrupted run's bytes."""
    monkeypatch.setenv("BLINDSPOT_SCORE_CACHE", "0")  # only the run state can spare a rescoring
    settings = dict(chunk_size=5, **SMALL)  # 12 rows: chunks of 5, 5 and 2
    full: list[int] = []
    with monkeypatch.context() as patch:
        _stopping(patch, full)
        run_blindspot(str(small_file), "chrf", out=tmp_path / "full", **settings)
    out = tmp_path / "resumed"
    cells = len(plan_suite(SMALL["tests"], SMALL["task"], SMALL["seeds"]).items)
    before: list[int] = []
    with monkeypatch.context() as patch:
        # a chunk is one batch for its gold rows and one per cell: the second chunk's first cell
        _stopping(patch, before, stop_after=(1 + cells) + 2)
        with pytest.raises(KeyboardInterrupt):
            run_blindspot(str(small_file), "chrf", out=out, **settings)
    (suite,) = (out / ".state" / "suites").iterdir()  # the second chunk's; the first is gone
    assert not suite.name.endswith(".partial")
    assert {len(SavedSuite(suite, 1).cell(0)["perturbed"])} == {5}
    after: list[int] = []
    with monkeypatch.context() as patch:
        _stopping(patch, after)
        run_blindspot(str(small_file), "chrf", out=out, **settings)
    assert (out / "results.json").read_bytes() == (tmp_path / "full" / "results.json").read_bytes()
    assert sum(before) + sum(after) == sum(full) and sum(before) > 0
    assert not list((out / ".state" / "suites").iterdir())


def test_streamed_run_in_processes_gives_the_same_results(gold_file: Path, tmp_path: Path) -> None:
    """--num-proc with --chunk-size: each chunk parsed and perturbed in 2 forked processes."""
    whole = run_blindspot(str(gold_file), "chrf", out=tmp_path / "whole", **RUN)
    streamed = run_blindspot(str(gold_file), "chrf", out=tmp_path / "streamed", chunk_size=13,
                             num_proc=2, **RUN)
    assert streamed == whole
    assert (tmp_path / "streamed" / "results.json").read_bytes() == \
        (tmp_path / "whole" / "results.json").read_bytes()


def test_a_streamed_run_loads_once_what_its_workers_need(small_file: Path, tmp_path: Path
                                                         ) -> None:
    """Each chunk's workers fork from the parent, which loaded CheckList's negator for them."""
    from blindspot.perturbations.negation import checklist_negator

    checklist_negator.cache_clear()
    run_blindspot(str(small_file), "chrf", chunk_size=5, num_proc=2,
                  **{**SMALL, "tests": "negation,truncation"})
    assert checklist_negator.cache_info().currsize == 1  # the parent never negates a row itself


def test_a_missing_column_is_refused_the_same_streamed(small_file: Path, tmp_path: Path) -> None:
    no_refs = write_cnndm_gold(tmp_path / "no_refs.jsonl", 5, keys=("id", "gold"))
    refusals = []
    for chunks in ({}, {"chunk_size": 2}):
        with pytest.raises(BlindspotInputError) as raised:
            run_blindspot(str(no_refs), "rouge", **SMALL, **chunks)
        refusals.append(str(raised.value))
    assert refusals[0] == refusals[1]
    assert "no_refs.jsonl: metric 'rouge.rougeL' needs references" in refusals[0]


def test_parquet_and_the_evaluate_module_stream_too(small_file: Path, tmp_path: Path) -> None:
    import evaluate
    import pyarrow as pa
    import pyarrow.parquet as pq

    from blindspot.evaluate_modules import module_path

    rows = [json.loads(line) for line in small_file.read_text(encoding="utf-8").splitlines()]
    parquet = tmp_path / "gold.parquet"
    pq.write_table(pa.Table.from_pylist(rows), parquet)
    whole = run_blindspot(str(small_file), "chrf", **SMALL)["datasets"]["gold.jsonl"]
    streamed = run_blindspot(str(parquet), "chrf", chunk_size=5, **SMALL)["datasets"]
    assert streamed["gold.parquet"] == whole
    module = evaluate.load(str(module_path("blindspot")))
    out = module.compute(data=str(small_file), metric="chrf", tests="truncation", seeds=[1],
                         progress=False, protocol_options={"chunk_size": 5})
    assert out["results"]["datasets"]["gold.jsonl"] == whole


def test_pool_tests_are_skipped_with_the_reason(small_file: Path, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from blindspot.cli import app

    runner = CliRunner()
    args = ["--data", str(small_file), "--metrics", "chrf", "--tests",
            "truncation,sentence_replacement", "--seeds", "1"]
    done = runner.invoke(app, ["run", *args, "--chunk-size", "5", "--out", str(tmp_path / "a")])
    assert done.exit_code == 0, done.output
    results = json.loads((tmp_path / "a" / "results.json").read_text(encoding="utf-8"))
    dataset = results["datasets"]["gold.jsonl"]
    assert dataset["skipped_tests"]["sentence_replacement"].startswith(
        "draws other rows' texts from the whole dataset")
    assert list(dataset["metrics"]["chrf.chrf"]["tests"]) == ["truncation"]
    assert "skipped sentence_replacement" in " ".join(done.output.split())
    # `blindspot stream` is `blindspot run --chunk-size`: the same report
    alias = runner.invoke(app, ["stream", *args, "--chunk-size", "5", "--out", str(tmp_path / "b")])
    assert alias.exit_code == 0, alias.output
    assert _report_files(tmp_path / "b") == _report_files(tmp_path / "a")


@pytest.mark.parametrize("size", ["0", "-3"])
def test_bad_chunk_size_is_a_clear_error(small_file: Path, tmp_path: Path, size: str) -> None:
    from typer.testing import CliRunner

    from blindspot.cli import app

    done = CliRunner().invoke(app, ["run", "--data", str(small_file), "--metrics", "chrf",
                                    "--chunk-size", size, "--out", str(tmp_path / "x")])
    assert done.exit_code == 1
    # --chunk-size is the rank protocol's chunk_size option, checked by its declaration
    assert f"chunk_size={size} is not accepted by the rank protocol: chunk_size must be a " \
        "whole number >= 1" in " ".join(done.output.split())
    # from Python too: run_blindspot is the rank protocol's run, checked alike
    with pytest.raises(ValueError, match=r"chunk_size=2\.5 is not accepted by the rank protocol: "
                                         "chunk_size must be a whole number >= 1"):
        run_blindspot(str(small_file), "chrf", chunk_size=2.5, **SMALL)


@pytest.mark.parametrize("metrics, settings, message", [
    ("mauve@smollm2", {}, "metric 'mauve.mauve@smollm2' is corpus-level: its score needs every row"),
    ("bertscore@minilm", {"metric_options": {"bertscore": {"idf": True}}},
     "weights words by idf over all the references, which a streamed run never holds; switch "
     "it off (--option bertscore.idf=false)"),
])
def test_what_cannot_be_streamed_is_refused(small_file: Path, metrics: str, settings: dict,
                                            message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        run_blindspot(str(small_file), metrics, chunk_size=4, **SMALL, **settings)


def test_only_local_jsonl_or_parquet_files_stream(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="streams a local .jsonl or .parquet file, not 'demo'"):
        run_blindspot("demo", "chrf", chunk_size=4, **SMALL)
    with pytest.raises(FileNotFoundError, match="input file not found"):
        run_blindspot(str(tmp_path / "missing.jsonl"), "chrf", chunk_size=4, **SMALL)
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n", encoding="utf-8")
    with pytest.raises(ValueError, match="empty.jsonl: the file has only blank lines, no rows"):
        run_blindspot(str(empty), "chrf", chunk_size=4, **SMALL)


def test_chunks_are_read_lazily(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps({"gold": f"text {i}"}) + "\n" for i in range(7)) +
                    "not json\n", encoding="utf-8")
    chunks = iter_chunks(path, 3)
    assert next(chunks) == {"gold": ["text 0", "text 1", "text 2"]}
    assert next(chunks)["gold"] == ["text 3", "text 4", "text 5"]
    with pytest.raises(ValueError, match="rows.jsonl, line 8: not valid JSON"):
        next(chunks)
