"""What a newcomer meets in the first hour (issue 32): help that tells the truth, `n/a` with its
reason in a word, a check-up that shows it is alive, and libraries that speak only when it helps.
"""

from __future__ import annotations

import inspect
import io
import logging
import math
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from blindspot import quiet
from blindspot.cli import app
from blindspot.expectations import negation_drops_sharply
from blindspot.judging import judge_curve
from blindspot.report.views import expectation_cell, verdict_cell

BLINDSPOT = str(Path(sys.executable).parent / "blindspot")


@pytest.mark.quick
def test_run_help_says_a_chunked_run_resumes() -> None:
    shown = CliRunner().invoke(app, ["run", "--help"], env={"COLUMNS": "200"}).output
    chunk = " ".join(shown[shown.index("--chunk-size"):].replace("│", " ").split())[:400]
    assert "not resumable" not in chunk and "resumes like any run" in chunk


@pytest.mark.quick
def test_an_undecided_verdict_says_why_in_a_word() -> None:
    judged = judge_curve([("0.1", 0.1, [0.5])], math.nan)  # no gold score: nothing to compare
    cell = verdict_cell({"status": "undecided", **judged})
    assert cell.text == "n/a (no score)" and "NaN" in cell.note


@pytest.mark.quick
def test_an_undecided_expectation_says_why_in_a_word() -> None:
    assert expectation_cell(negation_drops_sharply(None, 0.2)).text == "n/a (no rows)"
    assert expectation_cell(negation_drops_sharply(0.2, None)).text == "n/a (missing)"
    assert expectation_cell(negation_drops_sharply(0.3, 0.2)).text == "✓"


@pytest.mark.quick
def test_every_message_names_a_handler_that_exists() -> None:
    import importlib

    for message in quiet.MESSAGES:
        module, _, name = message.handled_in.rpartition(".")
        if message.handled_in == quiet.__name__:
            continue
        target = importlib.import_module(module) if module else None
        assert target is not None and hasattr(target, name), message.handled_in


def test_rays_token_and_progress_notices_are_silenced_where_ray_logs_them() -> None:
    from ray._private.authentication import authentication_token_setup as auth
    from ray.data._internal import progress

    # the declared loggers and first words are Ray's own
    for module, key in ((auth, "ray_auth_disabled"), (auth, "ray_auth_enabled"),
                        (progress, "ray_progress_off")):
        assert module.logger.name == quiet.BY_KEY[key].logger
        assert quiet.BY_KEY[key].starts.split(". ")[0] in inspect.getsource(module)
    # what reaches a handler of Ray's logger (the filters sit on the logger itself; a handler of
    # our own, since a Ray instance started earlier in the same process rewires Ray's stderr)
    reached = io.StringIO()
    handler = logging.StreamHandler(reached)
    auth.logger.addHandler(handler)
    level, auth.logger.level = auth.logger.level, logging.INFO
    try:
        auth._warn_token_auth_disabled()  # Ray's own calls, as a local instance starts
        auth._warn_token_auth_enabled()
        auth.logger.warning("a token file could not be read")  # anything else reaches the user
    finally:
        auth.logger.removeHandler(handler)
        auth.logger.setLevel(level)
    seen = reached.getvalue()
    assert "Token authentication" not in seen and "a token file could not be read" in seen


@pytest.mark.slow
def test_an_empty_hypothesis_is_our_one_note_not_bert_scores_warning(capfd) -> None:
    import evaluate

    from blindspot.pkgpath import package_dir

    module = evaluate.load(str(package_dir("blindspot.metrics") / "bertscore"))
    quiet._said.discard("bert_score_empty")  # once per process: an earlier test may have said it
    for _ in range(2):
        out = module.compute(predictions=["", "A cat sat on the mat."],
                             references=["A cat sat on the mat.", "A cat sat on the mat."],
                             model_type="minilm")
    assert out["f1"][0] < out["f1"][1]
    err = capfd.readouterr().err
    assert "Empty candidate sentence" not in err
    assert err.count("note: bertscore: an empty hypothesis scores 0") == 1


def test_the_space_prints_its_address_and_no_share_hint(tmp_path: Path) -> None:
    env = dict(os.environ, GRADIO_ANALYTICS_ENABLED="False", HF_HUB_DISABLE_TELEMETRY="1")
    with subprocess.Popen([BLINDSPOT, "space", "--port", "7931"], cwd=tmp_path, env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) as server:
        assert server.stdout is not None
        lines = []
        deadline = time.monotonic() + 240
        try:
            for line in server.stdout:
                lines.append(line)
                if "the Space is served on" in line or time.monotonic() > deadline:
                    break
        finally:
            server.terminate()
            rest, _ = server.communicate(timeout=30)
    shown = "".join(lines) + (rest or "")
    assert "the Space is served on http://127.0.0.1:7931" in shown, shown
    assert "share=True" not in shown and "Running on local URL" not in shown


def test_the_checkup_shows_progress_and_a_forecast(tmp_path: Path) -> None:
    done = subprocess.run([BLINDSPOT, "checkup", "chrf", "--task", "translation", "--data", "demo",
                           "--rows", "4", "--max-words", "64", "--out", str(tmp_path / "c")],
                          capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "check-up of chrf.chrf" in done.stderr or "check-up of chrf" in done.stderr
    bars = [part for part in done.stderr.replace("\r", "\n").splitlines() if "check-up of" in part]
    assert any("<" in bar and "check/s" in bar or "s/check" in bar for bar in bars), bars
    assert any(name in done.stderr for name in ("batch_order", "determinism", "truncation"))
