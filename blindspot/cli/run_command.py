"""``blindspot run``: the main job, any protocol, on any data.

Where the work runs (``--engine``, ``--address``, ``--actors``, ``--gpus-per-actor``,
``--chunk-size``) are the rank protocol's declared options (:data:`ENGINE_OPTIONS`); every other
protocol setting is ``--protocol-option key=value``, checked against the chosen protocol's
declaration."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from blindspot import defaults
from blindspot.cli._declared import declared_options
from blindspot.cli._options import (
    FAIL_ON,
    HYPOTHESIS_COLUMN,
    ID_COLUMN,
    METRIC_OPTION,
    REFERENCES_COLUMN,
    SEEDS_TEXT,
    SOURCE_COLUMN,
    SPLIT,
    parse_options,
    parse_settings,
    resources,
)
from blindspot.cli._protocol import run_job, seeds_option
from blindspot.exit_codes import FailOn, fail
from blindspot.protocols.declarations import ENGINE_OPTIONS, RANK


@declared_options(RANK, *ENGINE_OPTIONS)
def run(
    data: list[str] = typer.Option(..., "--data", help="jsonl/csv/parquet file, Hub id, or 'demo'; "
                                   "repeat for several datasets"),
    metrics: str = typer.Option(..., "--metrics", help="comma-separated metric.output@model "
                                "(.output and @model optional), "
                                "e.g. rouge,bertscore@minilm,gpt_ppl@smollm2; your own: "
                                "my_metric.py:function, ./module_folder/, org/hub_module"),
    task: str = typer.Option("summarization", help="summarization|translation|"
                             "translation_paragraph|open_ended (deviation protocol: also "
                             "question_generation|dialogue|image_captioning|data_to_text)"),
    tests: str = typer.Option(defaults.TESTS, help="suites and/or test names, comma-separated"),
    out: Path = typer.Option(Path("report"), "--out", help="report folder (keeps the run's state "
                             "in .state: rerun the same command to resume)"),
    seeds: str = typer.Option(SEEDS_TEXT, help="seeds of the random tests"),
    hypothesis_column: str | None = HYPOTHESIS_COLUMN,
    references_column: str | None = REFERENCES_COLUMN,
    source_column: str | None = SOURCE_COLUMN,
    id_column: str | None = ID_COLUMN,
    split: str = SPLIT,
    option: list[str] = METRIC_OPTION,
    mlm: str | None = typer.Option(None, help="masked LM for BERT-diverge"),
    lm: str | None = typer.Option(None, help="causal-LM tokenizer for positioned error "
                                     "(default: smollm2 when installed)"),
    ngram_corpus: str | None = typer.Option(None, help="corpus file for frequent n-gram"),
    noise_cap: float = typer.Option(defaults.NOISE_CAP, help="judge only points below this noise ratio"),
    num_proc: int | None = typer.Option(None, help="worker processes for parsing and perturbing"),
    protocol: str = typer.Option("rank", help="meta-evaluation protocol: "
                                 "rank (default) or another registered one"),
    protocol_option: list[str] = typer.Option([], "--protocol-option", help="a setting of the "
                                              "protocol, key=value (repeatable); `blindspot "
                                              "protocols` lists each protocol's options"),
    data_format: str | None = typer.Option(None, "--format", help="preference protocol: "
                                              "read --data as a challenge set in its published "
                                              "format, demetr or aces (default: MENLI columns)"),
    judge_url: str | None = typer.Option(None, "--judge-url", help="llm_judge: the base URL of "
                                            "an OpenAI-compatible server (its key from "
                                            "$OPENAI_API_KEY, or the variable "
                                            "llm_judge.api_key_env names)"),
    max_calls: int | None = typer.Option(None, "--max-calls", min=0, help="llm_judge: refuse a "
                                            "run that needs more judge calls than this"),
    fail_on: FailOn = FAIL_ON,
    options: dict[str, Any] | None = None,
) -> None:
    """The main job: perturb gold data, score it with each metric, judge every test, report."""
    options = {**(options or {}), **parse_settings(protocol_option)}
    if data_format is not None:
        if protocol != "preference":
            fail(f"--format reads challenge sets for the preference protocol, not {protocol!r}; "
                 f"add --protocol preference")
        options["format"] = data_format
    if "chunk_size" in options and protocol != "rank":
        fail(f"--chunk-size streams the rank protocol only, not {protocol!r}")
    if fail_on is not FailOn.error and protocol != "rank":
        fail(f"--fail-on {fail_on.value} gates on the rank protocol's verdicts, not on "
              f"{protocol!r}; leave it out or use --protocol rank")
    columns = {"hypothesis": hypothesis_column, "references": references_column,
               "source": source_column, "id": id_column}
    run_job(protocol, out, data=data, metrics=metrics, task=task, tests=tests,
             seeds=seeds_option(seeds), columns=columns, split=split,
             metric_options=_judge_options(parse_options(option), judge_url, max_calls),
             resources=resources(mlm, lm, ngram_corpus),
             noise_cap=noise_cap, num_proc=num_proc, options=options, fail_on=fail_on)


def _judge_options(options: dict[str, dict[str, Any]], judge_url: str | None,
                   max_calls: int | None) -> dict[str, dict[str, Any]]:
    """``--judge-url`` (the openai backend at that server) and ``--max-calls`` as llm_judge's
    options."""
    judge = options.setdefault("llm_judge", {})
    if judge_url is not None:
        judge.update(backend="openai", url=judge_url)
    if max_calls is not None:
        judge["max_calls"] = max_calls
    if not judge:
        del options["llm_judge"]
    return options
