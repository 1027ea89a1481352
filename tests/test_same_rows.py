"""The same rows and seeds give the same noise, scores and verdicts through every entry point.

One rule seeds a row (:mod:`blindspot.seeding`: seed, test, level and the row's text), so the CLI
(with an id column), ``run_blindspot`` in memory, streamed (``chunk_size``) and in processes
(``num_proc``), the ``blindspot`` module's ``compute`` (no ids) and the Space's run function (an
upload without an id column) all agree, per test and level. The Ray engine is held to the local
engine's results, byte for byte and on spaCy-token tests too, once, in tests/test_ray_engine.py.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from engine_support import cnndm_rows
from typer.testing import CliRunner

ROWS = 12
#: two spaCy-token tests (where the CLI and compute() used to disagree) and a whitespace one
TESTS = "stopword_removal,preposition_removal,local_swap"
SEEDS = [1, 2]


def _write(path: Path, rows: list[dict[str, Any]], keys: tuple[str, ...]) -> Path:
    with open(path, "w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps({k: row[k] for k in keys}) + "\n")
    return path


def _curves(results: dict[str, Any]) -> dict[str, Any]:
    """Per test: its status and, per level, the noise ratio and the mean score."""
    (entry,) = results["datasets"].values()
    (metric,) = entry["metrics"].values()
    return {name: (test["status"], [(p["level"], round(p["noise_ratio"], 12),
                                     round(p["score_mean"], 12)) for p in test["points"]])
            for name, test in metric["tests"].items()}


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("same-rows")
    rows = cnndm_rows(ROWS)
    with_ids = _write(folder / "gold.jsonl", rows, ("id", "gold", "references"))
    without_ids = _write(folder / "no_ids.jsonl", rows, ("gold", "references"))
    return with_ids, without_ids


def test_every_entry_point_gives_the_same_curves(files: tuple[Path, Path], tmp_path: Path) -> None:
    import evaluate

    from blindspot.cli import app
    from blindspot.protocols.rank import run_blindspot
    from blindspot.space.tabs.stress import data_source, make_request
    from blindspot.space.worker import run_file

    with_ids, without_ids = files
    run = dict(task="summarization", tests=TESTS, seeds=SEEDS, progress=False)
    seen: dict[str, dict[str, Any]] = {}

    cli = CliRunner().invoke(app, ["run", "--data", str(with_ids), "--metrics", "rouge",
                                   "--tests", TESTS, "--seeds", "1,2", "--out",
                                   str(tmp_path / "cli")])
    assert cli.exit_code == 0, cli.output
    seen["cli"] = _curves(json.loads((tmp_path / "cli" / "results.json").read_text()))
    seen["run_blindspot"] = _curves(run_blindspot(str(with_ids), "rouge", **run))
    seen["chunk_size"] = _curves(run_blindspot(str(with_ids), "rouge", chunk_size=5, **run))
    seen["num_proc"] = _curves(run_blindspot(str(with_ids), "rouge", num_proc=2, **run))

    rows = [json.loads(line) for line in without_ids.read_text().splitlines()]
    module = evaluate.load(str(Path(__file__).resolve().parents[1] / "metrics" / "blindspot"))
    seen["compute"] = _curves(module.compute(
        predictions=[r["gold"] for r in rows], references=[r["references"] for r in rows],
        metric="rouge", tests=TESTS, seeds=SEEDS, progress=False)["results"])

    session = tmp_path / "space-session"
    data, task, columns, _ = data_source(
        "upload", "summarization", None, str(without_ids),
        {"hypothesis": "gold", "references": "references", "source": "(none)", "id": "(none)"},
        tmp_path, session)
    request = make_request("rank", data, task, columns, ["rouge"], TESTS.split(","), SEEDS,
                           tmp_path / "space", {})
    request_file = tmp_path / "request.json"
    request_file.write_text(json.dumps(request), encoding="utf-8")
    assert run_file(request_file) == 0
    seen["space"] = _curves(json.loads((tmp_path / "space" / "results.json").read_text()))

    reference = seen["cli"]
    assert sorted(reference) == sorted(TESTS.split(","))
    # the noise really is random and level-dependent: a real curve, not a constant
    for name, (status, points) in reference.items():
        assert status in ("pass", "fail"), name
        assert len({score for _, _, score in points}) > 2, name
    for entry, curves in seen.items():
        assert curves == reference, f"{entry} disagrees with the CLI"
