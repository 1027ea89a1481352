"""Any metric in (issue 19): a plain function, a function in a file, a module folder, a loaded
module and registered names are all judged the same way; the user's code is hashed into the score
cache; bad custom metrics fail with clear errors; the public Space refuses them all.

The metric used throughout is the length ratio: words in the prediction per word of its
references (on average). Its verdicts can be predicted by hand: truncation removes words (the
score falls at every level: pass), swapping sentences keeps every word (the score does not move:
fail).
"""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path
from statistics import fmean

import evaluate
import pytest
from conftest import SHARED_DATA
from runner_support import write_module
from typer.testing import CliRunner

from blindspot.cli import app
from blindspot.demo import read_demo
from blindspot.protocols.rank import run_blindspot
from blindspot.runner import resolve_metrics
from blindspot.runner.metric_spec import check_visitor_metric

CNNDM = SHARED_DATA / "cnndm_summeval100_summarization.jsonl"
TESTS = "truncation,sentence_switching"
runner = CliRunner()

LENGTH_RATIO = '''
from statistics import fmean


def length_ratio(predictions, references):
    return [len(p.split()) / fmean(len(r.split()) for r in refs)
            for p, refs in zip(predictions, references)]
'''


def length_ratio(predictions: list[str], references: list[list[str]]) -> list[float]:
    return [len(p.split()) / fmean(len(r.split()) for r in refs)
            for p, refs in zip(predictions, references, strict=True)]


def _by_hand(gold: str, refs: list[str]) -> float:
    return len(gold.split()) / fmean(len(r.split()) for r in refs)


def _tests(results: dict, metric: str) -> dict:
    (dataset,) = results["datasets"].values()
    return dataset["metrics"][metric]["tests"]


def _write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


# -- a plain function, judged as a module is ---------------------------------------------------

def test_plain_function_is_judged(tmp_path: Path) -> None:
    """Before issue 19 every test of a plain function ended in error ('function' object has no
    attribute 'compute'); now its scores and verdicts are the hand-predicted ones."""
    rows = read_demo("summarization")
    results = run_blindspot("demo", length_ratio, tests=TESTS, seeds=[1], progress=False,
                            state_dir=tmp_path / "s")
    (dataset,) = results["datasets"].values()
    entry = dataset["metrics"]["length_ratio"]
    assert entry["error"] is None and entry["higher_is_better"] is True
    assert entry["gold"]["score_mean"] == pytest.approx(
        fmean(_by_hand(r["gold"], r["references"]) for r in rows), abs=1e-12)
    truncation = entry["tests"]["truncation"]
    assert truncation["status"] == "pass"
    # level 0.5 keeps n - floor(n/2) words of every gold text (the perturbation's definition)
    half = next(p for p in truncation["points"] if p["level"] == "0.5")
    kept = [(len(r["gold"].split()) - math.floor(len(r["gold"].split()) * 0.5))
            / fmean(len(x.split()) for x in r["references"]) for r in rows]
    assert half["score_mean"] == pytest.approx(fmean(kept), abs=1e-12)
    assert entry["tests"]["sentence_switching"]["status"] == "fail"


def test_lower_is_better_declared_once(tmp_path: Path) -> None:
    """``higher_is_better = False`` on the function flips the judgement, as TER's does."""
    def shortfall(predictions, references):
        return [-x for x in length_ratio(predictions, references)]

    undeclared = run_blindspot("demo", shortfall, tests="truncation", seeds=[1], progress=False,
                               state_dir=tmp_path / "a")
    assert _tests(undeclared, "shortfall")["truncation"]["status"] == "fail"
    shortfall.higher_is_better = False
    declared = run_blindspot("demo", shortfall, tests="truncation", seeds=[1], progress=False,
                             state_dir=tmp_path / "b")
    assert _tests(declared, "shortfall")["truncation"]["status"] == "pass"
    assert declared["config"]["metrics"][0]["higher_is_better"] is False
    shortfall.higher_is_better = "no"
    with pytest.raises(ValueError, match="declares higher_is_better='no'; set it to True or"):
        resolve_metrics(shortfall)


