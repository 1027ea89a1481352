"""The ``blindspot`` command: list the catalogue, perturb a file, run the demo, build datasets,
serve the Space."""

from __future__ import annotations

import gc
import json
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.table import Table

from blindspot import defaults
from blindspot.cli_columns import HYPOTHESIS_COLUMN, ID_COLUMN, REFERENCES_COLUMN, SOURCE_COLUMN
from blindspot.cli_protocol import console, run_job, seeds_option
from blindspot.demo_job import run_demo
from blindspot.errors import BlindspotInputError
from blindspot.evaluate_modules import load_name, register_modules
from blindspot.exit_codes import EPILOG, BlindspotGroup, FailOn, fail
from blindspot.extras import missing_extra
from blindspot.faults import terminate_as_interrupt
from blindspot.io import read_table, write_table
from blindspot.judge_audit_cli import judge_audit
from blindspot.protocols.registry import PROTOCOLS
from blindspot.report.files import atomic_write_text
from blindspot.search_cli import search
from blindspot.self_bias_cli import self_bias
from blindspot.suggest import did_you_mean

SEEDS_TEXT = ",".join(map(str, defaults.SEEDS))  # the CLI spells the default seeds "1,2,3,4,5"

# Imported inside their commands, the heavy edge that `blindspot --help` (and `list`) must not pay
# for: the perturbation catalogue (every test module), perturbations.dataset (datasets, pandas),
# report.table1 and the dataset builders (scipy, spaCy), the Space (gradio).

app = typer.Typer(cls=BlindspotGroup, add_completion=False, no_args_is_help=True,
                  help="Stress tests that find the blind spots of text-generation metrics.")
err = Console(stderr=True)


#: ``--fail-on``, shared by ``run`` and ``stream``
FAIL_ON = typer.Option(FailOn.error, "--fail-on", case_sensitive=False,
                       help="exit 3 when a test fails (fail), or fails beyond the noise "
                            "(significant: within-noise fails are ignored); error (default): "
                            "exit 2 only when a test ends in error")


#: ``--split`` and ``--option``, shared by ``run`` and ``checkup``
SPLIT = typer.Option("test", help="split of a Hub dataset")
METRIC_OPTION = typer.Option([], "--option", help="metric option metric.key=value "
                             "(repeatable), e.g. bertscore.idf=true")


def _resources(mlm: str | None, lm: str | None, ngram_corpus: str | None) -> dict[str, Any]:
    return {"mlm": mlm, "lm": lm, "ngram_corpus": ngram_corpus}


@app.command("list")
def list_tests(task: str | None = typer.Option(None, help="only tests the paper runs on this task"),
               as_json: bool = typer.Option(False, "--json", help="print JSON instead of a table")
               ) -> None:
    """List every perturbation with its category, paper levels per task and needs."""
    from blindspot.perturbations import list_perturbations  # every test module

    try:
        entries = list_perturbations(task)
    except ValueError as error:
        fail(str(error))
    if as_json:
        console.print_json(json.dumps(entries))
        return
    table = Table(title="blindspot perturbations")
    for col in ("test", "category", "levels (sum / wmt / ted / wiki)", "needs", "description"):
        table.add_column(col, overflow="fold")
    for e in entries:
        lv = e["levels"]
        levels = " / ".join(",".join(lv[t]) or "-" for t in
                            ("summarization", "translation", "translation_paragraph", "open_ended"))
        table.add_row(e["name"], e["category"], levels, ",".join(e["needs"]) or "-",
                      e["description"])
    console.print(table)


@app.command("protocols")
def list_protocols() -> None:
    """List the meta-evaluation protocols, what each measures, and their --protocol-option
    settings."""
    protocols = Table(title="blindspot protocols (--protocol NAME)")
    for col in ("protocol", "what it measures"):
        protocols.add_column(col, overflow="fold")
    for protocol in PROTOCOLS.values():
        protocols.add_row(protocol.name, protocol.description)
    console.print(protocols)
    table = Table(title="their options (--protocol-option key=value)")
    for col in ("protocol", "option", "accepts", "default", "Space", "help"):
        table.add_column(col, overflow="fold")
    for protocol in PROTOCOLS.values():
        for spec in protocol.options:
            space = "upload" if spec.file else ("yes" if spec.visitor_safe else "no")
            table.add_row(protocol.name, spec.name, spec.accepted(),
                          "-" if spec.default is None else str(spec.default), space, spec.help)
    console.print(table)


