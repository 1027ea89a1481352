"""The metric modules load offline from any directory as ``blindspot/<name>`` once registered
(`make env` does), the non-canonical ones (blindspot, blindspot_accuracy, preference_accuracy) by
their bare names too, and registering them never touches a canonical module's folder. The
committed module folders of the registered metrics are what their scorers' cards generate."""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
import sacrebleu

from blindspot import evaluate_modules
from blindspot.evaluate_modules import (
    BARE_NAMES,
    BARE_PREFIX,
    GENERATED_MARK,
    MARKER,
    SPACE_SDK_VERSION,
    STARTUP_FILE,
    OurCachedModuleNotice,
    generated_metrics,
    handwritten_folders,
    install_modules,
    install_startup_filter,
    load_name,
    metrics_root,
    module_folders,
    module_path,
    register_modules,
    remove_stale_modules,
    stale_modules,
    startup_file_text,
    write_modules,
)
from blindspot.scoring.scorer import SCORERS

SCRIPT = """
import json, evaluate
chrf = evaluate.load("blindspot/chrf")
rouge = evaluate.load("blindspot/rouge")
preference = evaluate.load("blindspot/preference_accuracy")
print(json.dumps({"module": type(chrf).__module__,
                  "chrf": chrf.compute(predictions=["The cat sat on the mat."],
                                       references=[["The cat is on the mat."]])["score"],
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
    assert "blindspot--chrf" in out["module"]
    expected = sacrebleu.corpus_chrf(["The cat sat on the mat."], [["The cat is on the mat."]]).score
    assert out["chrf"] == pytest.approx(expected)
    assert out["rouge_keys"] == ["rouge1", "rouge2", "rougeL", "rougeLsum"]
    assert "blindspot--preference_accuracy" in out["preference"][0]
    assert out["preference"][1] == {"num": 0.5}  # one hit, one tie (a failure)


# -- generated from the scorers' cards ----------------------------------------------------------

@pytest.mark.quick
def test_the_committed_module_folders_are_what_the_cards_generate() -> None:
    """Every registered metric with a card has its folder in the checkout, equal to what its card
    generates (`blindspot modules` writes them); the other folders are written by hand and say
    nothing of being generated."""
    assert stale_modules(metrics_root()) == [], "run `blindspot modules`"
    assert set(generated_metrics()) == {n for n, cls in SCORERS.items() if cls.card is not None}
    folders = {p.name for p in module_folders()}
    assert set(generated_metrics()) <= folders
    handwritten = {p.name for p in handwritten_folders()}
    assert handwritten == folders - set(generated_metrics())
    assert set(BARE_NAMES) <= handwritten  # the modules that are no scorer's


@pytest.mark.quick
def test_writing_modules_rewrites_what_differs_and_removes_its_own_orphans(tmp_path: Path) -> None:
    root = tmp_path / "metrics"
    root.mkdir()
    written = write_modules(root)
    assert len(written) == 4 * len(generated_metrics())
    assert write_modules(root) == []  # current: nothing is rewritten
    card = root / "chrf" / "README.md"
    card.write_text("edited by hand\n", encoding="utf-8")
    assert stale_modules(root) == [f"{card}: differs from what its scorer's card generates"]
    assert write_modules(root) == [card] and stale_modules(root) == []
    # a generated folder whose metric is gone is removed; a folder written by hand stays
    gone = root / "gone"
    gone.mkdir()
    (gone / "gone.py").write_text((root / "chrf" / "chrf.py").read_text(encoding="utf-8"),
                                  encoding="utf-8")
    mine = root / "mine"
    mine.mkdir()
    (mine / "mine.py").write_text("# written by hand\n", encoding="utf-8")
    assert stale_modules(root) == [f"{gone}: generated for a metric that is no longer registered"]
    assert write_modules(root) == [gone] and not gone.exists() and (mine / "mine.py").is_file()
    assert GENERATED_MARK not in (mine / "mine.py").read_text(encoding="utf-8")


@pytest.mark.quick
def test_the_cards_declare_the_pinned_space_sdk() -> None:
    constraints = (Path(__file__).resolve().parents[1] / "requirements" / "constraints.txt")
    assert f"gradio=={SPACE_SDK_VERSION}" in constraints.read_text(encoding="utf-8").split()


def test_registering_twice_keeps_one_copy_per_version(tmp_path: Path) -> None:
    first = install_modules(tmp_path / "m")
    second = install_modules(tmp_path / "m")
    assert first == second


def test_a_new_version_replaces_ours_and_nothing_else(tmp_path: Path) -> None:
    chrf = next(p for p in install_modules(tmp_path / "m") if p.stem == "chrf")
    named = chrf.parent.parent
    older = named / ("0" * 64)  # an earlier version of our script, with our marker
    shutil.copytree(chrf.parent, older)
    foreign = named / ("1" * 64)  # a version without our marker: not ours to remove
    foreign.mkdir()
    (foreign / "chrf.py").write_text("# someone else's\n", encoding="utf-8")
    again = install_modules(tmp_path / "m")
    assert chrf in again and chrf.is_file()
    assert not older.exists() and (foreign / "chrf.py").is_file()


def test_unknown_module_name() -> None:
    with pytest.raises(ValueError, match="unknown metric module 'nope'.*rouge"):
        module_path("nope")


BLINDSPOT_SCRIPT = """
import json, evaluate
from blindspot.demo import read_demo
rows = read_demo("translation")
blindspot = evaluate.load("blindspot/blindspot")
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
    assert "blindspot--blindspot" in out["module"]
    assert out["metric"] == "chrf.chrf"
    assert set(out["verdicts"]) == {"truncation", "noun_switching"}
    assert set(out["verdicts"].values()) <= {"pass", "fail"}
    assert out["points"] == 6  # gold + the five truncation levels


