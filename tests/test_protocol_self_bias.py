"""The self-evaluation bias protocol (blind-spots paper §5.4) on real generations, offline.

Three generator systems answer the same four prompts: SmolLM2's own greedy continuations, human
continuations written for this test, and the greedy continuations of a tiny randomly initialised
Llama saved to a temporary folder. Two GPT-PPL evaluators, one on each model, score them all.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from blindspot.cli.self_bias_command import self_bias
from blindspot.protocols.self_bias import (
    Evaluator,
    format_matrix,
    parse_evaluator,
    parse_evaluators,
    rank_systems,
    self_bias_matrix,
)

#: one xdist group: its module fixtures (the tiny models' outputs and evaluators)
#: are set up once, not once per worker
pytestmark = pytest.mark.xdist_group("protocol_self_bias")

PROMPTS = ["The weather in London today is", "My favourite recipe for dinner is",
           "The history of the Roman Empire", "Scientists have discovered that"]
HUMAN = ["mild and grey, with a little rain expected in the afternoon.",
         "a simple tomato soup with fresh basil and warm bread.",
         "spans more than a thousand years of conquest, law and trade.",
         "some birds can sense the magnetic field of the Earth."]


def greedy_continuations(model_name: str, prompts: list[str]) -> list[str]:
    """Each prompt's greedy 20-token continuation, without the prompt."""
    import torch

    from blindspot.models import load_causal_lm

    tokenizer, model = load_causal_lm(model_name)
    outputs = []
    for prompt in prompts:
        ids = tokenizer(prompt, return_tensors="pt")
        with torch.inference_mode():
            tokens = model.generate(**ids, max_new_tokens=20, do_sample=False,
                                    pad_token_id=tokenizer.eos_token_id)
        outputs.append(tokenizer.decode(tokens[0, ids["input_ids"].shape[1]:],
                                        skip_special_tokens=True))
    return outputs


def build_tiny_causal_lm(folder: Path) -> str:
    """A randomly initialised 2-layer Llama with SmolLM2's real tokenizer, saved to ``folder``."""
    import torch
    from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM

    from blindspot.models import resolve_model

    tokenizer = AutoTokenizer.from_pretrained(resolve_model("smollm2"))
    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64,
                         num_hidden_layers=2, num_attention_heads=2, num_key_value_heads=2,
                         max_position_embeddings=256, bos_token_id=tokenizer.bos_token_id,
                         eos_token_id=tokenizer.eos_token_id)
    LlamaForCausalLM(config).eval().save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return str(folder)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> str:
    return build_tiny_causal_lm(tmp_path_factory.mktemp("tiny-llama"))


@pytest.fixture(scope="module")
def outputs(tiny: str) -> dict[str, list[str]]:
    return {"smollm2": greedy_continuations("smollm2", PROMPTS), "human": HUMAN,
            "tiny": greedy_continuations(tiny, PROMPTS)}


@pytest.fixture(scope="module")
def evaluators(tiny: str) -> list[Evaluator]:
    return [Evaluator("gpt_ppl@smollm2", "gpt_ppl", {"model": "smollm2"}, base_model="smollm2"),
            Evaluator("gpt_ppl@tiny", "gpt_ppl", {"model": tiny}, base_model="tiny"),
            # the same model credited to another system: it does not rank that one first
            Evaluator("gpt_ppl@smollm2 as human", "gpt_ppl", {"model": "smollm2"},
                      base_model="human")]


@pytest.fixture(scope="module")
def result(outputs: dict[str, list[str]], evaluators: list[Evaluator]) -> dict[str, Any]:
    return self_bias_matrix(outputs, evaluators, progress=False)


def test_every_evaluator_ranks_its_own_base_model_first(result: dict[str, Any]) -> None:
    assert result["ranking"]["gpt_ppl@smollm2"][0] == "smollm2"
    assert result["ranking"]["gpt_ppl@tiny"][0] == "tiny"
    own = result["self_preference"]["gpt_ppl@smollm2"]
    assert own["rank"] == 1 and own["ranks_first"] and own["margin"] > 0
    assert result["self_preference"]["gpt_ppl@tiny"]["ranks_first"]
    assert result["flagged"] == ["gpt_ppl@smollm2", "gpt_ppl@tiny"]
    assert result["errors"] == {}


