"""Streaming runs: chunk by chunk they perturb and score each row as a whole-dataset run does."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest

from blindspot.runner import run_blindspot
from blindspot.runner.stream import StreamSums, iter_chunks, stream_run
from engine_support import write_cnndm_gold

RUN = dict(task="summarization", tests="truncation,sentence_switching", seeds=[1, 2],
           progress=False)


@pytest.fixture()
def gold_file(tmp_path: Path) -> Path:
    return write_cnndm_gold(tmp_path / "gold.jsonl", 10)


def test_streamed_verdicts_and_means_equal_the_whole_run(gold_file: Path, tmp_path: Path) -> None:
    whole = run_blindspot(str(gold_file), "rouge,chrf", out=tmp_path / "run", **RUN)
    streamed = stream_run(gold_file, "rouge,chrf", out=tmp_path / "stream", chunk_size=3, **RUN)
    (dataset,) = whole["datasets"].values()
    assert streamed["rows"] == 10
    for name, entry in dataset["metrics"].items():
        mine = streamed["metrics"][name]
        assert mine["gold"]["score_mean"] == pytest.approx(entry["gold"]["score_mean"], rel=1e-12)
        for test, judged in entry["tests"].items():
            assert mine["tests"][test]["status"] == judged["status"]
            noised = {p["level"]: p for p in judged["points"] if p["level"] != "gold"}
            assert {p["level"] for p in mine["tests"][test]["points"]} == set(noised)
            for point in mine["tests"][test]["points"]:
                expected = noised[point["level"]]
                assert point["score_mean"] == pytest.approx(expected["score_mean"], rel=1e-12)
                assert point["noise_ratio"] == pytest.approx(expected["noise_ratio"], rel=1e-12)
    # 10 rows x (5 truncation levels x 1 seed + 2 switching levels x 2 seeds) cells
    lines = (tmp_path / "stream" / "rows.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(lines) == 10 * (5 + 4)
    first = json.loads(lines[0])
    assert set(first["scores"]) == {"rouge.rougeL", "chrf.chrf"} and first["row"] == 0


def test_chunk_size_changes_nothing(gold_file: Path, tmp_path: Path) -> None:
    for size in (1, 4, 100):
        stream_run(gold_file, "chrf", out=tmp_path / str(size), chunk_size=size, **RUN)
    # rows come chunk by chunk (cell by cell inside a chunk): the same rows, in another order
    rows = [(tmp_path / str(size) / "rows.jsonl").read_text(encoding="utf-8").splitlines()
            for size in (1, 4, 100)]
    assert len(rows[0]) == 90 and sorted(rows[0]) == sorted(rows[1]) == sorted(rows[2])
    assert rows[0] != rows[2]
    summaries = {(tmp_path / str(size) / "summary.json").read_bytes() for size in (1, 4, 100)}
    assert len(summaries) == 1


def test_chunks_are_read_lazily(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps({"gold": f"text {i}"}) + "\n" for i in range(7)) +
                    "not json\n", encoding="utf-8")
    chunks = iter_chunks(path, 3)
    assert next(chunks) == {"gold": ["text 0", "text 1", "text 2"]}
    assert next(chunks)["gold"] == ["text 3", "text 4", "text 5"]
    with pytest.raises(ValueError, match="rows.jsonl, line 8: not JSON"):
        next(chunks)


def test_what_cannot_be_streamed_is_refused(gold_file: Path, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"\['sentence_replacement'\] draw from the whole"):
        stream_run(gold_file, "chrf", out=tmp_path / "a", task="summarization",
                   tests="sentence_replacement", seeds=[1], progress=False)
    with pytest.raises(ValueError, match="must be at least 1"):
        stream_run(gold_file, "chrf", out=tmp_path / "b", chunk_size=0, **RUN)


def test_exact_sums_make_means_independent_of_chunking() -> None:
    values = [0.1] * 10 + [1e16, -1e16]
    one, many = StreamSums(), StreamSums()
    one.add(values)
    for value in values:
        many.add([value])
    many.add([float("nan")])
    exact = float(sum(map(Fraction, values)) / 12)
    assert one.mean() == many.mean() == exact
    assert sum(values) / 12 == 0.0  # what a float running sum would have said
    assert many.n_nan == 1 and many.n == 12


def test_stream_command(gold_file: Path, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from blindspot.cli import app

    runner = CliRunner()
    out = tmp_path / "streamed"
    done = runner.invoke(app, ["stream", "--data", str(gold_file), "--metrics", "chrf",
                               "--tests", "truncation", "--seeds", "1", "--chunk-size", "4",
                               "--out", str(out)])
    assert done.exit_code == 0, done.output
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    verdict = summary["metrics"]["chrf.chrf"]["tests"]["truncation"]["status"]
    assert summary["rows"] == 10 and verdict in done.output
    refused = runner.invoke(app, ["stream", "--data", str(gold_file), "--metrics",
                                  "mauve@smollm2", "--tests", "truncation", "--out",
                                  str(tmp_path / "m")])
    assert refused.exit_code == 2
    assert "corpus-level" in refused.output and "cannot be streamed" in refused.output
