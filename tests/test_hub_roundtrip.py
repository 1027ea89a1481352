"""The Hub round trip against a real Hub-API server on loopback (olah, tests/hub_support.py): push
built sets, then ``datasets.load_dataset("org/name", config)`` in a fresh process through the same
``HF_ENDPOINT`` gives the local folder's rows, by name and by version tag after a second push
changed the set. olah takes no uploads, so the sets go in with ``--push-git`` (a commit and a tag in
the repository it serves); the Hub API path (create_repo, upload_folder, create_tag) is run against
the same server and a dead endpoint for its failures: one line, exit 1, the folder complete, and
the token nowhere."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import datasets
import pytest
from conftest import SHARED_DATA
from hub_support import HubServer, free_port, hub_server
from typer.testing import CliRunner, Result

from blindspot.cli import app
from blindspot.datasets_scripts import build_adversarial as ba
from blindspot.datasets_scripts import publish

#: a token that must never reach a file, a log or the output (the server gets it in a header)
SECRET = "hf_blindspotTestTokenNeverWritten0123"
BLINDSPOT = str(Path(sys.executable).parent / "blindspot")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> HubServer:
    with hub_server(tmp_path_factory.mktemp("hub")) as running:
        yield running


def _hub_env(server: HubServer, home: Path, **extra: str) -> dict[str, str]:
    """A user's environment pointed at the server: online, a fresh HF_HOME, the token set."""
    env = dict(os.environ, HF_ENDPOINT=server.endpoint, HF_HOME=str(home), HF_HUB_OFFLINE="0",
               HF_DATASETS_OFFLINE="0", HF_TOKEN=SECRET, HF_HUB_DISABLE_TELEMETRY="1")
    env.update(extra)
    env.pop("HF_DATASETS_CACHE", None)
    return env


#: a fresh process loads each (repo, config, revision) through HF_ENDPOINT and prints the rows
LOAD_SCRIPT = """
import json, sys, datasets
out = []
for repo, config, revision in json.loads(sys.argv[1]):
    ds = datasets.load_dataset(repo, config, split="test", revision=revision)
    out.append(ds.to_list())
print(json.dumps(out))
"""


def _local_rows(folder: Path, config: str, cache: Path) -> list[dict]:
    return datasets.load_dataset(str(folder), config, split="test",
                                 cache_dir=str(cache)).to_list()


def _cli(*args: str, exit_code: int = 0) -> Result:
    """``blindspot ARGS`` in this process, which must end with ``exit_code``."""
    result = CliRunner().invoke(app, list(args))
    assert result.exit_code == exit_code, result.output[-3000:]
    return result


def _build_demo(out: Path, server: HubServer, *flags: str) -> Result:
    """``blindspot build-dataset --data demo ... --push org/blindspot-demo --push-git MIRRORS``."""
    return _cli("build-dataset", "--data", "demo", "--task", "summarization", "--tests",
                "truncation", "--out", str(out), "--push", "org/blindspot-demo", "--push-git",
                str(server.mirrors), *flags)