def test_matrix_has_every_cell_and_ranks_follow_it(result: dict[str, Any]) -> None:
    assert result["systems"] == ["smollm2", "human", "tiny"]
    assert result["evaluators"] == ["gpt_ppl@smollm2", "gpt_ppl@tiny", "gpt_ppl@smollm2 as human"]
    for name in result["evaluators"]:
        cells = result["matrix"][name]
        assert set(cells) == set(result["systems"])
        assert all(isinstance(v, float) and math.isfinite(v) for v in cells.values())
        assert all(result["n"][name][s] == 4 for s in result["systems"])
        assert all(result["std"][name][s] >= 0 for s in result["systems"])
        by_hand = sorted(result["systems"], key=lambda s: cells[s], reverse=True)
        assert result["ranking"][name] == by_hand
    cells = result["matrix"]["gpt_ppl@smollm2"]
    assert result["self_preference"]["gpt_ppl@smollm2"]["margin"] == pytest.approx(
        cells["smollm2"] - max(cells["human"], cells["tiny"]))
    # the same scorer under two names gives the same column
    assert result["matrix"]["gpt_ppl@smollm2 as human"] == cells
    assert json.loads(json.dumps(result, allow_nan=False)) == result


def test_base_model_not_first_is_ranked_but_not_flagged(result: dict[str, Any]) -> None:
    cells = result["matrix"]["gpt_ppl@smollm2 as human"]
    preference = result["self_preference"]["gpt_ppl@smollm2 as human"]
    assert preference == {"base_model": "human", "rank": 2, "ranks_first": False,
                          "margin": pytest.approx(cells["human"] - cells["smollm2"])}
    assert preference["margin"] < 0
    assert "gpt_ppl@smollm2 as human" not in result["flagged"]


def test_cell_means_are_the_rows_scores(outputs, tiny: str, result: dict[str, Any]) -> None:
    from blindspot.scoring import get_scorer, score_rows

    rows = score_rows(get_scorer("gpt_ppl", model=tiny), outputs["human"])["gpt_ppl"]
    assert result["matrix"]["gpt_ppl@tiny"]["human"] == pytest.approx(sum(rows) / len(rows))


def test_table_bolds_the_best_and_flags_self_preference(result: dict[str, Any]) -> None:
    table = format_matrix(result)
    lines = table.splitlines()
    assert lines[0] == ("| generator | gpt_ppl@smollm2 (base: smollm2) | gpt_ppl@tiny (base: tiny) "
                        "| gpt_ppl@smollm2 as human (base: human) |")
    smol_row = next(line for line in lines if line.startswith("| smollm2 |")).split("|")
    best = result["matrix"]["gpt_ppl@smollm2"]["smollm2"]
    assert smol_row[2].strip() == f"**{best:.3f}** ⚑"
    assert smol_row[4].strip() == f"**{best:.3f}**"  # best, but not that evaluator's own system
    tiny_row = next(line for line in lines if line.startswith("| tiny |")).split("|")
    assert tiny_row[3].strip().endswith("** ⚑") and "**" not in tiny_row[2]
    assert sum("⚑ self-preference" in line for line in lines) == 2


def test_lower_is_better_ranks_ascending_with_references() -> None:
    systems = {"copy": list(HUMAN), "other": [" ".join(h.split()[::-1]) for h in HUMAN]}
    ter = parse_evaluator("ter=copy")
    assert not ter.higher_is_better
    result = self_bias_matrix(systems, [ter], references=HUMAN, progress=False)
    assert result["matrix"]["ter"]["copy"] == 0.0 and result["matrix"]["ter"]["other"] > 0
    assert result["ranking"]["ter"] == ["copy", "other"]
    assert result["self_preference"]["ter"]["margin"] == result["matrix"]["ter"]["other"]
    assert result["flagged"] == ["ter"]
    assert "| ter (base: copy) ↓ |" in format_matrix(result)