# the three names the project's documentation promised, loaded by their bare names; blindspot
# judges a tiny chrf run so the module is the real one, not only importable
BARE_SCRIPT = """
import json, evaluate
main = evaluate.load("blindspot")
judge = evaluate.load("blindspot_accuracy")
preference = evaluate.load("preference_accuracy")
namespaced = evaluate.load("blindspot/blindspot")
golds = ["The council approved the new budget on Monday after a long debate.",
         "Heavy rain closed the coastal road for two days last week."]
out = main.compute(predictions=golds, references=golds, metric="chrf", task="summarization",
                   tests="truncation", seeds=[1], progress=False)
print(json.dumps({"modules": [type(m).__module__ for m in (main, judge, preference, namespaced)],
                  "verdict": out["verdicts"]["truncation"],
                  "judge": judge.compute(predictions=[0.8, 0.5], references=[1.0, 1.0],
                                         tests=["t", "t"], levels=[1, 2], noise_ratios=[0.1, 0.2],
                                         seeds=[0, 0])["t"]["passed"],
                  "preference": preference.compute(para_scores=[0.9], adv_scores=[0.2],
                                                   error_types=["num"])["accuracy"]}))
"""


def test_the_promised_bare_names_load_offline_from_a_users_folder_and_the_checkout(
        tmp_path: Path) -> None:
    """After the install step (`blindspot install-modules`, run here into a fresh modules cache),
    a fresh process loads `evaluate.load("blindspot")` and the other two bare names offline, from
    a folder outside the checkout and from the checkout's root (where `blindspot/` is the
    package folder, which evaluate takes for a local module only if it held `blindspot.py`)."""
    checkout = Path(__file__).resolve().parent.parent
    assert (checkout / "blindspot").is_dir() and not (checkout / "blindspot" / "blindspot.py").exists()
    modules = tmp_path / "hf-modules"
    env = dict(os.environ, HF_MODULES_CACHE=str(modules), HF_HUB_OFFLINE="1")
    installed = subprocess.run([str(Path(sys.executable).parent / "blindspot"), "install-modules"],
                               cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert installed.returncode == 0, installed.stderr[-2000:]
    said = " ".join(installed.stdout.split())  # rich wraps long lines
    assert "blindspot, blindspot_accuracy," in said and "blindspot/rouge" in said
    user_folder = tmp_path / "my-project"
    user_folder.mkdir()
    for cwd in (user_folder, checkout):
        done = subprocess.run([sys.executable, "-c", BARE_SCRIPT], cwd=cwd, env=env,
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, (cwd, done.stderr[-2000:])
        out = json.loads(done.stdout.strip().splitlines()[-1])
        assert [m.split(".")[2] for m in out["modules"]] == [
            f"{BARE_PREFIX}blindspot", f"{BARE_PREFIX}blindspot_accuracy",
            f"{BARE_PREFIX}preference_accuracy", "blindspot--blindspot"], cwd
        assert out["verdict"] == "pass" and out["judge"] is True
        assert out["preference"] == {"num": 1.0}
        assert NOTICE not in done.stderr  # the start-up file hides the notice for bare names too


def test_only_the_non_canonical_modules_get_bare_names(tmp_path: Path) -> None:
    assert set(BARE_NAMES) <= {p.name for p in module_folders()}
    metrics = tmp_path / "m" / "metrics"
    install_modules(tmp_path / "m")
    bare = {p.name for p in metrics.iterdir() if p.name.startswith(BARE_PREFIX)}
    assert bare == {f"{BARE_PREFIX}{name}" for name in BARE_NAMES}
    assert [load_name(n) for n in ("blindspot", "rouge")] == ["blindspot", "blindspot/rouge"]
    # a version someone else left under a bare name stays; ours is replaced, not duplicated
    foreign = metrics / f"{BARE_PREFIX}blindspot" / ("1" * 64)
    foreign.mkdir()
    (foreign / "blindspot.py").write_text("# someone else's\n", encoding="utf-8")
    install_modules(tmp_path / "m")
    versions = sorted(p.name for p in (metrics / f"{BARE_PREFIX}blindspot").iterdir()
                      if p.is_dir() and p.name != "__pycache__")
    assert len(versions) == 2 and "1" * 64 in versions and foreign.joinpath("blindspot.py").is_file()
    assert not remove_stale_modules(tmp_path / "m")  # our bare-name copies are current, not stale


# -- nothing shadowed ------------------------------------------------------------------------------

FAKE_CANONICAL_ROUGE = '''"""A stand-in for evaluate's canonical rouge, as an online session leaves it in the
cache."""
import datasets
import evaluate


class Rouge(evaluate.Metric):
    def _info(self):
        return evaluate.MetricInfo(description="fake canonical rouge", citation="",
                                   inputs_description="", features=datasets.Features(
                                       {"predictions": datasets.Value("string"),
                                        "references": datasets.Value("string")}))

    def _compute(self, predictions, references):
        return {"canonical": True}
'''

CANONICAL_SCRIPT = """
import json, evaluate
canonical = evaluate.load("rouge")
ours = evaluate.load("blindspot/rouge")
print(json.dumps({"canonical": [type(canonical).__module__,
                                canonical.compute(predictions=["a"], references=["a"])],
                  "ours": [type(ours).__module__,
                           ours.compute(predictions=["a b"], references=["a c"],
                                        use_aggregator=False)]}))
"""


def _tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file()}


def _canonical_rouge(modules: Path) -> Path:
    """A canonical ``rouge`` in evaluate's layout (evaluate names the version folder by its own
    hash of the script, never the sha256 of its bytes)."""
    folder = modules / "evaluate_modules" / "metrics" / "evaluate-metric--rouge"
    version = folder / ("ab" * 32)
    version.mkdir(parents=True)
    (folder / "__init__.py").touch()
    (version / "__init__.py").touch()
    (version / "rouge.py").write_text(FAKE_CANONICAL_ROUGE, encoding="utf-8")
    (version / "rouge.json").write_text("{}", encoding="utf-8")
    return folder


def test_installing_leaves_a_canonical_module_untouched_and_loadable(tmp_path: Path) -> None:
    modules = tmp_path / "hf-modules"
    canonical = _canonical_rouge(modules)
    before = _tree(canonical)
    written = install_modules(modules / "evaluate_modules")
    install_modules(modules / "evaluate_modules")  # twice, as `make env` after an update
    assert _tree(canonical) == before  # byte for byte, no file added or removed
    assert all("blindspot--" in str(p) and (p.parent / MARKER).is_file() for p in written)
    env = dict(os.environ, HF_MODULES_CACHE=str(modules), HF_HUB_OFFLINE="1")
    done = subprocess.run([sys.executable, "-c", CANONICAL_SCRIPT], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert "evaluate-metric--rouge" in out["canonical"][0]
    assert out["canonical"][1] == {"canonical": True}
    assert "blindspot--rouge" in out["ours"][0]
    assert out["ours"][1] == {"rouge1": [0.5], "rouge2": [0.0], "rougeL": [0.5],
                              "rougeLsum": [0.5]}


def _legacy_copy(modules: Path, name: str) -> Path:
    """What an older blindspot install wrote: our script under the canonical name, in a folder
    named by the sha256 of its bytes, without a marker."""
    script = module_path(name)
    digest = hashlib.sha256(script.read_bytes()).hexdigest()
    version = modules / "metrics" / f"evaluate-metric--{name}" / digest
    version.mkdir(parents=True)
    (version.parent / "__init__.py").touch()
    (version / "__init__.py").touch()
    shutil.copyfile(script, version / script.name)
    return version


def test_our_older_copies_under_canonical_names_are_removed_and_nothing_else(
        tmp_path: Path) -> None:
    canonical = _canonical_rouge(tmp_path)  # a canonical rouge beside our old copy of it
    modules = tmp_path / "evaluate_modules"
    before = _tree(canonical)
    old_rouge = _legacy_copy(modules, "rouge")
    old_chrf = _legacy_copy(modules, "chrf")
    # a user's own module that imports blindspot, in a folder evaluate named: not ours
    theirs = modules / "metrics" / "evaluate-metric--ter" / ("cd" * 32)
    theirs.mkdir(parents=True)
    (theirs / "ter.py").write_text("import blindspot.scoring.module as base\n", encoding="utf-8")
    removed = remove_stale_modules(modules)
    assert set(removed) == {old_rouge, old_chrf, old_chrf.parent}
    assert not old_rouge.exists() and not old_chrf.parent.exists()
    assert _tree(canonical) == before
    assert (theirs / "ter.py").is_file()


# -- evaluate's "cached version" notice -----------------------------------------------------------

NOTICE = "Using the latest cached version of the module"
# a fresh interpreter; the filters a start-up file of the real environment may have installed are
# cleared first, so each run starts as an environment without one; argv: [import blindspot first
# ("1"/"0"), site folders whose .pth files to process]
NOTICE_SCRIPT = """
import logging, site, sys
logging.getLogger("evaluate.loading").filters.clear()
for folder in sys.argv[2:]:
    site.addsitedir(folder)
if sys.argv[1] == "1":
    import blindspot
import evaluate
evaluate.load("blindspot/blindspot")
evaluate.load("blindspot/chrf")
evaluate.load("someone/thing")
print("loaded")
"""


def _notices(tmp_path: Path, *args: str) -> list[str]:
    """The notices a fresh process prints loading two of ours, then someone else's cached module,
    from a fresh modules cache filled by install_modules."""
    modules = tmp_path / "hf-modules"
    if not modules.exists():
        chrf = next(p for p in install_modules(modules / "evaluate_modules") if p.stem == "chrf")
        theirs = modules / "evaluate_modules" / "metrics" / "someone--thing" / ("ab" * 32)
        theirs.mkdir(parents=True)
        (theirs.parent / "__init__.py").touch()
        (theirs / "__init__.py").touch()
        shutil.copyfile(chrf, theirs / "thing.py")
    env = dict(os.environ, HF_MODULES_CACHE=str(modules), HF_HUB_OFFLINE="1")
    done = subprocess.run([sys.executable, "-c", NOTICE_SCRIPT, *args], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and done.stdout.strip() == "loaded", done.stderr[-2000:]
    return [line for line in done.stderr.splitlines() if NOTICE in line]


def _whose(notices: list[str]) -> list[str]:
    return [next(n for n in ("blindspot--blindspot", "blindspot--chrf", "someone--thing")
                 if n in notice) for notice in notices]


def test_the_startup_file_quiets_even_a_fresh_processs_first_load(tmp_path: Path) -> None:
    """evaluate logs the notice for `evaluate.load("blindspot/blindspot")` before it imports our
    module (so before `import blindspot` could filter it): only the start-up file, run when the
    interpreter starts, hides it. Without the file the same run shows it; other modules keep it."""
    site_dir = tmp_path / "site"
    site_dir.mkdir()
    without = _notices(tmp_path, "0", str(site_dir))
    assert _whose(without) == ["blindspot--blindspot", "someone--thing"]  # chrf: blindspot imported
    install_startup_filter(site_dir)
    assert _whose(_notices(tmp_path, "0", str(site_dir))) == ["someone--thing"]


def test_importing_blindspot_first_quiets_ours_without_the_startup_file(tmp_path: Path) -> None:
    assert _whose(_notices(tmp_path, "1")) == ["someone--thing"]


# the start-up file with blindspot not importable (isolated mode, no site-packages): it must run
# without error, as it does after an uninstall, and drop our notice only
STARTUP_ALONE = """
import logging, site, sys
site.addsitedir(sys.argv[1])
def kept(message):
    record = logging.LogRecord("evaluate.loading", logging.WARNING, "x.py", 1, message, None, None)
    return logging.getLogger("evaluate.loading").filter(record)
print([type(f).__name__ for f in logging.getLogger("evaluate.loading").filters],
      "blindspot" in sys.modules, "evaluate" in sys.modules,
      [kept(m) for m in sys.argv[2:]])
import blindspot
"""

MESSAGES = [f"{NOTICE} from /c/metrics/blindspot--rouge/{'a' * 64} (last modified) since it "
            "couldn't be found locally at blindspot--rouge, or remotely on the Hugging Face Hub.",
            f"{NOTICE} from /c/metrics/someone--rouge/{'a' * 64} (last modified) since it "
            "couldn't be found locally at someone--rouge, or remotely on the Hugging Face Hub.",
            "Something else about blindspot--rouge",
            f"{NOTICE} from /c/metrics/evaluate-metric--blindspot/{'a' * 64} (last modified) since "
            "it couldn't be found locally at evaluate-metric--blindspot, or remotely on the Hub.",
            f"{NOTICE} from /c/metrics/evaluate-metric--rouge/{'a' * 64} (last modified) since "
            "it couldn't be found locally at evaluate-metric--rouge, or remotely on the Hub."]


def test_the_startup_file_runs_alone_and_drops_only_our_notice(tmp_path: Path) -> None:
    written = install_startup_filter(tmp_path)
    assert written == tmp_path / STARTUP_FILE
    done = subprocess.run([sys.executable, "-I", "-S", "-c", STARTUP_ALONE, str(tmp_path), *MESSAGES],
                          cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert done.stdout.splitlines() == [
        "['OurCachedModuleNotice'] False False [False, True, True, False, True]"], done.stderr
    assert "Error processing" not in done.stderr
    assert "ModuleNotFoundError: No module named 'blindspot'" in done.stderr  # truly alone
    # the in-process filter decides the same
    records = [logging.LogRecord("evaluate.loading", logging.WARNING, __file__, 1, m, None, None)
               for m in MESSAGES]
    assert [OurCachedModuleNotice().filter(r) for r in records] == [False, True, True, False,
                                                                    True]


def test_the_startup_file_is_rewritten_only_when_it_differs(tmp_path: Path) -> None:
    target = install_startup_filter(tmp_path)
    os.utime(target, ns=(10**9, 10**9))
    assert install_startup_filter(tmp_path) == target and target.stat().st_mtime_ns == 10**9
    target.write_text("import logging\n", encoding="utf-8")  # an older version of the file
    install_startup_filter(tmp_path)
    assert target.read_text(encoding="utf-8") == startup_file_text()
    assert [p.name for p in tmp_path.iterdir()] == [STARTUP_FILE]  # no temporary left


def test_the_install_step_writes_the_startup_file_into_purelib(tmp_path: Path, monkeypatch) -> None:
    """`python -m blindspot.assets` and `blindspot install-modules` call register_modules(): the
    modules go into evaluate's cache and the start-up file into the environment's purelib."""
    assert evaluate_modules.default_site_dir() == Path(sysconfig.get_paths()["purelib"])
    monkeypatch.setattr(evaluate_modules, "default_site_dir", lambda: tmp_path / "purelib")
    (tmp_path / "purelib").mkdir()
    written, startup = register_modules(tmp_path / "modules")
    assert startup == tmp_path / "purelib" / STARTUP_FILE and startup.is_file()
    assert {p.stem for p in written} == {p.name for p in module_folders()}