@app.command()
def perturb(
    input: Path = typer.Argument(..., help="jsonl, csv or parquet file"),
    output: Path = typer.Option(..., "-o", "--output", help="output file (format from extension)"),
    test: str = typer.Option(..., "--test", help="a test name, or fluency|consistency|targeted|all"),
    level: str | None = typer.Option(None, help="level of a single test; omit for the paper levels"),
    seed: int | None = typer.Option(None, help="seed for a single level (default 1)"),
    seeds: str = typer.Option(SEEDS_TEXT, help="seeds of a suite run"),
    task: str = typer.Option("summarization",
                             help="summarization|translation|translation_paragraph|open_ended"),
    column: str = typer.Option("gold", help="the text column to perturb"),
    id_column: str = typer.Option("id", help="row-id column (a text hash when absent)"),
    source_column: str | None = typer.Option(None, help="source column (copy-source)"),
    mlm: str | None = typer.Option(None, help="masked LM for BERT-diverge (Hub id or folder)"),
    lm: str | None = typer.Option(None, help="causal-LM tokenizer for positioned error"),
    ngram_corpus: str | None = typer.Option(None, help="corpus file for frequent n-gram"),
    num_proc: int | None = typer.Option(None, help="worker processes"),
) -> None:
    """Perturb a file: one test at one level, or a whole suite at the task's paper levels."""
    from blindspot.perturbations.dataset import perturb_dataset, run_suite  # datasets: heavy
    from blindspot.perturbations.suites import suite_names  # every test module

    resources = _resources(mlm, lm, ngram_corpus)
    try:
        ds = read_table(input)
        if level is not None and test not in suite_names() and "," not in test:
            out = perturb_dataset(ds, test, level, seed if seed is not None else 1, column=column,
                                  id_column=id_column, source_column=source_column,
                                  num_proc=num_proc, task=task, **resources)
        else:
            if level is not None:
                fail("--level applies to a single test; a suite runs at the paper levels")
            chosen = [seed] if seed is not None else seeds_option(seeds)
            out, plan = run_suite(ds, test, task, chosen, column=column, id_column=id_column,
                                  source_column=source_column, resources=resources,
                                  num_proc=num_proc)
            for name, why in plan.skipped.items():
                err.print(f"[yellow]skipped[/] {name}: {why}")
        write_table(out, output)
    except BlindspotInputError as error:  # the perturbations know the row, we know the file
        fail(str(error.in_file(input)))
    except (ValueError, KeyError, FileNotFoundError) as error:
        fail(str(error).strip("'\""))
    console.print(f"wrote {out.num_rows} rows to {output}")


@app.command()
def demo(out: Path = typer.Option(Path("out/demo"), help="output folder (one report per task)"),
         seeds: str = typer.Option("1,2,3", help="seeds of the random tests"),
         num_proc: int | None = typer.Option(None, help="worker processes")) -> None:
    """The main job on the embedded demo corpus: offline metrics judged on every test, reported."""
    run_demo(out, seeds_option(seeds), num_proc=num_proc, console=console)


def _parse_options(items: list[str]) -> dict[str, dict[str, Any]]:
    """``metric.key=value`` items as ``{metric: {key: value}}``; values are JSON when they parse."""
    options: dict[str, dict[str, Any]] = {}
    for item in items:
        name, sep, value = item.partition("=")
        metric, dot, key = name.partition(".")
        if not (sep and dot and metric and key):
            fail(f"--option {item!r} must look like metric.key=value, e.g. bertscore.idf=true")
        options.setdefault(metric, {})[key] = _json_or_text(value)
    return options


def _json_or_text(value: str) -> Any:
    """A command-line value as JSON when it parses (true, 3, [1,2]), else the text itself."""
    try:
        return json.loads(value)
    except ValueError:
        return value


@app.command(epilog=EPILOG)
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
    options = {**_engine_settings(engine, address, actors, gpus_per_actor),
               **_parse_settings(protocol_option)}
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
             metric_options=_judge_options(_parse_options(option), judge_url, max_calls),
             resources=_resources(mlm, lm, ngram_corpus),
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