def test_rows_form_matches_the_mapping_form() -> None:
    import datasets

    rows = [{"system": s, "hypothesis": h, "references": r}
            for s, texts in (("copy", HUMAN), ("short", [h[:20] for h in HUMAN]))
            for h, r in zip(texts, HUMAN, strict=True)]
    chrf = [Evaluator("chrf", "chrf", {})]
    from_rows = self_bias_matrix(rows, chrf, progress=False)
    from_dataset = self_bias_matrix(datasets.Dataset.from_list(rows), chrf, progress=False)
    from_mapping = self_bias_matrix({"copy": HUMAN, "short": [h[:20] for h in HUMAN]}, chrf,
                                    references=HUMAN, progress=False)
    assert from_rows == from_dataset == from_mapping
    assert from_rows["self_preference"] == {} and from_rows["flagged"] == []


def test_model_in_a_spec_reaches_the_scorers_own_model_option() -> None:
    """``bertscore.f1@minilm`` means BERTScore's ``model_type``: the matrix scores with MiniLM
    exactly as the scoring layer does when asked directly."""
    from blindspot.scoring.engine import score_rows
    from blindspot.scoring.scorer import get_scorer

    short = [h[:25] for h in HUMAN]
    result = self_bias_matrix({"copy": HUMAN, "short": short},
                              [parse_evaluator("bertscore.f1@minilm=copy")], references=HUMAN,
                              progress=False)
    direct = score_rows(get_scorer("bertscore", model_type="minilm"), short, HUMAN)["f1"]
    assert result["matrix"]["bertscore.f1@minilm"]["short"] == pytest.approx(
        sum(direct) / len(direct))
    assert result["flagged"] == ["bertscore.f1@minilm"]  # a copy of the references ranks first


def test_nan_cell_is_an_error_never_ranked_or_flagged() -> None:
    # GPT-PPL of an empty text is NaN: the "short" system would otherwise win on 3 short rows
    broken = {"short": ["", "Yes.", "No.", "Yes."], "human": HUMAN}
    evaluator = Evaluator("ppl", "gpt_ppl", {"model": "smollm2"}, base_model="short")
    result = self_bias_matrix(broken, [evaluator], progress=False)
    assert result["matrix"]["ppl"]["short"] is None and result["std"]["ppl"]["short"] is None
    assert "1 of 4 rows scored NaN (row 0)" in result["errors"]["ppl"]["short"]
    assert result["ranking"]["ppl"] == ["human"]
    assert result["self_preference"]["ppl"] == {"base_model": "short", "rank": None,
                                                "ranks_first": False, "margin": None}
    assert result["flagged"] == []
    table = format_matrix(result)
    assert "| short | error |" in table and "- error, ppl x short: 1 of 4" in table
    json.dumps(result, allow_nan=False)


def test_rank_ties_keep_order_and_tie_at_top_is_no_preference() -> None:
    assert rank_systems({"a": 1.0, "b": 2.0, "c": 1.0, "d": None}) == ["b", "a", "c"]
    assert rank_systems({"a": 1.0, "b": 2.0}, higher_is_better=False) == ["a", "b"]
    systems = {"a": ["same text"], "b": ["same text"]}
    result = self_bias_matrix(systems, [Evaluator("rep", "rep_ngram", {"n": 1}, base_model="a")],
                              progress=False)
    assert result["self_preference"]["rep"] == {"base_model": "a", "rank": 1,
                                                "ranks_first": False, "margin": 0.0}


