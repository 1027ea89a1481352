"""A metric's report card (issue 42): the ``card`` protocol, and the cards a leaderboard reads.

``blindspot card METRIC`` composes the protocols that already judge a metric, each run through
:meth:`~blindspot.protocols.interface.Protocol.run` as every entry point runs it: on each demo
task the metric applies to (:func:`applies`; or on ``--data``), the blind-spot suite (``rank``);
on the first task's first rows the ``checkup``; given human judgments (the ``human`` option) the
``correlation`` with them, Kendall's tau with a bootstrap interval per criterion; for an LLM
judge, the ``judge-audit``. The cost is one uncached scoring pass over the first task's rows.
The report folder is ``results.json`` and ``card.md`` (:mod:`blindspot.report.card_report`),
through the one writer; ``reports=true`` adds each composed protocol's own folder.

A card records what its numbers follow from (``inputs``: the code of the verdict rules, the
metric's signature and scorer identity, each test's version, the data's fingerprints, the
settings, the human judgments' hashes) and its ``fingerprint`` (their sha256).
:func:`card_inputs` recomputes them without scoring anything, so :func:`stale_inputs` tells in
a second whether a shipped card is current.

results.json (``"protocol": "card"``, :class:`CardResult`)::

    {"schema_version": 1, "protocol": "card", "tool", "metric": {spec..., "kind"},
     "signature", "fingerprint", "inputs", "config": {settings},
     "tasks": {task: {"data", "rows", "error", "skipped_tests",
                      "tests": {test: rank's test result less its points and per-sample view,
                                with its worst example}}},
     "summary": {category: one line},
     "checkup": {"data", "task", "rows", "checks": {name: {"title", "verdict", "summary"}}},
     "human": null | {"data", "rows", "documents", "systems", "bootstrap",
                      "criteria": {criterion: {"summary": {...}, "system": {...}}}},
     "judge_audit": null | {"audits": {name: {"passed", "explanation"}}},
     "cost": {"seconds_per_1000_texts", "texts", "task", "batch_size", "device", "cpus",
              "usage"}}

A part that cannot run (a corpus-level metric has no check-up) holds ``{"error": why}``.
"""

from __future__ import annotations

import ast
import hashlib
import inspect
import json
import os
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from statistics import median
from typing import Any, ClassVar

from huggingface_hub import snapshot_download
from rich.console import Console

from blindspot import defaults, judging
from blindspot.cards import SHIPPED_CARDS
from blindspot.demo import DEMO_TASKS, demo_columns
from blindspot.perturbations.perturbation import REGISTRY
from blindspot.perturbations.suites import suite_tests
from blindspot.protocols.declarations import CARD, CHECKUP, CORRELATION, JUDGE_AUDIT, RANK
from blindspot.protocols.interface import (
    Protocol,
    ProtocolRequest,
    ProtocolResult,
    get_protocol,
    single_data,
)
from blindspot.report import card_report
from blindspot.report.card_report import CARD_FILE
from blindspot.report.files import RESULTS_FILE, ReportFiles
from blindspot.runner import curves
from blindspot.runner.data import GoldData, load_gold_data, load_source
from blindspot.runner.entries import error_text, signature
from blindspot.runner.entries import tool as _tool
from blindspot.runner.metric_spec import MetricSpec, resolve_metrics
from blindspot.runner.scorers import scorer_for
from blindspot.scorers.llm_judge import LlmJudge
from blindspot.scoring.probe import CheckRows, as_reference_lists, direct_scores
from blindspot.scoring.signature import hidden

#: bumped when what a card computes or records changes: every card written before is stale
CARD_VERSION = "1"
#: the demo tasks whose references are an unpaired set, not one per row (the open-ended demo's
#: ``reference`` is another paragraph of the same style: :mod:`blindspot.demo`)
UNPAIRED_REFERENCES = frozenset({"open_ended"})
#: the code a verdict follows from: the rules, and how a run applies them to a curve
RULE_MODULES = (judging, curves)
#: a Hub dataset id (``org/name``), as ``--leaderboard`` and the Space take one
HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*$")


