"""The adversarial dataset builder: loadable offline, byte-identical rebuilds, honest card, clear
errors for pushing without a Hub and for missing gold files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import SHARED_DATA
from typer.main import get_command
from typer.testing import CliRunner

from blindspot.cli import app
from blindspot.datasets_scripts import build_adversarial as ba
from blindspot.datasets_scripts import gold_sources as gs
from blindspot.perturbations import REGISTRY, get_perturbation

CNNDM = SHARED_DATA / "cnndm_summeval100_summarization.jsonl"
ROWS = 8
SEEDS = (1, 2)

pytestmark = [pytest.mark.quick, pytest.mark.shared_data]


def _cheap_random_test() -> str | None:
    """A registered seeded test that needs no parse, source or resource (fast), if any."""
    for name, cls in sorted(REGISTRY.items()):
        if (not cls.deterministic and not cls.needs_parse and not cls.needs_source
                and not cls.requires and cls.levels.get("summarization")):
            return name
    return None


EXTRA = _cheap_random_test()
TESTS = ",".join(["truncation"] + ([EXTRA] if EXTRA else []))


def _gold_slice(rows: int = ROWS) -> Any:
    ds = gs.read_jsonl(CNNDM)
    return ds.select(range(rows))


def _build(out: Path, **overrides: Any) -> Path:
    kwargs: dict[str, Any] = {"tests": TESTS, "seeds": SEEDS}
    kwargs.update(overrides)
    gold = kwargs.pop("gold", None) or _gold_slice()
    return ba.build_adversarial_dataset(gold, "summarization", out, **kwargs)


def _files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file()}


def _front_matter(folder: Path) -> dict[str, Any]:
    text = (folder / "README.md").read_text(encoding="utf-8")
    assert text.startswith("---\n")
    return yaml.safe_load(text.split("---\n")[1])


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _build(tmp_path_factory.mktemp("adv") / "folder")


def _load(folder: Path, config: str, tmp_path: Path) -> Any:
    import datasets

    return datasets.load_dataset(str(folder), config, split="test",
                                 cache_dir=str(tmp_path / "hf-cache"))


def test_config_loads_offline_with_expected_rows(built: Path, tmp_path: Path) -> None:
    gold = _gold_slice()
    ds = _load(built, "truncation-0.1", tmp_path)
    assert ds.num_rows == ROWS  # deterministic: one seed
    assert list(ds["id"]) == list(gold["id"])
    assert list(ds["gold"]) == list(gold["gold"])
    assert list(ds["references"]) == list(gold["references"])
    truncation = get_perturbation("truncation")
    for row in ds:
        direct = truncation.apply(row["gold"], 0.1, seed=1, row_id=row["id"])
        assert row["perturbed"] == direct.perturbed
        assert row["applied"] == direct.applied
        assert row["noise_ratio"] == pytest.approx(direct.noise_ratio)
        assert (row["perturbation"], row["level"], row["seed"]) == ("truncation", "0.1", 1)


@pytest.mark.skipif(EXTRA is None, reason="no cheap seeded test registered yet")
def test_seeded_config_stacks_seeds_in_gold_order(built: Path, tmp_path: Path) -> None:
    record = json.loads((built / ba.BUILD_FILE).read_text())
    config = next(c for c in record["configs"] if c["test"] == EXTRA)
    ds = _load(built, config["config_name"], tmp_path)
    gold = _gold_slice()
    assert list(ds["seed"]) == [s for s in SEEDS for _ in range(ROWS)]
    assert list(ds["id"]) == list(gold["id"]) * len(SEEDS)
    test = get_perturbation(EXTRA)
    for row in ds:
        direct = test.apply(row["gold"], config["level"], seed=row["seed"], row_id=row["id"])
        assert row["perturbed"] == direct.perturbed


def test_gold_config_is_the_untouched_gold(built: Path, tmp_path: Path) -> None:
    assert _load(built, "gold", tmp_path).to_list() == _gold_slice().to_list()


def test_rebuild_is_byte_identical(built: Path, tmp_path: Path) -> None:
    again = _build(tmp_path / "again")
    assert _files(again) == _files(built)
    rebuilt_in_place = _build(built)  # a previous build's folder is replaced, not mixed
    assert _files(rebuilt_in_place) == _files(again)


def test_card_lists_every_config_and_the_provenance(built: Path) -> None:
    front = _front_matter(built)
    record = json.loads((built / ba.BUILD_FILE).read_text())
    names = [c["config_name"] for c in front["configs"]]
    assert names[0] == "gold"
    assert names[1:] == [c["config_name"] for c in record["configs"]]
    assert {f"truncation-{lvl}" for lvl in ("0.1", "0.2", "0.3", "0.4", "0.5")} <= set(names)
    for config in front["configs"]:
        (files,) = config["data_files"]
        assert files["split"] == "test" and (built / files["path"]).is_file()
    for key in ("license", "task_categories", "language", "pretty_name", "tags"):
        assert front[key]
    body = (built / "README.md").read_text(encoding="utf-8")
    assert record["fingerprint"] in body and record["full_version"] in body
    assert record["input"]["sha256"] in body
    assert "he-etal-2023-blind" in body and 'load_dataset(' in body
    assert "| `truncation-0.1` | truncation | fluency | 0.1 | 1 | 8 | 100.0% |" in body
    assert record["full_version"].startswith("1.0.0+")
    assert record["skipped"] == {}  # the chosen tests need nothing missing
    assert set(record["files"]) == {c["data_files"][0]["path"] for c in front["configs"]}


def test_fingerprint_follows_the_inputs(built: Path, tmp_path: Path) -> None:
    base = json.loads((built / ba.BUILD_FILE).read_text())["fingerprint"]

    def fingerprint(**overrides: Any) -> str:
        folder = _build(tmp_path / str(len(list(tmp_path.iterdir()))), **overrides)
        return json.loads((folder / ba.BUILD_FILE).read_text())["fingerprint"]

    changed = {fingerprint(gold=_gold_slice(ROWS - 1)), fingerprint(version="1.0.1"),
               fingerprint(seeds=(1, 3)), fingerprint(levels={"truncation": [0.25]})}
    assert base not in changed and len(changed) == 4


def test_push_without_hub_or_token_is_a_clear_error(built: Path, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    import huggingface_hub.constants

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.delenv("HF_TOKEN", raising=False)
    monkeypatch.delenv("HUGGING_FACE_HUB_TOKEN", raising=False)
    monkeypatch.setattr(huggingface_hub.constants, "HF_TOKEN_PATH", str(tmp_path / "no-token"))
    with pytest.raises(ba.PushError) as info:
        ba.push_adversarial_dataset(built, "org/name")
    message = str(info.value)
    assert "unreachable" in message and "huggingface-cli login" in message
    assert str(built.resolve()) in message
    with pytest.raises(ba.PushError, match="unreachable"):
        ba.push_adversarial_dataset(built, "org/name", token="hf_fake")
    with pytest.raises(ba.PushError, match="not a built blindspot dataset folder"):
        ba.push_adversarial_dataset(tmp_path, "org/name", token="hf_fake")


def test_cli_builds_and_reports_push_failure_without_traceback(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_TOKEN", "hf_fake")  # the token is never a flag
    data = tmp_path / "gold.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in _gold_slice(4).to_list()))
    out = tmp_path / "cli"
    captured = CliRunner().invoke(app, [
        "build-dataset", "--task", "summarization", "--data", str(data), "--out", str(out),
        "--tests", "truncation", "--seeds", "1", "--version", "2.0.0", "--push", "org/name"])
    assert captured.exit_code == 1
    assert str(out.resolve()) in captured.stdout and "2.0.0+" in captured.stdout
    assert "\nerror: cannot push to org/name" in captured.stderr
    assert "Traceback" not in captured.output
    record = json.loads((out / ba.BUILD_FILE).read_text())
    assert record["input"] == {"kind": "file", "name": "gold.jsonl", "rows": 4, "limit": None,
                               "gold_source": None, "sha256": ba.sha256_file(data)}


def test_missing_gold_file_offline_says_where_to_put_it(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(gs.GoldDataMissingError) as info:
        gs.load_gold("cnndm", data_dir=tmp_path)
    message = str(info.value)
    assert "cnndm_summeval100_summarization.jsonl" in message and str(tmp_path) in message
    assert "BLINDSPOT_DATA" in message
    missing = CliRunner().invoke(app, ["build-dataset", "--data", "wmt21", "--data-dir",
                                       str(tmp_path), "--out", str(tmp_path / "x")])
    assert missing.exit_code == 1
    assert "wmt21_de_en_translation.jsonl" in missing.stderr
    assert "Traceback" not in missing.output
    nope = CliRunner().invoke(app, ["build-dataset", "--data", str(tmp_path / "nope.jsonl"),
                                    "--task", "sum"])
    assert nope.exit_code == 1 and "not found" in nope.stderr


def test_gold_sources_load_locally_with_their_roles() -> None:
    for name, source in gs.GOLD_SOURCES.items():
        ds = gs.load_gold(name, data_dir=SHARED_DATA)
        roles = [c for c in source.roles().values() if c]
        assert set(roles) | set(source.gold_only_columns) <= set(ds.column_names), name
        assert gs.get_gold_source(source.task) is source
        assert source.citation.startswith("@") and source.upstream
    with pytest.raises(ValueError, match="unknown gold source"):
        gs.get_gold_source("imagenet")


def test_output_folder_of_something_else_is_refused(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(ValueError, match="not empty"):
        _build(tmp_path, tests="truncation", seeds=(1,))
    assert (tmp_path / "notes.txt").read_text() == "mine"


def test_upstream_text_helpers() -> None:
    release = ("0 12-20 ZH: 你好。\n0 12-20 EN: Hello there.\n"
               "1 48-54 ZH: 再见。\n1 48-54 EN: It\u2019s goodbye.\n")
    assert gs.parse_ted_release(release) == [{"zh": "你好。", "en": "Hello there."},
                                             {"zh": "再见。", "en": "It\u2019s goodbye."}]
    assert gs.cut_at_last_period("It cost 1 @.@ 5 million . Then it") == "It cost 1 @.@ 5 million ."
    assert gs.detokenize_wikitext('He said " yes , 2 @,@ 000 " ( twice ) .') == \
        'He said "yes, 2,000" (twice).'
    assert ba.config_name("truncation", "0.1") == "truncation-0.1"
    assert ba.config_name("copy_source", "-") == "copy_source"
    with pytest.raises(ValueError, match="semantic version"):
        ba.check_version("v1")


def test_build_dataset_takes_runs_name_for_the_hypothesis_column() -> None:
    """`run` names it --hypothesis-column; build-dataset's --column takes that name too."""
    command = get_command(app).commands["build-dataset"]

    def column(*flags: str) -> str:
        return command.make_context("build-dataset", ["--data", "demo", *flags]).params["column"]

    assert column("--hypothesis-column", "summary") == column("--column", "summary") == "summary"
    assert column() == "gold"