@pytest.mark.parametrize("outputs, kwargs, message", [
    ({}, {}, "outputs is empty"),
    ([], {}, "outputs has no rows"),
    ("text", {}, "outputs must be {system: [hypotheses]}"),
    ({"a": "one text"}, {}, "outputs['a'] must be a list of hypotheses"),
    ({"a": []}, {}, "outputs['a'] is empty"),
    ({"a": ["x", None]}, {}, "outputs['a'][1] must be a string"),
    ({"a": ["x"], "b": ["x", "y"]}, {"references": ["r"]},
     "references has 1 items for system 'b' but it has 2 outputs"),
    ({"a": ["x"]}, {"sources": {"b": ["s"]}}, "sources has no entry for system(s) ['a']"),
    ([{"system": "a", "hypothesis": "x"}], {"references": ["r"]}, "give references and sources as"),
    ([{"system": "a", "text": "x"}], {}, "row 1, field 'hypothesis': no column 'hypothesis'"),
])
def test_bad_outputs_name_the_argument(outputs: Any, kwargs: dict, message: str) -> None:
    evaluator = Evaluator("rep", "rep_ngram", {})
    with pytest.raises(ValueError) as error:
        self_bias_matrix(outputs, [evaluator], progress=False, **kwargs)
    assert message in str(error.value)


@pytest.mark.parametrize("evaluators, message", [
    ([], "evaluators is empty"),
    ([Evaluator("x", "no_such_metric", {})], "evaluator 'x': unknown metric 'no_such_metric'; "
                                             "valid metrics:"),
    ([Evaluator("x", "rep_ngram", {}, base_model="gpt2")],
     "base_model 'gpt2' is not a system; valid systems: ['a', 'b']"),
    ([Evaluator("x", "rep_ngram", {}), Evaluator("x", "chrf", {})], "repeated: ['x']"),
    ([Evaluator("x", "rep_ngram", {}, output="f1")], "has no output 'f1'; valid outputs: rep_ngram"),
    ([Evaluator("x", "chrf", {})], "evaluator 'x': metric 'chrf' needs references"),
    ([Evaluator("x", "mauve", {})], "gives only corpus-level scores"),
    ([Evaluator("x", "gpt_ppl", {"model": "smollm2", "modle": 1})],
     "metric 'gpt_ppl' has no option 'modle'"),
])
def test_bad_evaluators_name_the_evaluator(evaluators: list[Evaluator], message: str) -> None:
    with pytest.raises(ValueError) as error:
        self_bias_matrix({"a": ["x y"], "b": ["y z"]}, evaluators, progress=False)
    assert message in str(error.value)


@pytest.mark.parametrize("spec, expected", [
    ("gpt_ppl@smollm2=smollm2", Evaluator("gpt_ppl@smollm2", "gpt_ppl", {"model": "smollm2"},
                                          base_model="smollm2")),
    ("bertscore.f1@minilm", Evaluator("bertscore.f1@minilm", "bertscore", {"model": "minilm"},
                                      output="f1")),
    (" rep_ngram ", Evaluator("rep_ngram", "rep_ngram", {})),
    ("chrf=sys-1", Evaluator("chrf", "chrf", {}, base_model="sys-1")),
    ("ter", Evaluator("ter", "ter", {}, higher_is_better=False)),
    ("gpt_ppl@/m/a=b.c=d", Evaluator("gpt_ppl@/m/a=b.c", "gpt_ppl", {"model": "/m/a=b.c"},
                                     base_model="d")),
])
def test_parse_evaluator(spec: str, expected: Evaluator) -> None:
    assert parse_evaluator(spec) == expected


@pytest.mark.parametrize("spec, message", [
    ("gpt_ppl@", "nothing after '@'"),
    ("gpt_ppl@smollm2=", "nothing after '='"),
    ("bertscore.@minilm", "nothing after '.'"),
    ("@smollm2", "'' is not a metric name"),
    ("gpt-ppl", "'gpt-ppl' is not a metric name"),
])
def test_parse_evaluator_errors(spec: str, message: str) -> None:
    with pytest.raises(ValueError) as error:
        parse_evaluator(spec)
    assert message in str(error.value)


def test_parse_evaluators_splits_on_commas() -> None:
    assert [e.name for e in parse_evaluators("gpt_ppl@smollm2=smollm2, ter,")] == [
        "gpt_ppl@smollm2", "ter"]
    with pytest.raises(ValueError, match="evaluators is empty"):
        parse_evaluators(" , ")