def test_only_the_arguments_it_takes(tmp_path: Path) -> None:
    """A function of the predictions alone runs on data without references; one that takes
    ``sources`` gets the source of each row (open-ended demo: no references at all)."""
    seen: dict[str, object] = {}

    def words(predictions):
        return [float(len(p.split())) for p in predictions]

    def compression(*, sources=None, predictions, **extra):  # predictions taken by name
        seen.update(extra)
        return [len(p.split()) / len(s.split()) for p, s in zip(predictions, sources, strict=True)]

    results = run_blindspot("demo", [words, compression], task="summarization",
                            tests="truncation", seeds=[1], progress=False,
                            state_dir=tmp_path / "s")
    rows = read_demo("summarization")
    (dataset,) = results["datasets"].values()
    gold = dataset["metrics"]["compression"]["gold"]["score_mean"]
    assert gold == pytest.approx(fmean(len(r["gold"].split()) / len(r["source"].split())
                                       for r in rows), abs=1e-12)
    assert dataset["metrics"]["words"]["gold"]["score_mean"] == pytest.approx(
        fmean(len(r["gold"].split()) for r in rows))
    assert set(seen) == {"references"}  # **extra takes every input the data has
    open_ended = run_blindspot("demo", words, task="open_ended", tests="truncation", seeds=[1],
                               progress=False, state_dir=tmp_path / "o")
    assert _tests(open_ended, "words")["truncation"]["status"] == "pass"


@pytest.mark.parametrize("returned, message", [
    (lambda p: [1.0], r"metric 'bad' returned 1 scores for \d+ predictions; it must return one"),
    (lambda p: [float("nan")] * len(p), "metric 'bad' returned nan for the row whose prediction "
                                        "is '"),
    (lambda p: ["high"] * len(p), "metric 'bad' returned 'high' for the row whose prediction"),
    (lambda p: 0.5, "metric 'bad' returned a float; it must return a list of"),
    (lambda p: 1 / 0, "metric 'bad' raised ZeroDivisionError: division by zero"),
])
def test_bad_output_is_an_error_naming_metric_and_row(returned, message: str,
                                                      tmp_path: Path) -> None:
    def bad(predictions):
        return returned(predictions)

    results = run_blindspot("demo", [bad, "chrf"], tests="truncation", seeds=[1],
                            progress=False, state_dir=tmp_path / "s")
    test = _tests(results, "bad")["truncation"]
    assert test["status"] == "error" and re.search(message, test["error"]), test["error"]
    assert _tests(results, "chrf.chrf")["truncation"]["status"] == "pass"