@app.command()
def checkup(
    metric: str = typer.Argument(..., help="one metric spec (rouge, bertscore.f1@minilm), "
                                 "my_metric.py:function, ./module_folder/ or org/hub_module"),
    data: str = typer.Option(..., "--data", help="jsonl/csv/parquet file, Hub id, or 'demo'"),
    task: str = typer.Option("summarization", help="summarization|translation|"
                             "translation_paragraph|open_ended"),
    out: Path = typer.Option(Path("checkup"), "--out", help="report folder"),
    option: list[str] = METRIC_OPTION,
    split: str = SPLIT,
    hypothesis_column: str | None = HYPOTHESIS_COLUMN,
    references_column: str | None = REFERENCES_COLUMN,
    source_column: str | None = SOURCE_COLUMN,
    id_column: str | None = ID_COLUMN,
    rows: int = typer.Option(64, help="check the first N rows"),
    seed: int = typer.Option(0, help="seed of the shuffled-word and random-character anchors "
                             "and of the appended text"),
    max_words: int = typer.Option(2048, help="truncation check: append at most this many "
                                  "words before reporting no limit"),
) -> None:
    """A metric's check-up: batch/order invariance, determinism, the input length it is blind
    past, normalisation, reference handling and sanity anchors in score units."""
    from blindspot.checkup.run import checkup_exit_code, print_summary, run_checkup

    columns = {"hypothesis": hypothesis_column, "references": references_column,
               "source": source_column, "id": id_column}
    try:
        results = run_checkup(metric, data, task=task, columns=columns, split=split,
                              metric_options=_parse_options(option), rows=rows, seed=seed,
                              max_words=max_words, out=out)
    except (ValueError, KeyError, FileNotFoundError) as error:
        fail(str(error).strip("'\""))
    print_summary(results, console)
    console.print(f"[bold]report:[/] {(out / 'report.md').resolve()}")
    raise typer.Exit(code=checkup_exit_code(results))


def _engine_settings(engine: str, address: str | None, actors: int | None,
                     gpus_per_actor: float | None) -> dict[str, Any]:
    """The engine's protocol options; none for the default local engine (every protocol has it)."""
    if engine == "local" and address is None and actors is None and gpus_per_actor is None:
        return {}
    given = {"address": address, "actors": actors, "gpus_per_actor": gpus_per_actor}
    return {"engine": engine, **{k: v for k, v in given.items() if v is not None}}


def _parse_settings(items: list[str]) -> dict[str, Any]:
    """``key=value`` items as a dict; values are JSON when they parse, else strings."""
    settings: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not (sep and key.strip()):
            fail(f"--protocol-option {item!r} must look like key=value")
        settings[key.strip()] = _json_or_text(value)
    return settings


@app.command()
def stream(
    data: Path = typer.Option(..., "--data", help="a .jsonl or .parquet file, read chunk by "
                              "chunk"),
    metrics: str = typer.Option("rouge", help="comma-separated metric specs (row-level ones)"),
    task: str = typer.Option("summarization", help="summarization|translation|"
                             "translation_paragraph|open_ended"),
    tests: str = typer.Option(defaults.TESTS, help="suites and/or test names"),
    out: Path = typer.Option(Path("stream"), "--out", help="report folder"),
    seeds: str = typer.Option(SEEDS_TEXT, help="seeds of the random tests"),
    chunk_size: int = typer.Option(2000, help="rows in memory at a time"),
    hypothesis_column: str | None = HYPOTHESIS_COLUMN,
    references_column: str | None = REFERENCES_COLUMN,
    source_column: str | None = SOURCE_COLUMN,
    id_column: str | None = ID_COLUMN,
    lm: str | None = typer.Option(None, help="causal-LM tokenizer for positioned error"),
    ngram_corpus: str | None = typer.Option(None, help="corpus file for frequent n-gram"),
    noise_cap: float = typer.Option(defaults.NOISE_CAP, help="judge only points below this noise ratio"),
    fail_on: FailOn = FAIL_ON,
) -> None:
    """`blindspot run --chunk-size 2000`: the main job on a file of any size, in bounded memory."""
    columns = {"hypothesis": hypothesis_column, "references": references_column,
               "source": source_column, "id": id_column}
    run_job("rank", out, data=[str(data)], metrics=metrics, task=task, tests=tests,
             seeds=seeds_option(seeds), columns=columns,
             resources=_resources(None, lm, ngram_corpus), noise_cap=noise_cap,
             options={"chunk_size": chunk_size}, fail_on=fail_on)


@app.command("report")
def report_table(
    results: Path = typer.Argument(..., help="a run's results.json (or its report folder)"),
    format: str = typer.Option("markdown", "--format", help="csv, latex or markdown"),
    out: Path | None = typer.Option(None, "--out", help="write the table to this file "
                                       "(default: print it)"),
) -> None:
    """Table 1 of a finished run for a paper: tests as rows, metrics as columns, each verdict
    with its relative change in % of the gold score (within-noise fails marked)."""
    from blindspot.report.table1 import FORMATS, ResultsFileError, load_results  # scipy: heavy

    if format not in FORMATS:
        fail(f"--format {format!r} is not one of {', '.join(FORMATS)}"
             f"{did_you_mean(format, FORMATS)}")
    try:
        text = FORMATS[format](load_results(results))
    except ResultsFileError as error:
        fail(str(error))
    if out is None:
        typer.echo(text, nl=False)
        return
    try:
        atomic_write_text(out, text)
    except OSError as error:
        fail(f"{out}: cannot write the table ({error.strerror}); pass --out a writable file")
    console.print(f"wrote the {format} table of {results} to {out}")


