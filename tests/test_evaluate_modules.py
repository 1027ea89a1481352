"""The metric modules load by name from any directory, offline, once registered (`make env` does)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import sacrebleu

from blindspot.evaluate_modules import install_modules, module_folders, module_path

SCRIPT = """
import json, evaluate
chrf = evaluate.load("chrf")
rouge = evaluate.load("rouge")
preference = evaluate.load("preference_accuracy")
print(json.dumps({"module": type(chrf).__module__,
                  "chrf": chrf.compute(predictions=["The cat sat on the mat."],
                                       references=[["The cat is on the mat."]])["chrf"],
                  "rouge_keys": sorted(rouge.compute(predictions=["a b c"], references=["a b d"])),
                  "preference": [type(preference).__module__, preference.compute(
                      para_scores=[0.9, 0.1], adv_scores=[0.2, 0.1],
                      error_types=["num", "num"])["accuracy"]]}))
"""


def test_load_by_name_from_another_directory_offline(tmp_path: Path) -> None:
    modules = tmp_path / "hf-modules"
    written = install_modules(modules / "evaluate_modules")
    assert {p.stem for p in written} == {p.name for p in module_folders()}
    env = dict(os.environ, HF_MODULES_CACHE=str(modules), HF_HUB_OFFLINE="1")
    done = subprocess.run([sys.executable, "-c", SCRIPT], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert "evaluate-metric--chrf" in out["module"]
    expected = sacrebleu.sentence_chrf("The cat sat on the mat.", ["The cat is on the mat."]).score
    assert out["chrf"] == pytest.approx(expected)
    assert out["rouge_keys"] == ["rouge1", "rouge2", "rougeL", "rougeLsum"]
    assert "evaluate-metric--preference_accuracy" in out["preference"][0]
    assert out["preference"][1] == {"num": 0.5}  # one hit, one tie (a failure)


def test_registering_twice_keeps_one_copy_per_version(tmp_path: Path) -> None:
    first = install_modules(tmp_path / "m")
    second = install_modules(tmp_path / "m")
    assert first == second


def test_unknown_module_name() -> None:
    with pytest.raises(ValueError, match="unknown metric module 'nope'.*rouge"):
        module_path("nope")


BLINDSPOT_SCRIPT = """
import json, evaluate
from blindspot.demo import read_demo
rows = read_demo("translation")
blindspot = evaluate.load("blindspot")
out = blindspot.compute(predictions=[r["gold"] for r in rows], references=[r["reference"] for r in rows],
                        metric="chrf", task="translation", tests="truncation,noun_switching", seeds=[1],
                        progress=False)
print(json.dumps({"module": type(blindspot).__module__, "metric": out["metric"],
                  "verdicts": out["verdicts"], "points": len(out["tests"]["truncation"]["points"])}))
"""


def test_blindspot_loads_by_name_offline_from_a_temporary_directory(tmp_path: Path) -> None:
    modules = tmp_path / "hf-modules"
    install_modules(modules / "evaluate_modules")
    env = dict(os.environ, HF_MODULES_CACHE=str(modules), HF_HUB_OFFLINE="1")
    done = subprocess.run([sys.executable, "-c", BLINDSPOT_SCRIPT], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert "evaluate-metric--blindspot" in out["module"]
    assert out["metric"] == "chrf.chrf"
    assert set(out["verdicts"]) == {"truncation", "noun_switching"}
    assert set(out["verdicts"].values()) <= {"pass", "fail"}
    assert out["points"] == 6  # gold + the five truncation levels