@dataclass(kw_only=True)
class CardResult(ProtocolResult):
    """results.json of a report card (layout: the module docstring); ``details`` keeps each
    composed protocol's whole result for the ``reports`` option's folders (never saved)."""

    protocol: str = "card"
    metric: dict[str, Any]
    signature: str | None
    fingerprint: str
    inputs: dict[str, Any]
    config: dict[str, Any]
    tasks: dict[str, Any]
    summary: dict[str, str]
    checkup: dict[str, Any] | None
    human: dict[str, Any] | None
    judge_audit: dict[str, Any] | None
    cost: dict[str, Any]
    details: dict[str, Any] = field(default_factory=dict)

    UNSAVED: ClassVar[tuple[str, ...]] = ("details",)


# -- what a card is computed on, and from -------------------------------------------------------

def applies(scorer: Any, task: str) -> bool:
    """Whether the demo task gives the metric what it reads: a source where it needs one (the
    open-ended demo has none), and per-row references where it reads references (the open-ended
    ones are an unpaired set, which only a corpus-level metric compares with)."""
    if scorer.uses_source == "required" and demo_columns(task)["source"] is None:
        return False
    return (task not in UNPAIRED_REFERENCES or scorer.uses_references == "none"
            or scorer.corpus_level)


def _shown(options: Mapping[str, Any]) -> dict[str, Any]:
    """Options as a card writes them: never a secret or an address option (``url``), as a
    signature leaves them out (:func:`blindspot.scoring.signature.hidden`); the server that
    graded is named once, by the signature's ``server`` (a judge's identity, never its key)."""
    return {name: _shown(value) if isinstance(value, Mapping) else value
            for name, value in options.items() if not hidden(str(name))}


def _one_metric(metrics: Any) -> Any:
    """The request's one metric as given (a spec's text, a file's function, an object)."""
    if isinstance(metrics, (list, tuple)) and len(metrics) == 1:
        return metrics[0]
    return metrics


@dataclass
class CardPlan:
    """What a card judges: the metric (as given, and its spec and scorer), the gold rows of
    each task and the settings (the declared options with the request's seeds and tests)."""

    metric: Any
    spec: MetricSpec
    scorer: Any
    golds: dict[str, GoldData]
    settings: dict[str, Any]

    @property
    def first(self) -> tuple[str, GoldData]:
        """The task the check-up, the judge audits and the cost are measured on."""
        return next(iter(self.golds.items()))


def _gold(data: Any, task: str, request: ProtocolRequest, rows: int | None) -> GoldData:
    shown, dataset = load_source(data, task, request.split)
    if rows is not None and rows < dataset.num_rows:
        dataset = dataset.select(range(rows))
    return load_gold_data(dataset, task, request.columns, request.split, name=shown)


def plan_card(request: ProtocolRequest) -> CardPlan:
    """The card's plan; bad input (no metric or several, an unknown task, data the metric cannot
    score) is a ValueError before any work."""
    settings = CARD.settings(request.options)
    metric = _one_metric(request.metrics)
    specs = resolve_metrics(metric, request.metric_options)
    if len(specs) != 1:
        raise ValueError(f"a card describes one metric; got {len(specs)} "
                         f"({', '.join(s.name for s in specs)})")
    spec = specs[0]
    for name in ("human", "human_references"):
        if settings[name] is not None and not Path(settings[name]).is_file():
            raise ValueError(f"{name.replace('_', ' ')} {settings[name]!r}: no such file; give "
                             f"a jsonl/csv/parquet file ({CARD.option(name).help})")
    scorer = scorer_for(spec)
    data = single_data(CARD.name, request.data)
    if str(data) == "demo":
        chosen = settings["tasks"] or [t for t in DEMO_TASKS if applies(scorer, t)]
        if not chosen:
            raise ValueError(f"no demo task gives metric {spec.name!r} what it reads; give "
                             f"--data FILE --task TASK")
    else:
        if settings["tasks"]:
            raise ValueError("tasks chooses among the demo tasks; with --data, give --task")
        chosen = [request.task]
    golds = {task: _gold(data, task, request, settings["rows"]) for task in chosen}
    settings.update(metric=metric if isinstance(metric, str) else spec.name,
                    metric_options=_shown(json.loads(json.dumps(request.metric_options or {},
                                                                default=str))),
                    data=str(data) if isinstance(data, (str, Path)) else "data",
                    tasks=list(golds), tests=request.tests, seeds=list(request.seeds),
                    noise_cap=request.noise_cap)
    return CardPlan(metric, spec, scorer, golds, settings)