@app.command("install-modules")
def install_modules_command() -> None:
    """Register the metric modules with evaluate as `blindspot/<name>`, so that
    `evaluate.load("blindspot/rouge")` finds ours offline (canonical names are left alone);
    blindspot, blindspot_accuracy and preference_accuracy also load by their bare names."""
    written, startup_file = register_modules()
    console.print(f"registered {len(written)} metric modules: "
                  + ", ".join(load_name(p.stem) for p in written))
    console.print(f"evaluate's cached-module notice hidden for them by {startup_file}")


@app.command("build-dataset", add_help_option=False,
             context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def build_dataset(ctx: typer.Context) -> None:
    """Build a Hub-ready adversarial dataset folder (see `blindspot build-dataset --help`)."""
    from blindspot.datasets_scripts.build_adversarial import main as build_main

    raise typer.Exit(code=build_main(list(ctx.args)) or 0)


@app.command("build-menli", add_help_option=False,
             context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def build_menli(ctx: typer.Context) -> None:
    """Build a MENLI-style adversarial set folder (see `blindspot build-menli --help`)."""
    from blindspot.datasets_scripts.menli_builder import main as menli_main

    raise typer.Exit(code=menli_main(list(ctx.args)) or 0)


@app.command("build-challenge", add_help_option=False,
             context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def build_challenge(ctx: typer.Context) -> None:
    """Build a DEMETR or ACES challenge set folder (see `blindspot build-challenge --help`)."""
    from blindspot.datasets_scripts.challenge_builder import main as challenge_main

    raise typer.Exit(code=challenge_main(list(ctx.args)) or 0)


@app.command("publish", add_help_option=False,
             context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def publish(ctx: typer.Context) -> None:
    """Build and push the prebuilt adversarial sets (see `blindspot publish --help`)."""
    from blindspot.datasets_scripts.publish import main as publish_main

    raise typer.Exit(code=publish_main(list(ctx.args)) or 0)


app.command("self-bias")(self_bias)
app.command("search")(search)
app.command("judge-audit")(judge_audit)


@app.command()
def space(host: str = typer.Option("127.0.0.1", help="address to serve on (0.0.0.0: every "
                                   "interface, e.g. in a container)"),
          port: int | None = typer.Option(None, help="port (default: 7860, or the next free)"),
          datasets_dir: Path | None = typer.Option(None, help="folder of built adversarial "
                                                      "datasets (default: out/datasets)"),
          allow_hub_models: bool = typer.Option(False, "--allow-hub-models", help="let visitors "
                                                "name Hub models in metric specs (@org/name); "
                                                "local paths stay refused"),
          max_upload_mb: float | None = typer.Option(None, min=0.001, help="upload size "
                                                        "limit in MB (default 20)"),
          max_rows: int | None = typer.Option(None, min=1, help="rows per uploaded data file "
                                                 "(default 5000)"),
          max_runs: int | None = typer.Option(None, min=1, help="runs per browser session "
                                                 "(default 20)"),
          run_seconds: float | None = typer.Option(None, min=1, help="a run still going "
                                                      "after this many seconds is stopped "
                                                      "(default 900)"),
          judge_url: str | None = typer.Option(None, "--judge-url", help="the one "
                                                  "OpenAI-compatible server llm_judge calls "
                                                  "(visitors never name one; default: the "
                                                  "judge runs in this process)"),
          ) -> None:
    """Serve the Gradio Space (perturb, stress-test, compare, browse) in the browser.

    Visitor limits default to the BLINDSPOT_SPACE_* environment variables, else the values
    shown; the flags override both."""
    from blindspot.judges.backends import check_url
    from blindspot.space import serve
    from blindspot.space.limits import limits_from_env

    try:
        limits = limits_from_env().with_given(
            max_upload_mb=max_upload_mb, max_rows=max_rows, max_runs=max_runs,
            run_seconds=run_seconds, allow_hub_models=allow_hub_models or None,
            judge_url=None if judge_url is None else check_url(judge_url))
    except ValueError as error:
        fail(str(error))
    serve(host, port, datasets_dir, limits)


def main() -> None:
    try:
        with terminate_as_interrupt():  # SIGTERM stops a command as Ctrl-C does (exit 143)
            app()
    except ModuleNotFoundError as error:  # a module of an extra the install left out
        if (line := missing_extra(error)) is None:
            raise
        try:
            fail(line)
        except typer.Exit as done:  # outside the app, an Exit is a plain exit status
            raise SystemExit(done.exit_code) from None
    finally:
        # the command is done: the interpreter's exit would still walk every object it holds
        # (spaCy, WordNet, a model: seconds after a demo) in its last collections; frozen
        # objects are left to the process's end (every file we write is closed already)
        gc.freeze()


if __name__ == "__main__":
    main()
