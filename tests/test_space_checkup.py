"""The Space's check-up tab without a browser: a real check-up of chrF on the demo data run in
the session's worker slot (its anchors recomputed with sacrebleu), and the refusals of what a
visitor may not run (a metric outside the allow-list, too many rows, runs past the limit), with
nothing written outside the session's folder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import sacrebleu

from blindspot.checkup.checks import CHECKS
from blindspot.demo import load_demo
from blindspot.space.limits import SpaceLimits
from blindspot.space.session import RunLimitError, Workspace, session_key
from blindspot.space.tabs.checkup import checkup_request, run_checkup_tab

ROWS = 4
NO_MAPPING = dict.fromkeys(("hypothesis", "references", "source", "id"))


def _files(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())


def test_a_chrf_checkup_runs_in_the_session_folder_and_shows_verdicts_and_anchors(
        tmp_path: Path) -> None:
    space = Workspace(tmp_path / "space", limits=SpaceLimits(max_runs=1))
    outcome, view = run_checkup_tab(space, "s", "chrf", "demo", "translation", None, None,
                                    NO_MAPPING, ROWS, tmp_path / "datasets", space.limits)
    assert outcome == "done" and view is not None
    folder = space.root / session_key("s") / "runs" / "1"
    results = json.loads((folder / "results.json").read_text(encoding="utf-8"))
    assert results["kind"] == "checkup" and results["metric"]["name"] == "chrf.chrf"
    assert results["data"]["rows"] == ROWS and results["data"]["task"] == "translation"
    # one verdict row per declared check, in their order, as results.json has them
    assert [row[0] for row in view.verdicts] == [
        results["checks"][c.name]["title"] for c in CHECKS]
    verdicts = {c.name: row[1] for c, row in zip(CHECKS, view.verdicts, strict=True)}
    assert verdicts == {"batch_order": "pass", "determinism": "pass", "truncation": "pass",
                        "normalisation": "fail", "references": "pass", "anchors": "info"}
    # the anchors in chrF's units, recomputed here with sacrebleu
    rows = list(load_demo("translation"))[:ROWS]
    gold = [sacrebleu.sentence_chrf(r["gold"], [r["reference"]]).score for r in rows]
    anchors = {name: (mean, minus) for name, mean, minus in view.anchors}
    assert anchors["reference"][0] == pytest.approx(100.0)
    assert anchors["empty"][0] == 0.0
    assert anchors["gold"] == (pytest.approx(sum(gold) / ROWS), 0.0)
    unrelated = [sacrebleu.sentence_chrf(rows[(i + 1) % ROWS]["gold"], [r["reference"]]).score
                 for i, r in enumerate(rows)]
    assert anchors["unrelated_gold"][0] == pytest.approx(sum(unrelated) / ROWS)
    assert "## Sanity anchors (score units): **info**" in view.report
    assert not view.report.startswith("# ")  # the title is the tab's
    assert [Path(f).name for f in view.files] == ["results.json", "report.md"]
    # everything the run wrote is in the session's run folder
    assert {p.split("/")[0] for p in _files(space.root)} == {session_key("s")}
    assert _files(space.root / session_key("s")) == [
        "runs/1/report.md", "runs/1/request.json", "runs/1/results.json", "runs/1/run.log"]
    # the session's run limit counts check-ups: a second one is refused before it starts
    with pytest.raises(RunLimitError, match="this session has used its 1 run, the limit"):
        run_checkup_tab(space, "s", "chrf", "demo", "translation", None, None, NO_MAPPING,
                        ROWS, tmp_path / "datasets", space.limits)


@pytest.mark.parametrize(("metric", "message"), [
    ("rouge@/etc", "model '/etc' of metric spec 'rouge@/etc' is not allowed here"),
    ("./my_metric.py:score", "bad metric spec './my_metric.py:score'.*paths and scripts are "
                             "not accepted here"),
    ("nometric", "unknown metric 'nometric'"),
    ("bertscore@roberta-large", "Hub models and local paths are off on this Space"),
    ("", "pick the metric to check up"),
])
def test_metrics_outside_the_allow_list_are_refused_before_anything_is_written(
        tmp_path: Path, metric: str, message: str) -> None:
    space = Workspace(tmp_path / "space")
    with pytest.raises(ValueError, match=message):
        run_checkup_tab(space, "s", metric, "demo", "summarization", None, None, NO_MAPPING,
                        ROWS, tmp_path / "datasets", space.limits)
    assert _files(tmp_path) == []  # no request, no run folder, nothing outside the session
    assert not (space.root / session_key("s") / "runs").exists()


def test_rows_are_bounded_by_the_space_limits() -> None:
    limits = SpaceLimits(max_rows=10)
    assert checkup_request("rouge", "demo", "summarization", None, 10, limits) == {
        "protocol": "checkup", "metrics": "rouge", "data": "demo", "task": "summarization",
        "columns": None, "options": {"rows": 10}, "out": None}
    for rows in (11, 1, 2.5, None):
        with pytest.raises(ValueError, match=r"rows must be a whole number from 2 to 10 \(the "
                                             r"limit of this Space\)"):
            checkup_request("rouge", "demo", "summarization", None, rows, limits)
