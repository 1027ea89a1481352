"""The ``blindspot judge-audit`` command: the judge audits of :mod:`blindspot.judge_audit` on the
first rows of a dataset.

A plain function with ``typer`` defaults, registered in :data:`blindspot.cli.COMMANDS`. It prints
one line per audit (its verdict and why) and, with ``--out``, writes ``judge_audit.json`` there:
each audit's rule, tolerance, verdict and figures, and the judge's settings (never its key, which
only the environment holds).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer

from blindspot.exit_codes import fail

AUDIT_NAMES = ("position", "rubric", "flakiness", "panel")
FILE = "judge_audit.json"


def _variant(text: str) -> dict[str, Any]:
    """``key=value,key=value`` as judge options (values JSON when they parse)."""
    options: dict[str, Any] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        key, sep, value = item.partition("=")
        if not (sep and key):
            fail(f"--judge or --judge-options {text!r}: {item!r} must look like key=value, e.g. "
                 "rubric=reworded")
        try:
            options[key] = json.loads(value)
        except ValueError:
            options[key] = value
    return options


def judge_audit(
    data: str = typer.Option("demo", "--data", help="jsonl/csv/parquet file, Hub id, or 'demo'"),
    task: str = typer.Option("summarization", help="the data's task"),
    model: str = typer.Option("smollm2", help="the judge's model (a short name, a folder, a Hub "
                              "id, or the name a --judge-url server knows)"),
    template: str = typer.Option("fluency", help="the template graded by the rubric, panel and "
                                 "flakiness audits (a shipped name or your .toml file)"),
    pairwise: str = typer.Option("pairwise", help="the pairwise template of the position audit"),
    audits: str = typer.Option("position,rubric,flakiness", help="comma-separated: "
                               + ", ".join(AUDIT_NAMES)),
    rows: int = typer.Option(4, min=1, help="judge the data's first ROWS rows"),
    test: str = typer.Option("truncation", help="the text test whose perturbed gold the position "
                             "audit pairs with the gold, and whose verdict the flakiness audit "
                             "repeats"),
    level: str | None = typer.Option(None, help="the test's level (default: its first for the "
                                        "task)"),
    repeats: int = typer.Option(3, min=2, help="flakiness: sampled repeats (one seed each)"),
    judge: list[str] = typer.Option([], "--judge", help="panel: one judge as options over the "
                                    "base judge, e.g. rubric=reworded or model=./other "
                                    "(repeatable; default: the rubric as written, reversed, "
                                    "reworded)"),
    mode: str = typer.Option("weighted", help="how the position, rubric and panel judges answer: "
                             "weighted, greedy"),
    judge_options: str = typer.Option("", "--judge-options", help="more options of the judge, "
                                      "key=value,... e.g. temperature=0.3,max_tokens=16"),
    judge_url: str | None = typer.Option(None, "--judge-url", help="an OpenAI-compatible "
                                            "server (its key from $OPENAI_API_KEY)"),
    max_calls: int | None = typer.Option(None, "--max-calls", min=0, help="refuse an audit "
                                            "that needs more judge calls than this"),
    tolerance: list[str] = typer.Option([], "--tolerance", help="an audit's tolerance, "
                                        "audit=value (repeatable), e.g. position=0.2"),
    out: Path | None = typer.Option(None, help="folder for judge_audit.json"),
) -> None:
    """The judge's own blind spots: position (pairwise order), rubric order and wording,
    flakiness of a sampled judge, and panels of several judges, on the data's first rows.
    Exits 0 once judged, like `blindspot run`; a failed audit says FAIL."""
    from blindspot import judge_audit as audit
    from blindspot.checkup.run import load_rows  # datasets: heavy
    from blindspot.errors import BlindspotInputError
    from blindspot.faults import ScorerUnavailable
    from blindspot.perturbations.base import REGISTRY

    chosen = [a.strip() for a in audits.split(",") if a.strip()]
    tolerances: dict[str, float] = {}
    try:
        for name in chosen:
            audit.AUDITS.get(name)  # a misspelt audit is named, with the valid ones
        for item in tolerance:
            name, _, value = item.partition("=")
            tolerances[audit.AUDITS.get(name.strip()).name] = float(value)
    except ValueError as error:
        fail(f"{error} (--audits, --tolerance audit=value)")
    base: dict[str, Any] = {**_variant(judge_options), "model": model, "mode": mode}
    if judge_url is not None:
        base.update(backend="openai", url=judge_url)
    if max_calls is not None:
        base["max_calls"] = max_calls
    results = []
    try:
        _, checked = load_rows(data, task, None, "test", max(rows, 2))
        texts = checked.hypotheses[:rows]
        sources = checked.sources[:rows] if checked.sources else None
        refs = checked.references[:rows] if checked.references else None
        perturbation = REGISTRY.get(test)(task=task)
        paper = perturbation.paper_levels(task)
        if level is None and not paper:
            raise ValueError(f"test {test!r} has no level for task {task!r}; give --level")
        chosen_level = perturbation.check_level(level) if level is not None else paper[0]
        graded = {**base, "template": template}
        for name in chosen:
            if name == "position":
                made = perturbation.apply_rows(texts, list(range(len(texts))), chosen_level, 0)
                kept = [i for i, ok in enumerate(made["applied"]) if ok]  # a row the test
                # left alone would pair the gold with itself
                results.append(audit.position(
                    {**base, "template": pairwise}, [texts[i] for i in kept],
                    [made["perturbed"][i] for i in kept],
                    [sources[i] for i in kept] if sources else None, tolerances.get(name)))
            elif name == "rubric":
                results.append(audit.rubric(graded, texts, sources, refs,
                                            tolerances.get(name)))
            elif name == "flakiness":
                results.append(audit.flakiness(graded, texts, test, chosen_level, repeats,
                                               sources, task))
            else:
                variants = [_variant(j) for j in judge] or [
                    {"rubric": r} for r in ("as_written", "reversed", "reworded")]
                judges = {",".join(f"{k}={v}" for k, v in v.items()) or "base": {**graded, **v}
                          for v in variants}
                results.append(audit.judge_panel(judges, texts, sources, refs,
                                                 tolerances.get(name)))
    except (BlindspotInputError, ValueError, ScorerUnavailable, FileNotFoundError) as error:
        fail(str(error))
    for result in results:
        verdict = "pass" if result.passed else "FAIL"
        typer.echo(f"{result.audit:<10} {verdict:<5} {result.rule}: {result.explanation}")
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        settings = {k: v for k, v in base.items() if k != "url"}
        payload = {"judge": {**settings, "template": template, "pairwise": pairwise,
                             "server": judge_url is not None},
                   "data": data, "task": task, "rows": len(texts), "test": test,
                   "level": chosen_level,
                   "audits": {r.audit: {"rule": r.rule, "tolerance": r.tolerance,
                                        "passed": r.passed, "explanation": r.explanation,
                                        **r.figures} for r in results}}
        path = out / FILE
        path.write_text(json.dumps(payload, indent=2, default=str) + "\n", encoding="utf-8")
        typer.echo(f"wrote {path}", err=True)