def _code_digest(modules: Sequence[Any]) -> str:
    """sha256 of the modules' code with docstrings left out: a reworded comment or docstring
    keeps it, any change to what the code does changes it."""
    digest = hashlib.sha256()
    for module in modules:
        tree = ast.parse(inspect.getsource(module))
        for node in ast.walk(tree):
            body = getattr(node, "body", None)
            if isinstance(body, list) and body and isinstance(body[0], ast.Expr) and \
                    isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value,
                                                                           str):
                node.body = body[1:] or [ast.Pass()]  # type: ignore[attr-defined]
        digest.update(module.__name__.encode() + b"\0" + ast.dump(tree).encode() + b"\0")
    return digest.hexdigest()


def file_sha256(path: str | Path) -> str:
    """sha256 of a file's bytes."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


#: settings that change no number of a card (the human judgments count by their hashes)
NOT_INPUTS = ("human", "human_references", "state_dir", "reports", "time_cost")


def card_inputs(plan: CardPlan) -> dict[str, Any]:
    """What a card's numbers follow from, computed without scoring (see the module docstring)."""
    settings = plan.settings
    human = settings["human"]
    return {
        "card": CARD_VERSION,
        "rules": _code_digest(RULE_MODULES),
        "tolerance": defaults.TOLERANCE,
        "metric": _shown(plan.spec.as_json()),
        "scorer": hashlib.sha256(plan.scorer.identity().encode("utf-8")).hexdigest(),
        "signature": signature(plan.spec, plan.scorer, settings["seeds"]),
        "tests": {task: {test: REGISTRY[test].version
                         for test in suite_tests(settings["tests"], task)}
                  for task in plan.golds},
        "data": {task: gold.fingerprint() for task, gold in plan.golds.items()},
        "human": None if human is None else {
            "judgments": file_sha256(human),
            "references": (file_sha256(settings["human_references"])
                           if settings["human_references"] else None)},
        "settings": {k: v for k, v in settings.items() if k not in NOT_INPUTS},
    }


