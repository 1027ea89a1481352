"""The gold data of a run: where it comes from (a file, the embedded demo, a Hub id) and which
column plays which role (the hypothesis to perturb, its references, its source, its id).

Roles not given are found by the names this project's data uses (``gold``/``hypothesis``,
``references``/``reference``, ``source``, ``id``); a missing or empty column fails before any
work with the columns the data does have. :func:`gold_inputs` is what the protocols over gold
data give :meth:`Protocol.run <blindspot.protocols.interface.Protocol.run>`'s check before any
work: each source's columns (a file's head, not its rows) and each metric's needs.
"""

from __future__ import annotations

import hashlib
import json
import socket
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import datasets
import huggingface_hub.constants

from blindspot.demo import load_demo
from blindspot.errors import BlindspotInputError, DataRoles, MetricNeeds, check_text_list
from blindspot.io import FORMATS, read_table, table_columns
from blindspot.models import available_models
from blindspot.perturbations.dataset import column_values
from blindspot.perturbations.perturbation import canonical_task
from blindspot.runner.metric_spec import resolve_metrics
from blindspot.runner.scorers import reference_corpus, scorer_for
from blindspot.runner.state import content_key
from blindspot.seeding import text_row_id
from blindspot.suggest import did_you_mean
from blindspot.text_columns import check_text_column

ROLE_CANDIDATES: dict[str, tuple[str, ...]] = {
    "hypothesis": ("gold", "hypothesis", "prediction", "text"),
    "references": ("references", "reference"),
    "source": ("source", "src"),
    "id": ("id",),
}
#: The roles whose columns must hold text in every row: role -> whether a row may hold a list
#: of texts (several references).
TEXT_ROLES: dict[str, bool] = {"hypothesis": False, "references": True, "source": False}


def check_role_texts(columns: Mapping[str, list[Any]], roles: Mapping[str, str | None],
                     file: str, first_row: int = 1) -> None:
    """Refuse rows (plain lists: a streamed chunk) whose text roles hold no text."""
    for role, lists in TEXT_ROLES.items():
        if column := roles.get(role):
            check_text_list(columns[column], column, allow_lists=lists,
                            first_row=first_row, file=file)


