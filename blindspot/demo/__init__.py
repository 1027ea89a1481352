"""The embedded demo corpus: small original data shipped inside the package.

The main job (``make demo``) runs on these files, so it needs no download and no ``../shared/data``.
Every text was written for blindspot; none is copied from a dataset. One JSON Lines file per task,
one object per line, ids ``demo-<task>-NNN``, 30 rows each:

``open_ended.jsonl``
    ``id``, ``gold`` (an encyclopedic paragraph of 6-9 sentences about a fictional place, person,
    organisation or object, with named entities and numbers) and ``reference`` (another, unrelated
    paragraph of the same style). Gold and reference are unpaired samples of one distribution, as in
    WikiText-style open-ended generation.
``summarization.jsonl``
    ``id``, ``source`` (a fictional news article of 150-300 words), ``gold`` (a 2-4 sentence
    highlight-style summary) and ``references`` (a list of 3 further summaries, worded differently).
``translation.jsonl``
    ``id``, ``source`` (one or two German news sentences), ``gold`` (an English translation) and
    ``reference`` (a second, independently worded English translation).

:func:`demo_columns` tells other code which column plays which role.
"""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any

DEMO_TASKS = ("open_ended", "summarization", "translation")

_ALIASES = {"open-ended": "open_ended"}

# Column roles per task: the text to perturb and score ("hypothesis"), the reference column (a
# string or a list of strings, see "references_is_list"), the source column or None, the id column.
_COLUMNS: dict[str, dict[str, Any]] = {
    "open_ended": {"id": "id", "hypothesis": "gold", "references": "reference",
                   "references_is_list": False, "source": None},
    "summarization": {"id": "id", "hypothesis": "gold", "references": "references",
                      "references_is_list": True, "source": "source"},
    "translation": {"id": "id", "hypothesis": "gold", "references": "reference",
                    "references_is_list": False, "source": "source"},
}


def _task(task: str) -> str:
    """The canonical demo task name; a ValueError lists the valid ones."""
    key = _ALIASES.get(task, task)
    if key not in DEMO_TASKS:
        raise ValueError(f"unknown demo task {task!r}; valid tasks: {', '.join(DEMO_TASKS)} "
                         "(or 'open-ended')")
    return key


def demo_path(task: str) -> Path:
    """The path of ``task``'s JSON Lines file inside the installed package."""
    name = f"{_task(task)}.jsonl"
    path = Path(str(resources.files(__name__).joinpath(name)))
    # a zipped install has no real path: fall back to the module's folder
    return path if path.is_file() else Path(__file__).resolve().parent / name


def read_demo(task: str) -> list[dict[str, Any]]:
    """The rows of ``task``'s demo file as plain dicts, in file order."""
    rows = []
    with demo_path(task).open(encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                rows.append(json.loads(line))
    return rows


def load_demo(task: str) -> Any:
    """``task``'s demo corpus as a :class:`datasets.Dataset`, rows in file order."""
    import datasets

    return datasets.Dataset.from_list(read_demo(task))


def demo_columns(task: str) -> dict[str, Any]:
    """Which column is which for ``task``: keys ``id``, ``hypothesis``, ``references``,
    ``references_is_list`` and ``source`` (None where the task has no source)."""
    return dict(_COLUMNS[_task(task)])


__all__ = ["DEMO_TASKS", "demo_columns", "demo_path", "load_demo", "read_demo"]
