"""A result's signature (blindspot.scoring.signature): the same settings give the same string in
another process and from a model in another folder; a different precision, option or model gives
another; no path or key gets in (a judge server's endpoint does: it produced the grades); a
rank run shows it in results.json, report.md, the HTML page and under the terminal table."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from judge_support import Behaviour, chat_server
from rich.console import Console

from blindspot.models import resolve_model
from blindspot.protocols.rank import run_blindspot
from blindspot.report.terminal import print_summary
from blindspot.runner.scorers import make_scorer
from blindspot.scoring.signature import KEYS, metric_signature, option_text, parse_signature
from blindspot.tiny_models import tiny_masked_lm

SEEDS = (1, 2)


def signed(metric: str, **options: object) -> str:
    scorer = make_scorer(metric, options)
    return metric_signature(scorer, scorer.judged_output(), SEEDS)


@pytest.mark.quick
def test_a_lexical_signature_names_its_library_and_no_model() -> None:
    text = signed("chrf")
    fields = parse_signature(text)
    assert tuple(fields) == KEYS
    assert fields["metric"] == "chrf.chrf" and fields["seeds"] == "1,2"
    assert fields["lib"].startswith("sacrebleu-") and fields["model"] == "-"
    # a lexical metric runs no model: precision, device, torch and transformers do not apply
    assert [fields[k] for k in ("prec", "dev", "torch", "tf")] == ["-"] * 4
    assert text == signed("chrf")  # stable within a process
    assert signed("chrf", char_order=4) != text  # another option, another string
    assert parse_signature(signed("chrf", char_order=4))["opts"] == "char_order=4"


@pytest.mark.quick
def test_option_text_is_canonical_and_never_splits_the_signature() -> None:
    assert option_text({"b": True, "a": None, "c": 0.5}) == "a=null,b=true,c=0.5"
    assert option_text({"x": "a|b,c"}) == 'x="a|b,c"'  # JSON-quoted
    assert option_text({"types": ["rouge1", "rougeL"]}) == "types=rouge1+rougeL"
    long = option_text({"refs": [f"text {i}" for i in range(20)]})
    assert long.startswith("refs=sha:") and len(long) == len("refs=sha:") + 12
    assert option_text({"api_key": "sk-123", "url": "http://h", "n": 1}) == "n=1"
    with pytest.raises(ValueError, match="not a signature"):
        parse_signature("metric:chrf|blindspot:0.1.0")


def test_the_same_settings_give_the_same_string_in_another_process() -> None:
    here = [signed("bertscore", model_type="minilm"), signed("rouge")]
    code = ("from blindspot.runner.scorers import make_scorer\n"
            "from blindspot.scoring.signature import metric_signature\n"
            "for metric, options in (('bertscore', {'model_type': 'minilm'}), ('rouge', {})):\n"
            "    s = make_scorer(metric, options)\n"
            "    print(metric_signature(s, s.judged_output(), (1, 2)))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    assert done.stdout.splitlines() == here
    fields = parse_signature(here[0])
    assert fields["model"].startswith("minilm@") and fields["model"] != "minilm@-"
    assert fields["lib"].startswith("bert-score-") and fields["dev"] in ("cpu", "cuda")
    assert fields["prec"] == "fp32" and fields["torch"] != "-" and fields["tf"] != "-"


def test_precision_and_model_change_the_string_and_a_folder_shows_no_path(tmp_path: Path) -> None:
    base = signed("bertscore", model_type="minilm")
    half = signed("bertscore", model_type="minilm", precision="bf16")
    assert parse_signature(half)["prec"] == "bf16" and half != base
    # the same weights in another folder: the same revision (no path is hashed), the folder's name
    copy = tmp_path / "where" / "my-minilm"
    copy.mkdir(parents=True)
    for file in Path(resolve_model("minilm")).iterdir():
        (copy / file.name).symlink_to(file)
    moved = signed("bertscore", model_type=str(copy))
    assert parse_signature(moved)["model"] == "my-minilm@" + parse_signature(base)["model"][7:]
    assert str(tmp_path) not in moved and "/" not in parse_signature(moved)["model"]
    other = tiny_masked_lm(tmp_path / "tiny")
    tiny = signed("bertscore", model_type=other, num_layers=1)
    assert parse_signature(tiny)["model"].split("@")[1] != parse_signature(base)["model"][7:]
    assert str(tmp_path) not in tiny


@pytest.mark.quick
def test_a_judge_behind_a_server_signs_with_its_endpoint_and_never_its_key(monkeypatch) -> None:
    # what produced a server judge's grades is the server (issue 38): its endpoint, the model id
    # it lists and its fingerprint; never the key or the variable that holds it
    monkeypatch.setenv("SIGNATURE_TEST_KEY", "sk-secret-value")
    with chat_server(Behaviour(fingerprint="fp_1")) as (url, _):
        text = signed("llm_judge", backend="openai", url=url, api_key_env="SIGNATURE_TEST_KEY",
                      model="judge-model", template="fluency")
    for secret in ("sk-secret-value", "SIGNATURE_TEST_KEY"):
        assert secret not in text
    fields = parse_signature(text)
    assert fields["model"] == "judge-model@-" and fields["dev"] == "-"  # computed elsewhere
    assert f'server="{url}"' in fields["opts"] and "served=judge-model" in fields["opts"]
    assert "fingerprint=fp_1" in fields["opts"] and "mode=weighted" in fields["opts"]


def test_a_rank_run_shows_the_signature_in_every_view(tmp_path: Path) -> None:
    results = run_blindspot("demo", "chrf", task="translation", tests="truncation",
                            seeds=list(SEEDS), progress=False, out=tmp_path / "out")
    expected = signed("chrf")
    saved = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))
    entry = saved["datasets"]["demo-translation"]["metrics"]["chrf.chrf"]
    assert entry["signature"] == expected == results["datasets"]["demo-translation"][
        "metrics"]["chrf.chrf"]["signature"]
    assert list(entry)[:7] == ["metric", "output", "options", "higher_is_better",
                               "corpus_level", "error", "signature"]
    assert f"- chrf.chrf: `{expected}`" in (tmp_path / "out" / "report.md").read_text("utf-8")
    assert f"<code>{expected}</code>" in (tmp_path / "out" / "report.html").read_text("utf-8")
    console = Console(record=True, width=60, color_system=None)
    print_summary(saved, console)
    assert f"  chrf.chrf: {expected}" in console.export_text().splitlines()