@dataclass
class GoldData:
    """A loaded dataset with its display name, task and column roles."""

    name: str
    dataset: Any
    columns: dict[str, str | None]

    def column(self, role: str) -> list[Any] | None:
        """The values of ``role``'s column as a list, or None when the data has no such column."""
        name = self.columns.get(role)
        return column_values(self.dataset, name) if name else None

    def required_column(self, role: str) -> str:
        """The column that holds ``role`` (the hypothesis: every loaded dataset has one)."""
        name = self.columns.get(role)
        if not name:
            raise ValueError(f"{self.name}: the data has no {role} column")
        return name

    def texts(self) -> list[Any]:
        """The hypothesis column's values."""
        return column_values(self.dataset, self.required_column("hypothesis"))

    def ids(self) -> list[Any]:
        """Row ids: the id column, else a hash of the hypothesis (as the perturbations use)."""
        return self.column("id") or [text_row_id(t) for t in self.texts()]

    def used_columns(self) -> list[str]:
        """The distinct columns a run reads (one column may serve two roles: the examination
        paper scores each impaired text against its own original, references = hypothesis)."""
        return list(dict.fromkeys(c for c in self.columns.values() if c))

    def check_texts(self) -> None:
        """Refuse data whose text roles hold a number or a null in any row (once per column)."""
        for role, lists in TEXT_ROLES.items():
            if column := self.columns.get(role):
                check_text_column(self.dataset, column, allow_lists=lists, file=self.name)

    def fingerprint(self) -> str:
        """A hash of exactly the columns a run reads, so a changed input never reuses state."""
        table = self.dataset.select_columns(self.used_columns()).to_dict()
        payload = json.dumps([self.columns, table], sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def _is_file_like(data: str) -> bool:
    return Path(data).suffix.lower() in FORMATS or Path(data).exists()


#: how long the look for the Hub waits before a Hub id is refused as unreachable (seconds)
HUB_WAIT = 5.0
#: what to do instead when a Hub dataset cannot be loaded
HUB_FIX = ("Pass a local jsonl/json/csv/parquet file or 'demo' instead; a Hub dataset already in "
           "the cache loads with HF_HUB_OFFLINE=1")


def hub_unreachable(timeout: float = HUB_WAIT) -> str | None:
    """Why the Hub (``HF_ENDPOINT``) cannot be reached: its host does not resolve or refuses a
    connection within ``timeout``; None when it answers, or in offline mode (the cache is read).
    One look, so that a machine without network is told at once instead of after
    huggingface_hub's five retries (about 26 s, each with its traceback)."""
    if huggingface_hub.constants.HF_HUB_OFFLINE:
        return None
    url = urlsplit(huggingface_hub.constants.ENDPOINT)
    port = url.port or (443 if url.scheme == "https" else 80)
    try:
        with socket.create_connection((url.hostname or "", port), timeout=timeout):
            return None
    except OSError as error:
        return f"{url.hostname}:{port}: {error.strerror or type(error).__name__}"


def _load_hub(data: str, split: str) -> Any:
    """A Hub dataset's split; without network or offline, one clear error saying what to do."""
    problem = hub_unreachable()
    if problem is not None:
        raise BlindspotInputError(f"{data!r} looks like a Hugging Face Hub dataset id, and the Hub "
                                  f"cannot be reached ({problem})", fix=HUB_FIX)
    try:
        return datasets.load_dataset(data, split=split)
    except Exception as error:  # ConnectionError, FileNotFoundError, DatasetNotFoundError...
        raise BlindspotInputError(f"could not load {data!r} from the Hugging Face Hub "
                                  f"({type(error).__name__}: {str(error).strip()[:200]})",
                                  fix=HUB_FIX) from error


def load_source(data: Any, task: str, split: str = "test") -> tuple[str, Any]:
    """``(display name, Dataset)`` for a path, ``demo``, a Hub id or a Dataset / list of rows."""
    if isinstance(data, datasets.Dataset):
        return "data", data
    if isinstance(data, Mapping):
        return "data", datasets.Dataset.from_dict(dict(data))
    text = str(data)
    if text == "demo":
        return f"demo-{task}", load_demo(task)
    if _is_file_like(text):
        return Path(text).name, read_table(text)
    return text, _load_hub(text, split)


def _pick(role: str, given: str | None, names: list[str]) -> str | None:
    if given:
        if given not in names:
            raise ValueError(f"{role} column {given!r} not found; the data has columns {names}; "
                             f"choose one with --{role}-column{did_you_mean(given, names)}")
        return given
    return guess_column(role, names)


def guess_column(role: str, names: Sequence[str]) -> str | None:
    """The first of the role's conventional column names (:data:`ROLE_CANDIDATES`) present."""
    return next((c for c in ROLE_CANDIDATES[role] if c in names), None)


def resolve_columns(dataset: Any, columns: Mapping[str, str | None] | None = None
                    ) -> dict[str, str | None]:
    """Each role's column: the one given, else the first conventional name present."""
    names = list(dataset.column_names)
    given = dict(columns or {})
    unknown = sorted(set(given) - set(ROLE_CANDIDATES))
    if unknown:
        raise ValueError(f"unknown column role(s) {unknown}; roles are {list(ROLE_CANDIDATES)}")
    roles = {role: _pick(role, given.get(role), names) for role in ROLE_CANDIDATES}
    if roles["hypothesis"] is None:
        raise ValueError(f"no hypothesis column: the data has columns {names}; name the text to "
                         "perturb with --hypothesis-column (e.g. gold)")
    return roles


@dataclass
class ColumnNames:
    """What :func:`resolve_columns` reads of a dataset: its column names."""

    column_names: list[str]


def source_columns(data: Any, task: str, split: str = "test") -> tuple[str, list[str]]:
    """``(the source as the user gave it, its column names)``, read without its rows where it can
    (a file's head; a Hub dataset is loaded: :func:`load_source`)."""
    if isinstance(data, (str, Path)) and str(data) != "demo" and _is_file_like(str(data)):
        return str(data), table_columns(data)
    shown, dataset = load_source(data, task, split)
    return shown, list(dataset.column_names)


def data_roles(data: Any, task: str, columns: Mapping[str, str | None] | None = None,
               split: str = "test") -> DataRoles:
    """One gold source's columns and roles, as :func:`load_gold_data` will resolve them (a
    named column that is missing, or no hypothesis column, fails here)."""
    name, names = source_columns(data, task, split)
    return DataRoles(name, names, resolve_columns(ColumnNames(names), columns),
                     {role: f"--{role}-column" for role in ROLE_CANDIDATES})


def metric_needs(metrics: Any, metric_options: Mapping[str, Mapping[str, Any]] | None = None
                 ) -> list[MetricNeeds]:
    """What each metric reads besides its text, from its scorer's declared facts (no model is
    loaded: scorers load theirs on first use)."""
    specs = resolve_metrics(metrics, metric_options)
    return [MetricNeeds(spec.name, {"references": scorer.uses_references,
                                    "source": scorer.uses_source})
            for spec, scorer in ((spec, scorer_for(spec)) for spec in specs)]


def gold_inputs(request: Any, task: str | None = None) -> tuple[list[DataRoles], list[MetricNeeds]]:
    """A protocol request's gold sources (``request.data``: one or a list) and metrics, for
    :func:`~blindspot.errors.check_inputs` before any work; ``task``: the canonical task where
    the protocol names its tasks otherwise (the deviation protocol's checklist tasks)."""
    sources = request.data if isinstance(request.data, (list, tuple)) else [request.data]
    task = task or canonical_task(request.task)
    data = [data_roles(source, task, request.columns, request.split) for source in sources]
    return data, metric_needs(request.metrics, request.metric_options)


def load_gold_data(data: Any, task: str, columns: Mapping[str, str | None] | None = None,
                   split: str = "test", name: str | None = None) -> GoldData:
    """Load ``data`` and resolve its columns; an empty dataset or a text role holding anything
    but text is an error before any work, not an empty or partial report."""
    shown, dataset = load_source(data, task, split)
    if dataset.num_rows == 0:
        raise ValueError(f"dataset {shown!r} has no rows; nothing to perturb or score")
    gold = GoldData(name or shown, dataset, resolve_columns(dataset, columns))
    gold.check_texts()
    return gold
# -- the resources the tests may use --------------------------------------------------------------

def machine_resources(given: Mapping[str, Any]) -> dict[str, Any]:
    """The given resources, else what this machine has offline (SmolLM2's tokenizer for
    positioned error)."""
    resources: dict[str, Any] = {"mlm": None, "lm": None, "ngram_corpus": None}
    resources.update({k: v for k, v in given.items() if v is not None})
    if resources["lm"] is None and "smollm2" in available_models():
        resources["lm"] = "smollm2"
    return resources


def default_resources(task: str, gold: GoldData, given: Mapping[str, Any]) -> dict[str, Any]:
    """What the tests may use: :func:`machine_resources`, and the references as the open-ended
    n-gram corpus."""
    resources = machine_resources(given)
    refs = gold.columns["references"]
    if resources["ngram_corpus"] is None and canonical_task(task) == "open_ended" and refs:
        resources["ngram_corpus"] = reference_corpus(gold.column("references"))
    return resources


def describe_resources(resources: Mapping[str, Any]) -> dict[str, Any]:
    """Resources as they go into results.json and keys: a corpus list becomes its hash."""
    return {k: (f"{len(v)} texts, sha256 {content_key(list(v))[:16]}"
                if isinstance(v, (list, tuple)) else v) for k, v in resources.items()}
