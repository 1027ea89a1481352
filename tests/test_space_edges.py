"""Tests of the Space's rough edges: where Browse looks (the folder build-dataset writes to, named
in full), the search budget in words, and a budget too small for one step refused by the CLI.
"""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from blindspot.cli import app
from blindspot.datasets_scripts.build_adversarial import default_out as default_build_out
from blindspot.paths import DATASETS_ENV, datasets_dir
from blindspot.space.adversarial import where_looked
from blindspot.space.tabs.search import summary_markdown

runner = CliRunner()


def test_build_dataset_writes_where_browse_looks(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(DATASETS_ENV, raising=False)
    assert datasets_dir() == tmp_path / "out" / "datasets"
    assert default_build_out("demo") == tmp_path / "out" / "datasets" / "blindspot-demo-adversarial"
    monkeypatch.setenv(DATASETS_ENV, str(tmp_path / "shared"))
    assert default_build_out("demo").parent == datasets_dir() == tmp_path / "shared"


def test_browse_names_the_full_path_it_looked_in(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    empty = where_looked(Path("out/datasets"), 0)
    assert f"No built dataset under `{(tmp_path / 'out' / 'datasets').as_posix()}/`" in empty
    assert "blindspot build-dataset --data demo" in empty and DATASETS_ENV in empty
    assert where_looked(tmp_path, 2).startswith(f"2 folder(s) built with `blindspot "
                                                f"build-dataset` under `{tmp_path.as_posix()}/`")


def _search_results(stopped_by: str | None) -> dict:
    return {"summary": {"reached": 1, "examples": 5, "statuses": {"reached": 1, "budget": 4},
                        "metrics": {}},
            "budget": {"max_calls": 300, "max_seconds": 60.0, "calls_used": 290,
                       "stopped_by": stopped_by},
            "config": {"noise_ratio": 0.1, "candidates": {"note": ""}},
            "metrics": {}, "patterns": []}


def test_search_summary_says_what_the_budget_stopped() -> None:
    assert ("290 metric calls, stopped by the call budget (max 300 metric calls; the next step "
            "needed more).") in summary_markdown(_search_results("max_calls"))
    assert "stopped by the time budget (max 60 s)." in summary_markdown(
        _search_results("max_seconds"))
    assert "stopped by nothing (finished)." in summary_markdown(_search_results(None))


def test_search_refuses_a_budget_too_small_for_one_step(tmp_path: Path) -> None:
    """The first demo translation row's first step scores 29 candidate texts (its words deleted,
    and no replacement source: no embedding model, no MLM)."""
    args = ["search", "--data", "demo", "--metric", "chrf", "--panel", "", "--embedding-model",
            "", "--limit", "2", "--out", str(tmp_path / "s")]
    small = runner.invoke(app, [*args, "--max-calls", "28"])
    assert small.exit_code == 1 and "Traceback" not in small.output
    assert small.stderr.splitlines()[-1].startswith("error: the call budget max_calls=28 is smaller than one "
                                   "search step: the first step of row 'demo-translation-001' "
                                   "scores 29 candidate texts")
    assert not (tmp_path / "s" / "results.json").exists()
    none = runner.invoke(app, [*args, "--max-calls", "0"])
    assert none.exit_code == 1 and "max_calls must be a whole number >= 1" in none.stderr
    enough = runner.invoke(app, [*args, "--max-calls", "29"])
    assert enough.exit_code == 0, enough.output


def test_a_run_shows_one_progress_bar_on_its_status() -> None:
    """gradio puts a progress bar on every output of an event unless told where: a run has six."""
    from blindspot.space.app import build_app

    config = build_app(workspace_root=None).config
    ids = {c.get("props", {}).get("elem_id"): c["id"] for c in config["components"]}
    runs = {d["api_name"]: d for d in config["dependencies"]
            if d.get("api_name") in ("stress_test", "search")}
    assert len(runs["stress_test"]["outputs"]) == 6 and len(runs["search"]["outputs"]) == 6
    assert runs["stress_test"]["show_progress_on"] == [ids["run-status"]]
    assert runs["search"]["show_progress_on"] == [ids["search-status"]]
