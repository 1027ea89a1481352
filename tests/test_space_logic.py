"""The Space's logic without a browser: word diff, upload checks, the blind-spot matrix, built
dataset views, per-session folders and run processes (isolation, cancellation), the tab registry,
the protocol forms of the stress tab and the search tab's request and result views."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from space_support import TINY_ROWS, build_tiny_dataset
from tqdm.auto import tqdm
from typer.testing import CliRunner

from blindspot import progress
from blindspot.space import adversarial, worker
from blindspot.space.limits import LIMIT_SETTINGS, SpaceLimits
from blindspot.space.matrix import blindspot_matrix, headers, matrix_csv_rows, matrix_html
from blindspot.space.session import Workspace, progress_text, session_key
from blindspot.space.uploads import MAX_UPLOAD_BYTES, UploadError, check_roles, read_results, read_upload
from blindspot.space.worddiff import changed_words, diff_html, word_diff

# -- word diff ------------------------------------------------------------------------------------


def test_word_diff_labels_removed_and_added_words_in_reading_order() -> None:
    segments = word_diff("the cat sat on the mat", "the cat sat the big mat")
    assert segments == [("the cat sat ", None), ("on ", "-"), ("the ", None), ("big ", "+"),
                        ("mat", None)]
    assert changed_words(segments) == {"removed": 1, "added": 1}
    # a replaced word is a removal then an addition
    assert word_diff("a b c", "a x c") == [("a ", None), ("b ", "-"), ("x ", "+"), ("c", None)]
    assert word_diff("same text", "same text") == [("same text", None)]


def test_diff_html_escapes_markup_and_marks_changes() -> None:
    page = diff_html("x < y and z", "x < y z")
    assert "&lt;" in page and "<" + "del" in page and ">and </del>" in page
    assert "<script>" not in diff_html("a", "<script>")


# -- uploads --------------------------------------------------------------------------------------


def _write(path: Path, data: bytes | str) -> Path:
    if isinstance(data, str):
        data = data.encode("utf-8")
    path.write_bytes(data)
    return path


def test_empty_and_blank_uploads_are_refused(tmp_path: Path) -> None:
    for name, data in (("empty.jsonl", b""), ("blank.csv", b"\n  \n"), ("none.parquet", b"")):
        with pytest.raises(UploadError, match=rf"{name} is empty"):
            read_upload(_write(tmp_path / name, data))


def test_non_utf8_upload_names_the_byte_and_line(tmp_path: Path) -> None:
    path = _write(tmp_path / "latin.csv", b"gold,id\nok,1\n" + "café,2\n".encode("latin-1"))
    with pytest.raises(UploadError) as info:
        read_upload(path)
    assert "latin.csv is not UTF-8 text (byte 0xe9 on line 3)" in str(info.value)
    assert str(tmp_path) not in str(info.value)


def test_an_upload_at_the_size_limit_is_refused_before_reading(tmp_path: Path) -> None:
    path = tmp_path / "big.csv"
    with path.open("wb") as handle:  # sparse: no 20 MB written to the disk
        handle.truncate(MAX_UPLOAD_BYTES)
    with pytest.raises(UploadError, match=r"big.csv is 20.0 MB; uploads must be smaller than "
                                          r"20.0 MB on this Space"):
        read_upload(path)
    small = SpaceLimits(max_upload_mb=0.001)  # the operator's limit, 1,000 bytes
    with pytest.raises(UploadError, match=r"uploads must be smaller than 0.0 MB"):
        read_upload(_write(tmp_path / "k.csv", "gold\n" + "x" * 1000 + "\n"), limits=small)


def test_an_upload_over_the_row_limit_is_refused(tmp_path: Path) -> None:
    path = _write(tmp_path / "rows.jsonl", "".join(f'{{"gold": "text {i}"}}\n' for i in range(12)))
    assert read_upload(path, limits=SpaceLimits(max_rows=12)).dataset.num_rows == 12
    with pytest.raises(UploadError, match=r"rows.jsonl has 12 rows; this Space reads at most 11 "
                                          r"rows per upload: upload the first 11 rows"):
        read_upload(path, limits=SpaceLimits(max_rows=11))


@pytest.mark.parametrize("name, data, message", [
    ("evil.py", b"import os\n", "evil.py: unsupported file type '.py'"),
    ("run.csv", b"#!/usr/bin/env python\nimport os\n", "run.csv is a script, not a data file"),
    ("prog.jsonl", b"\x7fELF\x02\x01\x01", "prog.jsonl is a program (ELF executable)"),
    ("zipped.csv", b"PK\x03\x04rest", "zipped.csv is a zip archive"),
    ("fake.parquet", b"gold\nx\n", "fake.parquet is not a Parquet file (it lacks the PAR1"),
    ("nul.csv", b"gold\nfine\nbad\x00row\n", "nul.csv holds binary data (a NUL byte on line 3)"),
    ("code.jsonl", b"print('hi')\n", "code.jsonl is not JSON: it does not start with { or ["),
])
def test_uploads_are_data_by_content_as_well_as_name(tmp_path: Path, name: str, data: bytes,
                                                     message: str) -> None:
    with pytest.raises(UploadError) as info:
        read_upload(_write(tmp_path / name, data))
    assert message in str(info.value)
    assert str(tmp_path) not in str(info.value)


def test_unsupported_type_is_refused(tmp_path: Path) -> None:
    with pytest.raises(UploadError, match=r"unsupported file type '.txt'"):
        read_upload(_write(tmp_path / "data.txt", "gold\nx\n"))


def test_csv_with_quoted_line_breaks_keeps_every_row(tmp_path: Path) -> None:
    text = ('id,gold,reference\n1,"First line.\nSecond line, with a comma.",ref one\n'
            '2,Plain text.,"ref\ntwo"\n3,Third.,ref three\n')
    table = read_upload(_write(tmp_path / "multi.csv", text))
    assert table.dataset.num_rows == 3
    assert table.dataset["gold"][0] == "First line.\nSecond line, with a comma."
    assert table.dataset["reference"][1] == "ref\ntwo"
    assert table.roles == {"hypothesis": "gold", "references": "reference", "source": None,
                           "id": "id"}


def test_broken_csv_is_a_readable_error_without_the_server_path(tmp_path: Path) -> None:
    path = _write(tmp_path / "broken.csv", 'gold,id\n"never closed,1\nnext,2\n')
    with pytest.raises(UploadError) as info:
        read_upload(path)
    message = str(info.value)
    assert message.startswith("broken.csv: could not be read as csv")
    assert "quote fields" in message and str(tmp_path) not in message


def test_missing_hypothesis_column_names_the_columns_and_the_fix(tmp_path: Path) -> None:
    table = read_upload(_write(tmp_path / "cols.jsonl",
                               '{"text_a": "A cat.", "target": "The cat."}\n'
                               '{"text_a": "A dog.", "target": "The dog."}\n'))
    assert table.roles["hypothesis"] is None
    with pytest.raises(UploadError, match=r"no hypothesis column .* \['text_a', 'target'\]"):
        check_roles(table, table.roles)
    roles = check_roles(table, {"hypothesis": "text_a", "references": "target"})
    assert roles == {"hypothesis": "text_a", "references": "target", "source": None, "id": None}
    with pytest.raises(UploadError, match=r"source column 'src' not found"):
        check_roles(table, {"hypothesis": "text_a", "source": "src"})


def test_empty_hypothesis_rows_are_named(tmp_path: Path) -> None:
    table = read_upload(_write(tmp_path / "holes.jsonl",
                               '{"gold": "A cat."}\n{"gold": ""}\n{"gold": null}\n'))
    with pytest.raises(UploadError, match=r"in 2 row\(s\) \(row 2, 3\)"):
        check_roles(table, table.roles)


def test_results_uploads_are_checked(tmp_path: Path) -> None:
    with pytest.raises(UploadError, match=r"bad.json is not valid JSON \(line 1"):
        read_results(_write(tmp_path / "bad.json", "{nope"))
    with pytest.raises(UploadError, match=r"has no 'datasets'"):
        read_results(_write(tmp_path / "other.json", '{"a": 1}'))
    with pytest.raises(UploadError, match=r"'self_bias' protocol"):
        read_results(_write(tmp_path / "bias.json",
                            '{"schema_version": 1, "protocol": "self_bias", "datasets": {}}'))
    for protocol in ("deviation", "search"):  # their results have no 'datasets'
        with pytest.raises(UploadError, match=rf"{protocol}.json holds results of the "
                                              rf"'{protocol}' protocol"):
            read_results(_write(tmp_path / f"{protocol}.json",
                                json.dumps({"schema_version": 1, "protocol": protocol})))
    with pytest.raises(UploadError, match=r"schema 99"):
        read_results(_write(tmp_path / "new.json", '{"schema_version": 99, "datasets": {}}'))


# -- the blind-spot matrix ------------------------------------------------------------------------

def _results(metric: str, verdicts: dict[str, tuple[str, float | None]],
             within_noise: bool | None = None) -> dict:
    tests = {test: {"test": test, "category": "fluency", "status": status,
                    "relative_change": change, "within_noise": within_noise,
                    "explanation": f"{test} explained"}
             for test, (status, change) in verdicts.items()}
    return {"schema_version": 2, "protocol": "rank", "datasets": {
        "demo": {"task": "summarization", "rows": 3, "metrics": {
            metric: {"error": None, "tests": tests}}}}}


def test_matrix_puts_tests_in_rows_and_metrics_in_columns() -> None:
    runs = [("run 1", _results("rouge.rougeL", {"truncation": ("fail", 4.94),
                                                "negation": ("pass", -12.345)})),
            ("old.json", _results("chrf", {"negation": ("error", None),
                                           "repetition": ("undecided", None)}))]
    matrix = blindspot_matrix(runs)
    assert headers(matrix.columns) == ["rouge.rougeL · run 1", "chrf · old.json"]
    texts = {test: [c.text for c in cells] for test, _, cells in matrix.rows}
    assert texts == {"truncation": ["✗ +4.9%", "—"], "negation": ["✓ -12.3%", "error"],
                     "repetition": ["—", "n/a"]}
    assert matrix.failures() == [1, 0]
    assert matrix_csv_rows(matrix)[0] == ["test", "category", "rouge.rougeL · run 1",
                                          "chrf · old.json"]
    page = matrix_html(matrix)
    assert matrix.judged() == [2, 0]  # chrf erred on one test and could not judge the other
    assert page.count("<tr>") == 1 + 3 + 1 and 'class="fail"' in page
    assert "<td><b>1 / 2 judged</b></td><td><b>0 / 0 judged</b></td>" in page
    assert "out of the tests it judged" in page


def test_matrix_marks_fails_within_noise_apart() -> None:
    runs = [("run 1", _results("rouge.rougeL", {"token_drop": ("fail", 1.8)}, within_noise=True)),
            ("run 2", _results("rouge.rougeL", {"token_drop": ("fail", 4.9)}, within_noise=False))]
    matrix = blindspot_matrix(runs)
    (_, _, cells), = matrix.rows
    assert [(c.status, c.text) for c in cells] == [("fail_within_noise", "✗~ +1.8%"),
                                                   ("fail", "✗ +4.9%")]
    assert matrix.failures() == [1, 1]  # a blind spot either way; the mark says how sure
    page = matrix_html(matrix)
    assert 'class="fail_within_noise" style="background:#fbe7c6"' in page
    assert 'title="fail (✗, rule —): token_drop explained; within the noise' in page
    assert "more seeds (--seeds, for the random tests) could change it" in page
    assert "more seeds" not in matrix_html(blindspot_matrix(runs[1:]))


def test_matrix_of_nothing_says_what_to_do() -> None:
    assert "No runs yet" in matrix_html(blindspot_matrix([]))


# -- built datasets -------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def datasets_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("datasets")
    build_tiny_dataset(root / "tiny")
    (root / "not-a-dataset").mkdir()
    return root


def test_built_folders_are_listed_and_read(datasets_root: Path) -> None:
    from blindspot.demo import read_demo
    from blindspot.perturbations import get_perturbation

    folders = adversarial.dataset_folders(datasets_root)
    assert [adversarial.folder_label(datasets_root, f) for f in folders] == ["tiny"]
    record = adversarial.read_build(folders[0])
    names = [row[0] for row in adversarial.config_rows(record)]
    assert names == [f"truncation-{lv}" for lv in ("0.1", "0.2", "0.3", "0.4", "0.5")]
    rows = adversarial.gold_vs_noised(folders[0], "truncation-0.3")
    gold = read_demo("summarization")[:TINY_ROWS]
    assert [r["id"] for r in rows] == [g["id"] for g in gold]
    expected = get_perturbation("truncation").apply(gold[0]["gold"], 0.3, 1, row_id=gold[0]["id"])
    assert rows[0]["gold"] == gold[0]["gold"] and rows[0]["perturbed"] == expected.perturbed
    assert "tiny-demo" in adversarial.summary_markdown(record)
    with pytest.raises(ValueError, match="no config 'nope-1'"):
        adversarial.gold_vs_noised(folders[0], "nope-1")


def test_folders_outside_the_datasets_folder_are_refused(datasets_root: Path) -> None:
    for label in ("../tiny", "/etc", "not-a-dataset"):
        with pytest.raises(ValueError, match="no built dataset"):
            adversarial.resolve_folder(datasets_root, label)


def test_stress_data_from_a_built_dataset_is_its_gold_config(datasets_root: Path,
                                                             tmp_path: Path) -> None:
    from blindspot.space.tabs.stress import data_source

    data, task, columns, label = data_source("built dataset", "translation", "tiny", None, {},
                                             datasets_root, tmp_path)
    assert Path(data) == datasets_root / "tiny" / "data" / "gold" / "test.parquet"
    assert task == "summarization" and label == "tiny"
    assert columns == {"hypothesis": "gold", "references": "references", "source": "source",
                       "id": "id"}


def test_stress_request_checks_before_any_process(tmp_path: Path) -> None:
    from blindspot.space.tabs.stress import (
        chosen_metrics,
        data_source,
        make_request,
        parse_options,
        parse_seeds,
    )

    with pytest.raises(ValueError, match="no open_ended corpus|no translation_paragraph"):
        data_source("demo", "translation_paragraph", None, None, {}, tmp_path, tmp_path)
    with pytest.raises(ValueError, match="unknown test 'nonsense'"):
        make_request("rank", "demo", "summarization", None, ["rouge"], ["nonsense"], [1],
                     tmp_path, {})
    with pytest.raises(ValueError, match="unknown metric 'nometric'"):
        make_request("rank", "demo", "summarization", None, ["nometric"], ["truncation"], [1],
                     tmp_path, {})
    with pytest.raises(ValueError, match="unknown protocol 'vote'"):
        make_request("vote", "demo", "summarization", None, ["rouge"], ["truncation"], [1],
                     tmp_path, {})
    assert chosen_metrics(["rouge"], " chrf, rouge ") == ["rouge", "chrf"]
    with pytest.raises(ValueError, match="at least one metric"):
        chosen_metrics([], " ")
    assert parse_seeds("1, 2,3") == [1, 2, 3]
    with pytest.raises(ValueError, match="whole numbers"):
        parse_seeds("1,a")
    assert parse_options("tolerance=0.001\nlevels={\"truncation\": [\"0.1\"]}") == {
        "tolerance": 0.001, "levels": {"truncation": ["0.1"]}}


def test_an_upload_is_copied_into_the_session_folder(tmp_path: Path) -> None:
    from blindspot.space.tabs.stress import data_source

    upload = _write(tmp_path / "mine.jsonl", '{"text": "A cat sat.", "ref": "The cat sat."}\n')
    session = tmp_path / "session"
    data, task, columns, label = data_source(
        "upload", "translation", None, str(upload), {"hypothesis": "text", "references": "ref",
                                                     "source": "(none)", "id": "(none)"},
        tmp_path, session)
    assert Path(data) == session / "uploads" / "mine.jsonl" and Path(data).is_file()
    assert task == "translation" and label == "mine.jsonl"
    assert columns == {"hypothesis": "text", "references": "ref", "source": None, "id": None}


# -- perturb tab ----------------------------------------------------------------------------------

TEXT = ("The council approved the new budget on Tuesday. It will fund 12 more teachers. "
        "Mayor Helen Okafor said the plan was fair.")


def test_perturb_text_matches_the_library_and_its_diff() -> None:
    from blindspot.perturbations import get_perturbation
    from blindspot.space.tabs.perturb import perturb_text

    result = perturb_text(TEXT, "truncation", "0.3", 1)
    direct = get_perturbation("truncation").apply(TEXT, 0.3, 1)
    assert result["perturbed"] == direct.perturbed and result["applied"]
    assert result["noise_ratio"] == direct.noise_ratio
    # 22 words, floor(22 * 0.3) = 6 dropped, "Helen" gets the final period: 6 deletions and
    # 1 substitution over 22 words; the diff shows the 7 old words out and "Helen." in
    assert result["perturbed"] == " ".join(TEXT.split()[:16]) + "."
    assert result["noise_ratio"] == pytest.approx(7 / 22)
    assert result["changes"] == {"removed": 7, "added": 1}
    assert result["segments"][-1] == ("Helen.", "+")


def test_tests_that_cannot_run_here_say_why() -> None:
    from blindspot.space.tabs.perturb import every_test, perturb_text

    with pytest.raises(ValueError, match="needs the source text"):
        perturb_text(TEXT, "copy_source", "-", 1)
    with pytest.raises(ValueError, match="paste a text"):
        perturb_text("  ", "truncation", "0.1", 1)
    rows = {r["test"]: r for r in every_test(TEXT, 1, source=None, task="summarization")}
    assert rows["bert_diverge"]["skipped"].startswith("needs mlm")
    assert rows["copy_source"]["skipped"].startswith("needs the source text")
    assert rows["truncation"]["level"] == "0.5" and rows["truncation"]["noise_ratio"] > 0


# -- sessions and runs ----------------------------------------------------------------------------

def test_sessions_get_separate_folders_and_forgetting_one_keeps_the_other(tmp_path: Path) -> None:
    space = Workspace(tmp_path)
    a, b = space.folder("session-a"), space.folder("session-b")
    assert a != b and a.parent == b.parent == tmp_path and "session-a" not in str(a)
    assert space.new_run_folder("session-a").name == "1"
    assert space.new_run_folder("session-a").name == "2"
    assert space.new_run_folder("session-b").name == "1"
    space.forget("session-a")
    assert not a.exists() and (b / "runs" / "1").is_dir()
    assert session_key("session-a") != session_key("session-b")


def _request(out: Path, tests: list[str], seeds: list[int]) -> dict:
    return {"protocol": "rank", "data": "demo", "task": "summarization", "columns": None,
            "metrics": ["rouge"], "tests": tests, "seeds": seeds, "out": str(out), "options": {}}


def test_a_run_process_writes_the_report_and_reports_progress(tmp_path: Path) -> None:
    from blindspot.protocols.rank import run_blindspot
    from blindspot.space.tabs.compare import collect_runs
    from blindspot.space.tabs.stress import result_views

    space = Workspace(tmp_path / "space")
    folder = space.new_run_folder("s")
    job = space.start("s", _request(folder, ["truncation"], [1]), folder)
    events = list(job.events())
    assert job.returncode == 0 and events[0]["event"] == "start" and events[-1]["event"] == "done"
    scoring = [e for e in events if e["event"] == "progress" and e["desc"] == "scoring"]
    assert scoring[-1]["n"] == scoring[-1]["total"] == 6  # gold + 5 truncation levels
    # every bar of the run reports through blindspot.progress, the perturbing one included
    perturbing = [e for e in events if e["event"] == "progress" and e["desc"] == "perturbing"]
    assert perturbing[-1]["n"] == perturbing[-1]["total"] == 5  # 5 truncation levels x seed 1
    direct = run_blindspot("demo", ["rouge"], task="summarization", tests=["truncation"],
                           seeds=[1], out=tmp_path / "direct", progress=False)
    written = (folder / "results.json").read_text(encoding="utf-8")
    assert written == (tmp_path / "direct" / "results.json").read_text(encoding="utf-8")
    runs, errors = collect_runs([{"label": "run 1", "results": str(folder / "results.json")}],
                                ["run 1"], [])
    assert errors == [] and runs[0][1] == json.loads(written)
    # the page's verdict table and legend are the report's: the run's tolerance and noise cap
    html_view, markdown = result_views(direct, folder)
    assert markdown == "" and "<td>truncation</td><td>fluency</td>" in html_view
    assert "(tolerance 1e-05, noise cap 0.6); the rules of this run:" in html_view
    assert "monotone_decrease: the score strictly decreases" in html_view
    assert 'id="expectations"' not in html_view  # no examination test ran


def test_an_examination_run_shows_the_expectations_as_the_report_does(tmp_path: Path) -> None:
    from blindspot.demo import read_demo
    from blindspot.protocols.rank import run_blindspot
    from blindspot.report.views import EXPECTATIONS_TITLE, expectation_lines, expectation_rows
    from blindspot.space.tabs.stress import verdicts_html

    rows = read_demo("summarization")[:4]
    results = run_blindspot({k: [r[k] for r in rows] for k in rows[0]}, ["rouge"],
                            task="summarization", tests=["root_negation", "word_drop"],
                            seeds=[1], out=tmp_path / "run", progress=False)
    data = results["datasets"]["data"]
    expected = expectation_rows(data)
    assert [r.test for r in expected] == ["decreasing_with_intensity", "negation_drops_sharply"]
    page = verdicts_html(results)
    assert EXPECTATIONS_TITLE in page and 'id="expectations"' in page
    for row in expected:
        cell = row.cells[0]
        assert (f'<td>{row.test}</td><td>{row.category}</td><td class="{cell.status}"'
                in page) and f">{cell.text}</td>" in page
    assert all(line.split(";")[0] in page for line in expectation_lines(data))


def test_stop_ends_the_run_process(tmp_path: Path) -> None:
    space = Workspace(tmp_path / "space")
    folder = space.new_run_folder("s")
    job = space.start("s", _request(folder, ["fluency"], [1, 2, 3, 4, 5]), folder)
    for event in job.events():
        if event["event"] == "progress":
            break
    assert space.cancel("s") is True
    assert job.cancelled and job.returncode is not None and job.returncode != 0
    assert not (folder / "results.json").exists()
    assert space.cancel("s") is False  # nothing left to stop


def test_stop_before_the_run_starts_voids_it(tmp_path: Path) -> None:
    space = Workspace(tmp_path / "space")
    ticket = space.ticket("s")
    assert space.cancel("s") is False
    assert space.start("s", _request(tmp_path / "out", ["truncation"], [1]), tmp_path / "run",
                       ticket) is None
    assert not (tmp_path / "run").exists()
    fresh = space.ticket("s")
    job = space.start("s", _request(tmp_path / "out", ["truncation"], [1]), tmp_path / "run",
                      fresh)
    assert job is not None
    job.cancel()


def test_a_failing_run_reports_its_error(tmp_path: Path) -> None:
    space = Workspace(tmp_path / "space")
    folder = space.new_run_folder("s")
    request = _request(folder, ["truncation"], [1]) | {"data": str(tmp_path / "missing.jsonl")}
    job = space.start("s", request, folder)
    list(job.events())
    assert job.returncode == 1 and "missing.jsonl" in job.error
    assert "Traceback" in job.log_tail(50)


# -- registry, app and command --------------------------------------------------------------------

def test_tab_registry_orders_tabs_and_refuses_duplicates() -> None:
    from blindspot.space.tab import TABS, SpaceTab, register_tab, tabs_in_order

    assert [t.name for t in tabs_in_order()][:6] == ["perturb", "stress", "search", "compare",
                                                     "checkup", "browse"]
    with pytest.raises(ValueError, match="already names the Space tab 'perturb'"):
        register_tab(SpaceTab("perturb", "Again", _extra_tab))
    extra = register_tab(SpaceTab("extra", "Extra", _extra_tab, 35))
    try:
        from blindspot.space.app import build_app

        demo = build_app(workspace_root=None)
        ids = [c.get("props", {}).get("elem_id") for c in demo.config["components"]]
        assert "tab-extra" in ids and "extra-marker" in ids
        order = [i for i in ids if i and i.startswith("tab-")]
        # order 35 twice: by name, the check-up tab first
        assert order == ["tab-perturb", "tab-stress", "tab-search", "tab-compare", "tab-checkup",
                         "tab-extra", "tab-browse", "tab-leaderboard"]
        assert {"checkup-metric", "checkup-rows", "checkup-verdicts", "checkup-anchors",
                "checkup-data-upload"} <= set(ids)
    finally:
        TABS.unregister(extra.name)


def _extra_tab(context) -> None:
    import gradio as gr

    gr.Markdown("extra", elem_id="extra-marker")


def test_space_command_serves_on_loopback_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    import blindspot.space
    from blindspot.cli import app

    calls = []
    monkeypatch.setattr(blindspot.space, "serve", lambda *args: calls.append(args))
    for variable in LIMIT_SETTINGS.values():
        monkeypatch.delenv(variable, raising=False)
    result = CliRunner().invoke(app, ["space", "--port", "7999"])
    assert result.exit_code == 0, result.output
    assert calls == [("127.0.0.1", 7999, None, SpaceLimits())]
    # the operator's limits: environment first, flags over it
    monkeypatch.setenv("BLINDSPOT_SPACE_MAX_ROWS", "100")
    monkeypatch.setenv("BLINDSPOT_SPACE_MAX_RUNS", "3")
    result = CliRunner().invoke(app, ["space", "--max-runs", "7", "--allow-hub-models",
                                      "--max-upload-mb", "2.5"])
    assert result.exit_code == 0, result.output
    assert calls[-1][3] == SpaceLimits(max_upload_mb=2.5, max_rows=100, max_runs=7,
                                       allow_hub_models=True)
    assert calls[-1][3].max_upload_bytes == 2_500_000
    monkeypatch.setenv("BLINDSPOT_SPACE_MAX_ROWS", "many")
    result = CliRunner().invoke(app, ["space"])
    assert result.exit_code == 1
    assert "BLINDSPOT_SPACE_MAX_ROWS='many' must be a whole number" in result.output


# -- the Hugging Face Space folder ----------------------------------------------------------------

SPACES = Path(__file__).resolve().parents[1] / "spaces"
REQUIREMENTS = Path(__file__).resolve().parents[1] / "requirements"


def _names(path: Path) -> set[str]:
    import re

    lines = [line.split("#")[0].strip() for line in path.read_text(encoding="utf-8").splitlines()]
    # PEP 503 names: rouge_score and rouge-score are one package
    return {re.sub(r"[-_.]+", "-", re.split(r"[<>=!~\[; ]", line)[0]).lower() for line in lines if line}


def test_space_card_and_requirements_match_the_project() -> None:
    import gradio
    import yaml

    card = (SPACES / "README.md").read_text(encoding="utf-8")
    meta = yaml.safe_load(card.split("---\n")[1])
    assert meta["sdk"] == "gradio" and meta["sdk_version"] == gradio.__version__
    assert (SPACES / meta["app_file"]).is_file()
    # every package the Space installs is one the project pins and tests with
    pinned = set().union(*(_names(REQUIREMENTS / f) for f in
                           ("base.txt", "nodeps.txt", "constraints.txt")))
    assert _names(SPACES / "requirements.txt") - pinned == {"blindspot-nlg"}


def test_space_entry_point_builds_the_app_without_launching(monkeypatch: pytest.MonkeyPatch,
                                                            tmp_path: Path) -> None:
    import runpy

    monkeypatch.chdir(tmp_path)
    namespace = runpy.run_path(str(SPACES / "app.py"), run_name="space_app")
    demo = namespace["demo"]
    assert demo.analytics_enabled is False
    ids = {c.get("props", {}).get("elem_id") for c in demo.config["components"]}
    assert {"tab-perturb", "tab-stress", "tab-search", "tab-compare", "tab-browse"} <= ids


# -- the stress tab's protocol forms --------------------------------------------------------------

def test_the_stress_tab_offers_every_protocol_but_search() -> None:
    from blindspot.protocols.interface import PROTOCOLS
    from blindspot.space.forms import NOT_IN_SPACE, OWN_TABS, stress_protocols
    from blindspot.space.tabs.stress import test_choices

    assert stress_protocols() == ["rank", "correlation", "deviation", "preference"]
    assert set(stress_protocols()) | set(OWN_TABS) | set(NOT_IN_SPACE) == set(PROTOCOLS)
    # the suites of the checklists, the examination paper and MENLI are picked like the others
    assert {"menli", "examination", "checklist"} <= set(test_choices())


def test_requests_carry_only_the_inputs_each_protocol_reads(tmp_path: Path) -> None:
    from blindspot.space.tabs.stress import make_request

    def request(protocol: str, tests: list[str]) -> dict:
        return make_request(protocol, "data.csv", "summarization", None, ["bleu"], tests,
                            [1, 2], tmp_path, {"mode": "ref-free"})

    rank = request("rank", ["menli"])
    assert rank["tests"] == ["menli"] and rank["seeds"] == [1, 2]
    deviation = request("deviation", [])
    assert "tests" not in deviation and deviation["seeds"] == [1, 2]
    for protocol in ("preference", "correlation"):
        built = request(protocol, [])
        assert "tests" not in built and "seeds" not in built
        assert built["protocol"] == protocol and built["options"] == {"mode": "ref-free"}
    with pytest.raises(ValueError, match="at least one test"):
        request("rank", [])


def test_protocols_refuse_data_they_cannot_read(tmp_path: Path) -> None:
    from blindspot.space.tabs.stress import data_source

    for protocol in ("preference", "correlation"):
        with pytest.raises(ValueError, match=rf"the {protocol} protocol does not run on demo "
                                             r"data; choose upload"):
            data_source("demo", "translation", None, None, {}, tmp_path, tmp_path, protocol)
    data, task, columns, label = data_source("demo", "summarization", None, None, {}, tmp_path,
                                             tmp_path, "deviation")
    assert (data, task, columns, label) == ("demo", "summarization", None, "demo summarization")


@pytest.mark.shared_data
def test_a_menli_upload_needs_its_mode_columns_not_a_hypothesis(tmp_path: Path) -> None:
    from space_support import write_menli_slice

    from blindspot.space.tabs.stress import data_source
    from blindspot.space.uploads import check_upload

    path = write_menli_slice(tmp_path / "menli.csv")
    table = read_upload(path)
    assert table.dataset.num_rows == 24 and table.roles["hypothesis"] is None
    with pytest.raises(UploadError, match="no hypothesis column"):  # the rank protocol's check
        check_upload(table, "rank", table.roles)
    assert check_upload(table, "preference", table.roles) is None
    data, _, columns, label = data_source("upload", "translation", None, str(path), {}, tmp_path,
                                          tmp_path / "session", "preference", {})
    assert columns is None and label == "menli.csv"
    assert Path(data).read_bytes() == path.read_bytes()
    # without the adversarial column of the ref-based mode; the ref-free mode does not read it
    lines = path.read_text(encoding="utf-8").splitlines()
    header = lines[0].split(",")
    dropped = tmp_path / "dropped.csv"
    dropped.write_text("\n".join(line.replace(",hyp_adv_based,", ",other,", 1) if k == 0 else line
                                 for k, line in enumerate(lines)) + "\n", encoding="utf-8")
    assert "hyp_adv_based" in header
    short = read_upload(dropped)
    with pytest.raises(UploadError, match=r"dropped.csv: the ref-based preference protocol .* "
                                          r"missing: \['hyp_adv_based'\]"):
        check_upload(short, "preference", short.roles, {})
    assert check_upload(short, "preference", short.roles, {"mode": "ref-free"}) is None
    with pytest.raises(UploadError, match="mode"):
        check_upload(short, "preference", short.roles, {"mode": "sideways"})


def _judgments(path: Path, rows: int, drop: str | None = None) -> Path:
    from conftest import SHARED_DATA

    lines = (SHARED_DATA / "summeval_expert_judgments.jsonl").read_text("utf-8").splitlines()
    kept = [json.loads(line) for line in lines[:rows]]
    path.write_text("".join(json.dumps({k: v for k, v in row.items() if k != drop}) + "\n"
                            for row in kept), encoding="utf-8")
    return path


@pytest.mark.shared_data
def test_a_judgment_upload_needs_ids_systems_and_references(tmp_path: Path) -> None:
    from blindspot.space.tabs.stress import protocol_file_option
    from blindspot.space.uploads import check_upload

    table = read_upload(_judgments(tmp_path / "judged.jsonl", 32))
    with pytest.raises(UploadError, match="no reference column .* upload the references file"):
        check_upload(table, "correlation", table.roles, {})
    references = _write(tmp_path / "refs.jsonl", '{"id": "x", "gold": "A text."}\n')
    options = protocol_file_option("correlation", str(references), {"criteria": "x"},
                                   tmp_path / "session")
    kept = tmp_path / "session" / "uploads" / "refs.jsonl"
    assert options == {"criteria": "x", "references": str(kept)} and kept.is_file()
    assert check_upload(table, "correlation", table.roles, options) == {"hypothesis": "summary",
                                                                        "id": "id"}
    no_system = read_upload(_judgments(tmp_path / "nosys.jsonl", 4, drop="system"))
    with pytest.raises(UploadError, match="nosys.jsonl has no system column"):
        check_upload(no_system, "correlation", no_system.roles, options)
    # the rank protocol takes no protocol file: the option is left alone
    assert protocol_file_option("rank", str(references), {}, tmp_path) == {}


@pytest.mark.shared_data
def test_a_preference_run_shows_its_report_tables_and_plot(tmp_path: Path) -> None:
    from space_support import write_menli_slice

    from blindspot.protocols.preference_run import run_preference
    from blindspot.space.tabs.stress import make_request, report_outputs, result_views

    data = write_menli_slice(tmp_path / "menli.csv")
    space = Workspace(tmp_path / "space")
    folder = space.new_run_folder("s")
    request = make_request("preference", str(data), "translation", None, ["bleu"], [], [1],
                           folder, {})
    assert space.run_to_end("s", request, folder, None) == "done"
    direct = run_preference(str(data), ["bleu"], out=tmp_path / "direct", progress=False)
    results, plots, files = report_outputs(folder)
    assert results == direct
    assert [Path(p).relative_to(folder).as_posix() for p in plots] == [
        "plots/01-menli.csv.png"]
    assert [Path(f).name for f in files] == ["results.json", "report.md", "report.html"]
    html_view, markdown = result_views(results, folder)
    entry = direct["datasets"]["menli.csv"]["metrics"]["bleu.bleu"]
    assert html_view == "" and "bleu.bleu" in markdown and "![" not in markdown
    assert entry["n"] == 24 and f"{entry['mean']:.3f}" in markdown


# -- the search tab -------------------------------------------------------------------------------

def test_search_requests_are_checked_before_any_process(tmp_path: Path) -> None:
    from blindspot.space.tabs.search import search_request

    request = search_request("demo", "translation", None, "chrf", ["bleu", "chrf"], 0.1, 500.0,
                             None, 3.0, 2, tmp_path)
    assert request == {"protocol": "search", "data": "demo", "task": "translation",
                       "columns": None, "metrics": ["chrf"], "out": str(tmp_path),
                       "options": {"noise_ratio": 0.1, "panel": ["bleu"], "max_calls": 500,
                                   "max_seconds": None, "seed": 3, "limit": 2}}
    for args, message in ((("", [], 0.1), "pick the metric"),
                          (("nometric", [], 0.1), "unknown metric 'nometric'"),
                          (("chrf", ["nopanel"], 0.1), "unknown metric 'nopanel'"),
                          (("chrf", [], 0.0), r"noise_ratio must be a number > 0 and <= 1"),
                          (("bertscore.f1@/etc", [], 0.1), "model '/etc' of metric spec"),
                          (("chrf", ["./my_metric/"], 0.1), "bad metric spec './my_metric/'"),
                          (("chrf", ["bertscore@roberta-large"], 0.1),
                           "Hub models and local paths are off on this Space")):
        with pytest.raises(ValueError, match=message):
            search_request("demo", "translation", None, *args, 500, None, 0, 2, tmp_path)
    with pytest.raises(ValueError, match="rows must be at least 1"):
        search_request("demo", "translation", None, "chrf", [], 0.1, 500, None, 0, -1, tmp_path)
    with pytest.raises(ValueError, match="max calls must be at least 1"):  # 0 is not "no limit"
        search_request("demo", "translation", None, "chrf", [], 0.1, 0, None, 0, 1, tmp_path)
    with pytest.raises(ValueError, match="max_seconds must be a number > 0"):
        search_request("demo", "translation", None, "chrf", [], 0.1, 5, 0, 0, 1, tmp_path)
    unlimited = search_request("demo", "translation", None, "chrf", [], 0.1, None, "", None,
                               None, tmp_path)["options"]
    assert (unlimited["max_calls"], unlimited["max_seconds"], unlimited["seed"],
            unlimited["limit"]) == (None, None, 0, None)
    with pytest.raises(ValueError, match="seed must be a whole number"):
        search_request("demo", "translation", None, "chrf", [], 0.1, 500, None, 0.5, 1, tmp_path)


def test_trail_text_lists_the_edits_in_order() -> None:
    from blindspot.space.tabs.search import trail_text

    trail = [{"old": "the", "new": None, "pattern": "article_deletion"},
             {"old": "big", "new": "large", "pattern": "synonym"}]
    assert trail_text(trail) == "the → ∅ [article_deletion]; big → large [synonym]"
    assert trail_text([]) == "no edit"


def test_a_search_run_in_the_worker_matches_the_library_and_its_views(tmp_path: Path) -> None:
    from blindspot.search.protocol import run_search
    from blindspot.space.tabs.search import (
        example_rows,
        examples_html,
        patterns_markdown,
        search_outputs,
        search_request,
        summary_markdown,
    )

    space = Workspace(tmp_path / "space")
    folder = space.new_run_folder("s")
    request = search_request("demo", "translation", None, "chrf", ["bleu"], 0.1, 600, None, 0,
                             2, folder)
    seen = []
    assert space.run_to_end("s", request, folder, None,
                            lambda where, desc: seen.append((where, desc))) == "done"
    assert any(desc.startswith("search") for _, desc in seen)
    direct = run_search("demo", "chrf", panel=["bleu"], task="translation", limit=2,
                        max_calls=600, progress=False, out=tmp_path / "direct")
    results, plot, files = search_outputs(folder)
    assert (folder / "results.json").read_bytes() == (
        tmp_path / "direct" / "results.json").read_bytes()
    assert Path(plot).name == "search.png" and [Path(f).name for f in files] == [
        "results.json", "report.md"]
    rows = example_rows(results)
    assert [r["id"] for r in rows] == [e["id"] for e in direct["examples"]]
    for row, example in zip(rows, direct["examples"], strict=True):
        assert row["perturbed"] == example["perturbed"]
        assert row["changes"] == {
            "chrf.chrf": example["metrics"]["chrf.chrf"]["gold"]["relative_change"],
            "bleu.bleu": example["metrics"]["bleu.bleu"]["gold"]["relative_change"]}
    page = examples_html(results)
    assert page.count("<tr>") == 1 + 2 and "chrf.chrf (target)" in page
    changed = [e for e in direct["examples"] if e["trail"]]
    assert changed and "<del" in page
    first = changed[0]["trail"][0]
    assert f"{first['old']} → " in page
    assert f"{direct['budget']['calls_used']} metric calls" in summary_markdown(results)
    if direct["patterns"]:
        assert f"| 1 | {direct['patterns'][0]['pattern']} |" in patterns_markdown(results)
    else:
        assert patterns_markdown(results).startswith("No edit was kept")


def test_a_deviation_run_on_the_demo_shows_its_table_and_heatmap(tmp_path: Path) -> None:
    from blindspot.space.tabs.stress import data_source, make_request, report_outputs, result_views

    space = Workspace(tmp_path / "space")
    folder = space.new_run_folder("s")
    data, task, columns, _ = data_source("demo", "summarization", None, None, {}, tmp_path,
                                         tmp_path, "deviation")
    request = make_request("deviation", data, task, columns, ["rouge"], [], [1], folder,
                           {"templates": "negation,drop_phrases"})
    assert space.run_to_end("s", request, folder, None) == "done"
    results, plots, files = report_outputs(folder)
    assert [Path(p).name for p in plots] == ["deviation_heatmap.png"]
    assert [t["template"] for t in results["templates"]] == ["drop_phrases", "negation"]
    _, markdown = result_views(results, folder)
    figures = results["metrics"]["rouge.rougeL"]["templates"]["informativeness/negation"]
    row = next(line for line in markdown.splitlines()
               if line.startswith("| informativeness/negation |"))
    assert f"{figures['deviation']:+.3f} ({figures['verdict']})" in row


@pytest.mark.shared_data
def test_a_correlation_run_joins_the_references_file(tmp_path: Path) -> None:
    from conftest import SHARED_DATA

    from blindspot.space.tabs.stress import (
        data_source,
        make_request,
        protocol_file_option,
        report_outputs,
        result_views,
    )

    judged = _judgments(tmp_path / "judged.jsonl", 48)  # 3 documents x 16 systems
    ids = {json.loads(line)["id"] for line in judged.read_text("utf-8").splitlines()}
    references = tmp_path / "refs.jsonl"
    references.write_text("".join(
        line + "\n" for line in (SHARED_DATA / "cnndm_summeval100_summarization.jsonl")
        .read_text("utf-8").splitlines() if json.loads(line)["id"] in ids), encoding="utf-8")
    session = tmp_path / "session"
    options = protocol_file_option("correlation", str(references), {}, session)
    data, task, columns, _ = data_source("upload", "summarization", None, str(judged), {},
                                         tmp_path, session, "correlation", options)
    space = Workspace(tmp_path / "space")
    folder = space.new_run_folder("s")
    request = make_request("correlation", data, task, columns, ["bleu"], [], [1], folder,
                           options)
    assert space.run_to_end("s", request, folder, None) == "done", space.failure("s")
    results, plots, _ = report_outputs(folder)
    assert plots == [] and results["dataset"]["documents"] == 3
    assert results["dataset"]["systems"] == 16
    _, markdown = result_views(results, folder)
    assert "bleu.bleu" in markdown and "expert_coherence" in markdown
    # the session's folder never reaches the results (uploads are named by file name)
    assert str(tmp_path) not in (folder / "results.json").read_text(encoding="utf-8")



def test_a_host_reports_every_progress_bar_with_its_own_class(monkeypatch) -> None:
    """The worker's hook: after report_progress_with, progress_bar makes the host's bars, and a
    ReportingTqdm sends its position as events (the last update always)."""
    sent = io.StringIO()
    monkeypatch.setattr(worker, "_EVENTS", sent)
    try:
        progress.report_progress_with(worker.ReportingTqdm)
        bar = progress.progress_bar(total=3, desc="unit", file=io.StringIO())
        assert isinstance(bar, worker.ReportingTqdm)
        bar.update(3)
        bar.close()
    finally:
        progress.report_progress_with(tqdm)
    events = [json.loads(line[len(worker.EVENT_PREFIX):]) for line in sent.getvalue().splitlines()]
    assert events[-1] == {"event": "progress", "desc": "unit", "postfix": "", "n": 3, "total": 3,
                          "unit": "it"}
    assert progress_text({"desc": "scoring", "postfix": "rouge.rougeL gold", "n": 1, "total": 6,
                          "unit": "cell"}) == "scoring 1/6 cells: rouge.rougeL gold"
    assert type(progress.progress_bar(range(2), disable=True)) is tqdm