@pytest.mark.parametrize("metric, message", [
    (42, "metric 'int' is a int, not a metric; give a registered name, a loaded evaluate "
         "module or a function"),
    (lambda predictions, weights: [], "requires argument 'weights', which blindspot does not "
                                      "pass"),
    (lambda: [], "takes no argument; it must take the predictions first"),
])
def test_unusable_function_fails_before_any_work(metric, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        run_blindspot("demo", metric, tests="truncation", progress=False)


def test_compute_takes_a_function() -> None:
    rows = read_demo("summarization")
    module = evaluate.load("metrics/blindspot")
    out = module.compute(predictions=[r["gold"] for r in rows],
                         references=[r["references"] for r in rows], metric=length_ratio,
                         tests=TESTS, seeds=[1], progress=False)
    assert out["metric"] == "length_ratio"
    assert out["verdicts"] == {"truncation": "pass", "sentence_switching": "fail"}


# -- the CLI: functions in files, module folders, registered names in one list -------------------

def test_cli_mixes_function_module_folder_and_names(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SLOW_METRIC_SLEEP", "0")
    monkeypatch.setenv("SLOW_METRIC_LOG", str(tmp_path / "calls.log"))
    _write(tmp_path, "my_metric.py", LENGTH_RATIO)
    write_module(tmp_path, "slow")  # the length in words, an evaluate module in ./slow/
    result = runner.invoke(app, ["run", "--data", str(CNNDM), "--metrics",
                                 "my_metric.py:length_ratio,./slow/,chrf", "--tests", TESTS,
                                 "--seeds", "1", "--out", "out"])
    assert result.exit_code == 0, result.output
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    metrics = results["datasets"][CNNDM.name]["metrics"]
    assert set(metrics) == {"length_ratio", "slow", "chrf.chrf"}
    for name in ("length_ratio", "slow"):  # both count words: the same verdicts
        assert metrics[name]["tests"]["truncation"]["status"] == "pass"
        assert metrics[name]["tests"]["sentence_switching"]["status"] == "fail"


@pytest.mark.parametrize("spec, message", [
    ("missing.py:score", "metric 'missing.py:score': no file 'missing.py'; give "
                         "path/to/file.py:function with a file that exists"),
    ("my_metric.py:score", "metric 'my_metric.py:score': 'my_metric.py' defines no 'score'; "
                           "its functions are length_ratio"),
    ("my_metrc.py:length_ratio", "no file 'my_metrc.py'; give path/to/file.py:function with a "
                                 "file that exists (relative to the current folder); did you "
                                 "mean 'my_metric.py'?"),
    ("my_metric.py:length_rati", "defines no 'length_rati'; its functions are length_ratio; did "
                                 "you mean 'length_ratio'?"),
    ("./my_modul/", "no file or folder 'my_modul'; give a module folder (./my_module/), a module "
                    "script (my_module.py) or a function (my_metric.py:score); did you mean "
                    "'my_module'?"),
    ("my_metric.py:fmean_of", "metric 'my_metric.py:fmean_of' is a float, not a metric"),
    ("broken.py:score", "metric 'broken.py:score': importing 'broken.py' failed with "
                        "NameError: name 'undefined_name' is not defined; fix the file"),
    ("./no_such_module/", "metric './no_such_module/': no file or folder 'no_such_module'"),
    ("my_metric.py", "to judge a function in it, write my_metric.py:FUNCTION"),
    ("someone/no_such_module", "metric 'someone/no_such_module': could not load it as an "
                               "evaluate module from the Hub (offline? it must be cached)"),
])
def test_cli_bad_custom_metric_exits_1(spec: str, message: str, tmp_path: Path,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    _write(tmp_path, "my_metric.py", LENGTH_RATIO + "\nfmean_of = 0.5\n")
    _write(tmp_path, "broken.py", "def score(predictions):\n    return []\n\nundefined_name\n")
    (tmp_path / "my_module").mkdir()
    result = runner.invoke(app, ["run", "--data", "demo", "--metrics", f"chrf,{spec}",
                                 "--tests", "truncation", "--out", "out"])
    assert result.exit_code == 1, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert message in " ".join(result.stderr.split())
    assert not (tmp_path / "out" / "results.json").exists()


def test_cli_function_that_raises_exits_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    _write(tmp_path, "raising.py", "def score(predictions):\n"
                                   "    raise RuntimeError('model not loaded')\n")
    result = runner.invoke(app, ["run", "--data", "demo", "--metrics", "raising.py:score,chrf",
                                 "--tests", "truncation", "--out", "out"])
    assert result.exit_code == 2, result.output
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    test = results["datasets"]["demo-summarization"]["metrics"]["score"]["tests"]["truncation"]
    assert test["status"] == "error"
    assert "metric 'score' raised RuntimeError: model not loaded" in test["error"]


# -- the score cache knows the user's code --------------------------------------------------------

def _counting(factor: str) -> str:
    return ("import os\n\n\ndef score(predictions):\n"
            "    with open(os.environ['CALL_LOG'], 'a') as log:\n"
            "        log.write(f'{len(predictions)}\\n')\n"
            f"    return [{factor} * len(p.split()) for p in predictions]\n")


def _scored(log: Path) -> int:
    """How many predictions the function was asked to score."""
    return sum(int(n) for n in log.read_text().split()) if log.exists() else 0


def test_function_scores_cached_by_its_code(tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BLINDSPOT_CACHE", str(tmp_path / "cache"))
    log = tmp_path / "calls.log"
    monkeypatch.setenv("CALL_LOG", str(log))
    script = _write(tmp_path, "counting.py", _counting("1.0"))
    spec = f"{script}:score"

    def run(name: str) -> dict:
        return run_blindspot("demo", spec, tests="truncation", seeds=[1], progress=False,
                             state_dir=tmp_path / name)

    first = run("a")
    computed = _scored(log)
    assert computed > 0
    again = run("b")  # a fresh run state: only the score cache can serve it
    assert _scored(log) == computed  # same code: every score from the cache
    assert again["datasets"] == first["datasets"]
    _write(tmp_path, "counting.py", _counting("2.0"))
    doubled = run("c")
    assert _scored(log) == 2 * computed  # changed code: everything scored again
    (dataset,) = doubled["datasets"].values()
    (old,) = first["datasets"].values()
    assert dataset["metrics"]["score"]["gold"]["score_mean"] == pytest.approx(
        2 * old["metrics"]["score"]["gold"]["score_mean"])


def test_module_scores_cached_by_its_file(tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BLINDSPOT_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("SLOW_METRIC_SLEEP", "0")
    log = tmp_path / "calls.log"
    monkeypatch.setenv("SLOW_METRIC_LOG", str(log))
    script = write_module(tmp_path, "slow")
    folder = f"{script.parent}/"

    def calls(name: str, metric: str = folder) -> int:
        run_blindspot("demo", metric, tests="truncation", seeds=[1], progress=False,
                      state_dir=tmp_path / name)
        return len(log.read_text().splitlines())

    first = calls("a")
    assert calls("b", str(script)) == first  # the same file as a script: served by the cache
    script.write_text(script.read_text() + "\n# edited\n", encoding="utf-8")
    assert calls("c") > first  # any edit of the module file: scored again


# -- the public Space refuses them all ---------------------------------------------------------

@pytest.mark.parametrize("spec", ["my_metric.py:score", "./my_module/", "my_module.py",
                                  "/tmp/x.py:score", "org/module"])
def test_space_refuses_custom_metrics(spec: str) -> None:
    with pytest.raises(ValueError, match="paths and scripts are not accepted here"):
        check_visitor_metric(spec)


def test_registered_name_wins_over_a_same_named_folder(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "chrf").mkdir()
    (spec,) = resolve_metrics("chrf")
    assert spec.module is None and spec.name == "chrf.chrf"
    assert os.path.isdir("chrf")


# -- the README's example, exactly as written ---------------------------------------------------

README = Path(__file__).resolve().parents[1] / "README.md"


def _readme_blocks() -> list[tuple[str, str]]:
    """The fenced blocks (language, text) of the README's "Your own metric" section."""
    text = README.read_text(encoding="utf-8")
    section = text.split("## Your own metric", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```(\w+)\n(.*?)```", section, flags=re.DOTALL)


def test_readme_example_runs_as_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # the section's first five blocks: the file, the command, its table, the program, its output
    (_, metric), (_, command), (_, table), (_, program), (_, printed) = _readme_blocks()[:5]
    monkeypatch.chdir(tmp_path)
    assert metric.startswith("# my_metric.py\n")
    _write(tmp_path, "my_metric.py", metric)
    args = command.replace("\\\n", " ").split()  # the command's line continuations
    assert args[0] == "blindspot"
    result = runner.invoke(app, args[1:])
    assert result.exit_code == 0, result.output
    shown = [line.strip() for line in result.stdout.splitlines()]
    for line in table.strip().splitlines():
        assert line.strip() in shown, (line, result.stdout)
    assert (tmp_path / "my_report" / "report.md").exists()
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(README.parent), os.environ.get("PYTHONPATH", "")]))
    done = subprocess.run([sys.executable, "-c", program], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout == printed