def cli_app() -> typer.Typer:
    """A Typer app with the command registered as blindspot/cli/__init__.py registers it."""
    app = typer.Typer()
    app.callback()(lambda: None)
    app.command("self-bias")(self_bias)
    return app


def two_systems(folder: Path) -> Path:
    """A jsonl table of two systems (column ``gen``): the human texts and their words reversed,
    each with its human text as reference (``ref``)."""
    data = folder / "outputs.jsonl"
    systems = {"human": HUMAN, "reversed": [" ".join(h.split()[::-1]) for h in HUMAN]}
    with open(data, "w", encoding="utf-8") as fh:
        for system, texts in systems.items():
            for text, ref in zip(texts, HUMAN, strict=True):
                fh.write(json.dumps({"gen": system, "text": text, "ref": ref}) + "\n")
    return data


def test_cli_writes_json_and_markdown(tmp_path: Path) -> None:
    data = two_systems(tmp_path)
    args = ["self-bias", str(data), "-e", "gpt_ppl@smollm2=human,ter=human",
            "--system-column", "gen", "--hypothesis-column", "text", "--references-column", "ref",
            "--out", str(tmp_path / "out")]
    result = CliRunner().invoke(cli_app(), args)
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["report.md", "results.json"]
    saved = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))
    assert saved["systems"] == ["human", "reversed"]
    assert saved["flagged"] == ["gpt_ppl@smollm2", "ter"]
    assert saved["evaluator_specs"]["ter"]["higher_is_better"] is False
    table = (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    assert table == format_matrix(saved) and table in result.output


@pytest.mark.parametrize("extra, message", [
    (["-e", "nope"], "unknown metric 'nope'"),
    (["-e", "rep_ngram=gpt2"], "base_model 'gpt2' is not a system"),
    (["-e", "rep_ngram", "--system-column", "model"],
     "outputs.jsonl, row 1, field 'model': no column 'model'. The row's columns: "
     "['hypothesis', 'system']"),
    # the evaluator is checked before the data: a misspelt one is named with its fix, even
    # when the file lacks the system column too
    (["-e", "chrff", "--system-column", "model"], "did you mean 'chrf'?"),
])
def test_cli_errors_exit_2_with_the_message(tmp_path: Path, extra: list[str], message: str
                                            ) -> None:
    data = tmp_path / "outputs.jsonl"
    data.write_text(json.dumps({"system": "a", "hypothesis": "x y"}) + "\n", encoding="utf-8")
    result = CliRunner().invoke(cli_app(), ["self-bias", str(data), *extra])
    assert result.exit_code == 1
    assert message in result.output


def test_the_protocol_route_gives_the_commands_matrix(tmp_path: Path) -> None:
    """``blindspot run --protocol self-bias`` (the registered protocol) writes the same report
    folder as ``blindspot self-bias --out``: results.json and report.md, byte for byte."""
    from blindspot.cli import app as blindspot_app

    data = two_systems(tmp_path)
    command = CliRunner().invoke(cli_app(), [
        "self-bias", str(data), "-e", "chrf=human,ter=reversed", "--system-column", "gen",
        "--hypothesis-column", "text", "--references-column", "ref",
        "--out", str(tmp_path / "command")])
    assert command.exit_code == 0, command.output
    run = CliRunner().invoke(blindspot_app, [
        "run", "--protocol", "self-bias", "--data", str(data), "--metrics",
        "chrf=human,ter=reversed", "--protocol-option", "system_column=gen",
        "--hypothesis-column", "text", "--references-column", "ref",
        "--out", str(tmp_path / "run")])
    assert run.exit_code == 0, run.output
    for name in ("results.json", "report.md"):
        assert (tmp_path / "run" / name).read_bytes() == (tmp_path / "command" / name).read_bytes()
    saved = json.loads((tmp_path / "run" / "results.json").read_text(encoding="utf-8"))
    assert saved["flagged"] == ["chrf"]  # chrF ranks the human outputs (= the refs) first
    assert (tmp_path / "run" / "report.md").read_text("utf-8") == format_matrix(saved)