def test_push_then_load_by_name_and_by_version(server: HubServer, tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_TOKEN", SECRET)  # set while pushing: it must not be written anywhere
    v1, v2 = tmp_path / "v1", tmp_path / "v2"
    printed = [_build_demo(v1, server, "--seeds", "1")]
    # build-menli --push takes the same path
    printed.append(_cli("build-menli", "--data", "wmt21_de_en", "--data-dir", str(SHARED_DATA),
                        "--limit", "4", "--attacks", "typo,num", "--out", str(tmp_path / "menli"),
                        "--push", "org/blindspot-menli", "--push-git", str(server.mirrors)))
    # blindspot publish: the licensed gold sets as ORG/blindspot-<set>
    printed.append(_cli("publish", "--org", "org", "--sets", "cnndm", "--tests", "truncation",
                        "--seeds", "1", "--limit", "3", "--data-dir", str(SHARED_DATA),
                        "--out", str(tmp_path / "published"), "--push-git", str(server.mirrors)))
    # a changed set
    printed.append(_build_demo(v2, server, "--seeds", "2", "--limit", "4", "--version", "1.1.0"))
    assert "pushed to" in printed[-1].stdout
    assert "(git, branch main, tag v1.1.0)" in printed[-1].stdout
    assert all(result.stdout.count("pushed to") == 1 for result in printed)

    wanted = [["org/blindspot-demo", "truncation-0.1", None],
              ["org/blindspot-demo", "truncation-0.1", "v1.0.0"],
              ["org/blindspot-demo", "truncation-0.1", "v1.1.0"],
              ["org/blindspot-menli", "typo", None],
              ["org/blindspot-cnndm", "truncation-0.1", "v1.0.0"]]
    done = subprocess.run([sys.executable, "-c", LOAD_SCRIPT, json.dumps(wanted)],
                          env=_hub_env(server, tmp_path / "hf-home"), cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:] + server.log.read_text()[-2000:]
    main, old, new, menli, cnndm = json.loads(done.stdout.strip().splitlines()[-1])
    local = tmp_path / "local-cache"
    assert old == _local_rows(v1, "truncation-0.1", local) and {r["seed"] for r in old} == {1}
    assert main == new == _local_rows(v2, "truncation-0.1", local) != old
    assert len(new) == 4 and {r["seed"] for r in new} == {2}
    assert menli == _local_rows(tmp_path / "menli", "typo", local) and len(menli) == 4
    assert cnndm == _local_rows(tmp_path / "published" / "blindspot-cnndm", "truncation-0.1",
                                local) and len(cnndm) == 3
    card = (tmp_path / "published" / "blindspot-cnndm" / "README.md").read_text()
    assert "license: apache-2.0" in card

    # the token is in no file, no git object, no output and no server log
    for folder in (v1, v2, tmp_path / "menli", tmp_path / "published"):
        assert not [p for p in folder.rglob("*") if p.is_file() and SECRET.encode() in p.read_bytes()]
    for repo in ("blindspot-demo", "blindspot-menli", "blindspot-cnndm"):
        git_dir = server.mirrors / "datasets" / "org" / repo
        blobs = subprocess.run(["git", f"--git-dir={git_dir}", "cat-file", "--batch-all-objects",
                                "--batch"], capture_output=True, timeout=60).stdout
        assert blobs and SECRET.encode() not in blobs
    assert SECRET not in "".join(r.output for r in printed) + done.stdout + done.stderr
    assert SECRET not in server.log.read_text()


def test_a_version_tag_keeps_its_commit(server: HubServer, tmp_path: Path) -> None:
    """Pushing a version again (a rebuild) moves main, never the tag: a published version is
    what it was."""
    _build_demo(tmp_path / "a", server, "--seeds", "1", "--name", "tagged", "--version", "3.0.0")
    git_dir = server.mirrors / "datasets" / "org" / "blindspot-demo"

    def rev(ref: str) -> str:
        return subprocess.run(["git", f"--git-dir={git_dir}", "rev-parse", f"{ref}^{{commit}}"],
                              capture_output=True, text=True, check=True).stdout.strip()

    tagged = rev("v3.0.0")
    _build_demo(tmp_path / "b", server, "--seeds", "3", "--name", "tagged", "--version", "3.0.0")
    assert rev("v3.0.0") == tagged != rev("main")


# -- the Hub API path's failures: one line, exit 1, the folder complete, no token ----------------

def _complete(folder: Path) -> bool:
    record = json.loads((folder / ba.BUILD_FILE).read_text(encoding="utf-8"))
    return (folder / ba.CARD_FILE).is_file() and all(
        ba.sha256_file(folder / rel) == meta["sha256"] for rel, meta in record["files"].items())


def test_api_push_failures_are_one_line_and_exit_1(server: HubServer, tmp_path: Path) -> None:
    """`blindspot build-dataset ... --push org/name` through the Hub API: without a token; with a
    token, against the server (it takes no uploads: 405 to create_repo, as a server refuses a
    repository the token cannot write); and over a dead endpoint."""
    no_token = _hub_env(server, tmp_path / "h1", HF_TOKEN_PATH=str(tmp_path / "no-token-file"))
    no_token.pop("HF_TOKEN")
    cases = {
        "no-token": (no_token, "no Hugging Face token: log in with `huggingface-cli login`"),
        "refused": (_hub_env(server, tmp_path / "h2"), "this server takes no uploads"),
        "dead": (_hub_env(server, tmp_path / "h3",
                          HF_ENDPOINT=f"http://127.0.0.1:{free_port()}"), "is unreachable"),
    }
    running = {}
    for name, (env, _) in cases.items():
        running[name] = subprocess.Popen(
            [BLINDSPOT, "build-dataset", "--data", "demo", "--task", "summarization", "--tests",
             "truncation", "--seeds", "1", "--out", str(tmp_path / name), "--push", "org/name"],
            env=env, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    for name, (_, expected) in cases.items():
        out, err = running[name].communicate(timeout=300)
        errors = [line for line in err.splitlines() if line.startswith("error: ")]
        assert running[name].returncode == 1, (name, err[-2000:])
        assert len(errors) == 1 and expected in errors[0], (name, err[-2000:])
        assert f"dataset folder is ready at {(tmp_path / name).resolve()}" in errors[0]
        assert "Traceback" not in err and SECRET not in out + err
        assert _complete(tmp_path / name)
    assert SECRET not in server.log.read_text()


def test_publish_offers_only_the_sets_whose_licence_allows_it() -> None:
    assert [s.name for s in publish.publishable_sources()] == ["wikitext103", "cnndm"]
    err = _cli("publish", "--org", "org", "--sets", "ted_mt_zh_en", exit_code=1).stderr
    assert "ted_mt_zh_en is not published: its licence (cc-by-nc-nd-4.0)" in err
    err = _cli("publish", "--org", "org", "--sets", "cnndn", exit_code=1).stderr
    assert err.startswith("error: --sets: unknown set 'cnndn'") and "did you mean 'cnndm'" in err