def fingerprint(inputs: Mapping[str, Any]) -> str:
    """sha256 of a card's inputs."""
    text = json.dumps(inputs, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# -- the parts ----------------------------------------------------------------------------------

def _state(plan: CardPlan, request: ProtocolRequest, part: str) -> str | None:
    """Where a composed run keeps its resumable state: under the ``state_dir`` option, else
    ``<out>/.state``, else the cache (None)."""
    root = plan.settings["state_dir"] or (Path(request.out) / ".state" if request.out else None)
    return None if root is None else str(Path(root) / part)


def _compact_test(result: Mapping[str, Any]) -> dict[str, Any]:
    """A test's verdict as a card keeps it: no points or per-sample view, and the worst example
    of a failed test only (the row its noise lowered least)."""
    kept = {k: v for k, v in result.items() if k not in ("points", "per_sample",
                                                          "worst_examples")}
    failed = result["status"] == "fail"
    return {**kept, "worst_examples": result.get("worst_examples", [])[:1] if failed else []}


def _rank(plan: CardPlan, request: ProtocolRequest, task: str, gold: GoldData
          ) -> tuple[dict[str, Any], Any]:
    options = {"state_dir": _state(plan, request, f"rank-{task}")}
    result = get_protocol(RANK.name).run(ProtocolRequest(
        gold.dataset, plan.metric, task=task, tests=request.tests, seeds=request.seeds,
        columns=gold.columns, split=request.split, metric_options=request.metric_options,
        resources=request.resources, noise_cap=request.noise_cap, num_proc=request.num_proc,
        progress=request.progress, options={k: v for k, v in options.items() if v}))
    (data,) = result.to_dict()["datasets"].values()
    (entry,) = data["metrics"].values()
    return {"data": gold.name, "rows": data["rows"], "error": entry["error"],
            "skipped_tests": data["skipped_tests"], "usage": entry.get("usage"),
            "tests": {t: _compact_test(r) for t, r in entry["tests"].items()}}, result


def _checkup(plan: CardPlan, request: ProtocolRequest) -> tuple[dict[str, Any], Any]:
    task, gold = plan.first
    try:
        result = get_protocol(CHECKUP.name).run(ProtocolRequest(
            gold.dataset, plan.metric, task=task, columns=gold.columns, split=request.split,
            metric_options=request.metric_options,
            options={"rows": plan.settings["checkup_rows"],
                     "max_words": plan.settings["max_words"]}))
    except ValueError as error:  # e.g. a corpus-level metric: no per-row scores to compare
        return {"error": str(error)}, None
    results = result.to_dict()
    return {"data": gold.name, "task": task, "rows": results["data"]["rows"],
            "checks": {name: {k: check[k] for k in ("title", "verdict", "summary")}
                       for name, check in results["checks"].items()}}, result


def _judgment_rows(path: str, documents: int | None) -> Any:
    """The human judgments, those of the first ``documents`` documents when given."""
    name, dataset = load_source(path, "summarization")
    if documents is None:
        return dataset
    if "id" not in dataset.column_names:
        raise ValueError(f"human judgments {name!r} have no id column (the document of each "
                         f"row); it has {dataset.column_names}")
    keep = set(list(dict.fromkeys(dataset["id"]))[:documents])
    return dataset.select([i for i, doc in enumerate(dataset["id"]) if doc in keep])


def _human(plan: CardPlan, request: ProtocolRequest) -> tuple[dict[str, Any] | None, Any]:
    settings = plan.settings
    if settings["human"] is None:
        return None, None
    options = {"bootstrap": settings["bootstrap"]}
    if settings["human_references"]:
        options["references"] = settings["human_references"]
    result = get_protocol(CORRELATION.name).run(ProtocolRequest(
        _judgment_rows(settings["human"], settings["human_documents"]), plan.metric,
        metric_options=request.metric_options, progress=request.progress, options=options))
    results = result.to_dict()
    (entry,) = results["metrics"].values()
    data = results["dataset"]
    if entry["error"]:
        return {"error": entry["error"]}, result
    return {"data": Path(settings["human"]).name, "rows": data["rows"],
            "documents": data["documents"], "systems": data["systems"],
            "bootstrap": settings["bootstrap"], "criteria": entry["criteria"]}, result


def _judge_audit(plan: CardPlan, request: ProtocolRequest) -> tuple[dict[str, Any] | None, Any]:
    if plan.spec.metric != LlmJudge.name:
        return None, None
    task, gold = plan.first
    try:
        result = get_protocol(JUDGE_AUDIT.name).run(ProtocolRequest(
            gold.dataset, plan.metric, task=task, columns=gold.columns, split=request.split,
            metric_options=request.metric_options))
    except Exception as error:  # a judge that fails an audit: the card says so, the rest stays
        return {"error": error_text(error)}, None
    return {"audits": {name: {"passed": entry["passed"], "explanation": entry["explanation"]}
                       for name, entry in result.audits.items()}}, result


#: the cost's timing: passes over the rows until this many seconds are spent (or MAX passes)
COST_SECONDS = 1.0
COST_PASSES = 10


def _cost(plan: CardPlan, usage: Sequence[Mapping[str, Any] | None]) -> dict[str, Any]:
    """Uncached scoring passes over the first task's rows, in the scorer's own batches, once one
    row has loaded its model (the median pass, of as many as fit :data:`COST_SECONDS`); what a
    judge's calls cost, summed over the tasks."""
    task, gold = plan.first
    totals: dict[str, float] = {}
    for entry in usage:
        for key, value in (entry or {}).items():
            if value is not None:
                totals[key] = totals.get(key, 0) + value
    cost: dict[str, Any] = {"task": task, "cpus": os.cpu_count(), "usage": totals or None}
    if plan.scorer.corpus_level:
        return {**cost, "seconds_per_1000_texts": None, "why": "a corpus-level score"}
    if not plan.settings["time_cost"]:
        return {**cost, "seconds_per_1000_texts": None, "why": "time_cost=false"}
    rows = CheckRows(gold.texts(), as_reference_lists(gold.column("references")),
                     gold.column("source"))
    scorer = scorer_for(plan.spec, rows.references)
    direct_scores(scorer, plan.spec, rows.first(1), 1)
    passes: list[float] = []
    while len(passes) < COST_PASSES and sum(passes) < COST_SECONDS:
        start = time.perf_counter()
        direct_scores(scorer_for(plan.spec, rows.references), plan.spec, rows,
                      scorer.batch_rows())
        passes.append(time.perf_counter() - start)
    return {**cost, "seconds_per_1000_texts": median(passes) / len(rows) * 1000,
            "texts": len(rows), "passes": len(passes), "batch_size": scorer.batch_rows(),
            "device": scorer.device_kind() or "cpu"}


def run_card(request: ProtocolRequest) -> CardResult:
    """The card of the request's one metric (see the module docstring); nothing written but
    the composed runs' resumable state."""
    plan = plan_card(request)
    inputs = card_inputs(plan)
    human, human_result = _human(plan, request)  # first: a bad judgments file stops at once
    tasks, details = {}, {}
    for task, gold in plan.golds.items():
        tasks[task], details[f"rank-{task}"] = _rank(plan, request, task, gold)
    checkup, details["checkup"] = _checkup(plan, request)
    audit, details["judge-audit"] = _judge_audit(plan, request)
    details["correlation"] = human_result
    cost = _cost(plan, [entry.pop("usage") for entry in tasks.values()])
    metric = {**_shown(plan.spec.as_json()), "kind": plan.scorer.kind}
    settings = {k: v for k, v in plan.settings.items() if k not in ("state_dir",)}
    if settings["human"]:
        settings["human"] = Path(settings["human"]).name
    if settings["human_references"]:
        settings["human_references"] = Path(settings["human_references"]).name
    return CardResult(tool=_tool(), metric=metric, signature=inputs["signature"],
                      fingerprint=fingerprint(inputs), inputs=inputs, config=settings,
                      tasks=tasks, summary=card_report.card_summary(tasks), checkup=checkup,
                      human=human, judge_audit=audit, cost=cost,
                      details={k: v for k, v in details.items() if v is not None})


def request_of(card: Mapping[str, Any], human: str | Path | None = None,
               human_references: str | Path | None = None) -> ProtocolRequest:
    """The request a card was made from (its recorded metric, as given, and settings), the
    human judgments' files given by path: what :func:`stale_inputs` plans again."""
    config = dict(card["config"])
    options = {s.name: config[s.name] for s in CARD.options if config.get(s.name) is not None
               and s.name not in ("human", "human_references", "state_dir")}
    for name, path in (("human", human), ("human_references", human_references)):
        if config.get(name):
            options[name] = str(path or config[name])
    return ProtocolRequest(config["data"], config["metric"], tests=config["tests"],
                           seeds=config["seeds"], noise_cap=config["noise_cap"],
                           metric_options=config["metric_options"] or None, options=options)


def stale_inputs(card: Mapping[str, Any], **files: str | Path | None) -> dict[str, Any]:
    """The inputs that changed since the card was made (empty: the card is current), as
    ``{input: (recorded, now)}``; the human judgments' files by path (``human``,
    ``human_references``)."""
    request = request_of(card, **files)
    now = card_inputs(plan_card(replace(request, options=CARD.check_options(request.options))))
    recorded = card["inputs"]
    return {key: (recorded.get(key), now.get(key)) for key in sorted({*recorded, *now})
            if recorded.get(key) != now.get(key)}


# -- reading cards ------------------------------------------------------------------------------

def read_card(path: Path) -> dict[str, Any] | None:
    """The card in ``path`` (a results.json), None when it holds another protocol's results; a
    file that cannot be read is a ValueError naming it and the fix."""
    try:
        results = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise ValueError(f"{path}: not a readable results.json ({type(error).__name__}: "
                         f"{str(error)[:120]}); write the card again with `blindspot card "
                         f"METRIC --out {path.parent}`") from None
    if not isinstance(results, dict) or results.get("protocol") != CARD.name:
        return None
    missing = [f.name for f in fields(CardResult)
               if f.name not in CardResult.UNSAVED and f.name not in results]
    if missing:
        raise ValueError(f"{path}: a card without {', '.join(missing)} (written by another "
                         f"version?); write it again with `blindspot card METRIC --out "
                         f"{path.parent}`")
    try:  # what the leaderboard and the card's page read of it
        card_report.board_row(results)
        card_report.render_card(results)
    except (KeyError, TypeError, AttributeError, IndexError, ValueError) as error:
        raise ValueError(f"{path}: a card the leaderboard cannot read ({type(error).__name__}: "
                         f"{str(error)[:120]}); write it again with `blindspot card METRIC "
                         f"--out {path.parent}`") from None
    return results


def cards_in_folder(folder: str | Path) -> list[dict[str, Any]]:
    """Every card in ``folder``: its own results.json and its subfolders' (one level), in name
    order."""
    root = Path(folder)
    if not root.is_dir():
        raise ValueError(f"{root}: no such folder of cards")
    paths = [root / RESULTS_FILE, *sorted(root.glob(f"*/{RESULTS_FILE}"))]
    return [card for path in paths if path.is_file() and (card := read_card(path)) is not None]


def hub_cards(repo_id: str) -> list[dict[str, Any]]:
    """The cards of the Hub dataset repository ``repo_id`` (``HF_ENDPOINT``, else the Hub),
    downloaded into the Hub cache: its results.json files only."""
    if not HUB_ID.match(repo_id) or ".." in repo_id:
        raise ValueError(f"{repo_id!r} is not a Hub dataset id (org/name)")
    try:
        folder = snapshot_download(repo_id, repo_type="dataset",
                                   allow_patterns=[RESULTS_FILE, f"*/{RESULTS_FILE}"])
    except Exception as error:  # offline, unknown repository, refused: one line says which
        raise ValueError(f"could not read the cards of the Hub dataset {repo_id!r} "
                         f"({type(error).__name__}: {' '.join(str(error).split())[:200]})"
                         ) from None
    return cards_in_folder(folder)


def load_cards(source: str | Path) -> list[dict[str, Any]]:
    """The cards of a folder (an existing path) or of a Hub dataset id (``org/name``)."""
    if Path(source).is_dir():
        return cards_in_folder(source)
    if HUB_ID.match(str(source)):
        return hub_cards(str(source))
    raise ValueError(f"{source}: no such folder of cards, nor a Hub dataset id (org/name)")


def shipped_cards() -> list[dict[str, Any]]:
    """The cards the package ships (:data:`blindspot.cards.SHIPPED_CARDS`)."""
    return cards_in_folder(SHIPPED_CARDS)


# -- the protocol -------------------------------------------------------------------------------

class CardProtocol(Protocol[CardResult]):
    """``blindspot card METRIC`` (or ``run --protocol card``): one metric's report card."""

    declaration = CARD
    report_file = CARD_FILE

    def execute(self, request: ProtocolRequest) -> CardResult:
        return run_card(request)

    def kept_in(self, request: ProtocolRequest) -> Path | None:
        given = request.options.get("state_dir")
        return Path(given) if given else (Path(request.out) / ".state" if request.out else None)

    def ended_in_error(self, result: CardResult) -> list[str]:
        """A task whose suite could not run, a test in error, a check-up or human agreement
        that could not be computed."""
        errors = [task for task, entry in result.tasks.items() if entry["error"]]
        errors += [f"{task}/{test}" for task, entry in result.tasks.items()
                   for test, r in entry["tests"].items() if r["status"] == "error"]
        errors += [part for part, found in (("checkup", result.checkup), ("human", result.human),
                                            ("judge_audit", result.judge_audit))
                   if found and found.get("error")]
        return errors

    def render(self, result: CardResult) -> ReportFiles:
        """results.json and card.md; with the ``reports`` option, each composed protocol's own
        report folder beside them."""
        results = result.to_dict()
        folders = {}
        if result.config.get("reports"):
            folders = {name: get_protocol(protocol).render(part)
                       for name, (protocol, part) in _parts(result).items()}
        return ReportFiles(results, {CARD_FILE: card_report.render_card(results)}, folders)

    def summarise(self, result: CardResult, console: Console) -> None:
        results = result.to_dict()
        console.print(f"[bold]report card of {results['metric']['name']}[/]")
        console.print(f"signature: {results['signature']}", markup=False, highlight=False,
                      soft_wrap=True)
        for line in results["summary"].values():
            console.print(f"  {line}", markup=False, highlight=False, soft_wrap=True)
        row = card_report.board_row(results)
        console.print(f"  check-up: {_percent(row.checkup)} of the judged checks pass; human tau: "
                      f"{'-' if row.human_tau is None else f'{row.human_tau:.3f}'}; cost: "
                      f"{card_report.cost_text(results['cost'])}", markup=False,
                      highlight=False, soft_wrap=True)

    def view(self, result: CardResult) -> dict[str, Any]:
        """What ``compute(protocol="card")`` returns: the summary lines and the results."""
        results = result.to_dict()
        return {"metric": results["metric"]["name"], "summary": results["summary"],
                "fingerprint": results["fingerprint"], "results": results}


def _percent(share: float | None) -> str:
    return "-" if share is None else f"{share:.0%}"


def _parts(result: CardResult) -> dict[str, tuple[str, Any]]:
    """Each composed part's report folder name, with its protocol and result."""
    return {name: (RANK.name if name.startswith(f"{RANK.name}-") else name, part)
            for name, part in result.details.items()}


__all__ = ["CARD_VERSION", "CardPlan", "CardProtocol", "CardResult", "applies", "card_inputs",
           "cards_in_folder", "file_sha256", "fingerprint", "hub_cards", "load_cards",
           "plan_card", "read_card", "request_of", "run_card", "shipped_cards", "stale_inputs"]
