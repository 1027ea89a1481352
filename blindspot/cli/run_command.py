"""``blindspot run``: the main job, any protocol, on any data."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from blindspot import defaults
from blindspot.cli._options import (
    FAIL_ON,
    HYPOTHESIS_COLUMN,
    ID_COLUMN,
    METRIC_OPTION,
    REFERENCES_COLUMN,
    SEEDS_TEXT,
    SOURCE_COLUMN,
    SPLIT,
    engine_settings,
    parse_options,
    parse_settings,
    resources,
)
from blindspot.cli._protocol import run_job, seeds_option
from blindspot.exit_codes import FailOn, fail


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
    engine: str = typer.Option("local", help="where perturbation and scoring run: local (this "
                               "machine) or ray (a Ray cluster; rank protocol)"),
    address: str | None = typer.Option(None, help="Ray cluster to join with --engine ray: "
                                          "auto or HOST:PORT from a node of it, ray://HOST:PORT "
                                          "(Ray Client) from elsewhere (default: start one here)"),
    actors: int | None = typer.Option(None, help="--engine ray: scoring actors (default: one "
                                         "per GPU, else one per CPU)"),
    gpus_per_actor: float | None = typer.Option(None, help="--engine ray: GPUs per scoring "
                                                   "actor (default: 1 when the cluster has GPUs)"),
    protocol: str = typer.Option("rank", help="meta-evaluation protocol: "
                                 "rank (default) or another registered one"),
    protocol_option: list[str] = typer.Option([], "--protocol-option", help="a setting of the "
                                              "protocol, key=value (repeatable); `blindspot "
                                              "protocols` lists each protocol's options"),
    chunk_size: int | None = typer.Option(None, "--chunk-size", help="stream each data file "
                                             "(a local .jsonl/.parquet) this many rows at a "
                                             "time, in bounded memory, with the same results; "
                                             "rank protocol; resumes like any run"),
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
) -> None:
    """The main job: perturb gold data, score it with each metric, judge every test, report."""
    options = {**engine_settings(engine, address, actors, gpus_per_actor),
               **parse_settings(protocol_option)}
    if data_format is not None:
        if protocol != "preference":
            fail(f"--format reads challenge sets for the preference protocol, not {protocol!r}; "
                 f"add --protocol preference")
        options["format"] = data_format
    if chunk_size is not None:
        if protocol != "rank":
            fail(f"--chunk-size streams the rank protocol only, not {protocol!r}")
        options["chunk_size"] = chunk_size
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
