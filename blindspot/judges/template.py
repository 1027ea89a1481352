"""A judge's prompt: a TOML file with its system and user messages, its rubric and its scale.

The shipped templates (``blindspot/judges/templates/*.toml``: G-Eval's four SummEval criteria
and an MT adequacy rubric) are asked for by name; a user's own file by its path (the command
line and the Python API only: the Space never opens a path a visitor names). Both are read and
checked by :func:`load_template`, which raises one :class:`~blindspot.errors.BlindspotInputError`
naming the file and the field that is wrong.

The fields (``FIELDS``)::

    description = "what the judge rates"            # optional
    scale = [1, 5]                                   # the lowest and highest grade, digits 0-9
    rubric = ["first criterion", "second", ...]      # the rubric's lines, in order
    reworded = ["the same criteria, other words"]    # optional: the rubric-wording test
    system = "..."                                   # the system message
    user = "... {hypothesis} ..."                    # the user message

The messages are Python format strings over the placeholders of :data:`PLACEHOLDERS`
(``{hypothesis}`` is required; write a literal brace as ``{{``). A template that names
``{source}`` or ``{references}`` needs that column. Grades are single digits so that each is one
token: the judge's next-token distribution over them gives the probability-weighted grade.
"""

from __future__ import annotations

import hashlib
import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import tomllib

from blindspot.errors import BlindspotInputError

TEMPLATES_DIR = Path(__file__).with_name("templates")

#: what a message may name: the row's texts, the rubric and the scale
PLACEHOLDERS: Mapping[str, str] = {
    "hypothesis": "the text being judged (in a pairwise template: the first answer)",
    "second": "a pairwise template's second answer (the position test)",
    "source": "the row's source (the article, the sentence to translate)",
    "references": "the row's references, one per line",
    "rubric": "the rubric's lines, numbered",
    "scale_min": "the lowest grade",
    "scale_max": "the highest grade",
}
#: every field a template file may have, and whether it must
FIELDS: Mapping[str, bool] = {"description": False, "scale": True, "rubric": True,
                              "reworded": False, "system": True, "user": True}


def shipped_templates() -> list[str]:
    """The names of the templates that ship with blindspot."""
    return sorted(p.stem for p in TEMPLATES_DIR.glob("*.toml"))


@dataclass(frozen=True)
class JudgeTemplate:
    """A checked template: ``render`` turns a row into the chat messages the judge reads."""

    name: str
    file: str
    description: str
    scale: tuple[int, int]
    rubric: tuple[str, ...]
    reworded: tuple[str, ...] | None
    system: str
    user: str

    @property
    def grades(self) -> tuple[int, ...]:
        return tuple(range(self.scale[0], self.scale[1] + 1))

    def needs(self, placeholder: str) -> bool:
        """Whether a message names ``placeholder`` (``source``, ``references``...)."""
        return placeholder in _names(self.system) | _names(self.user)

    @property
    def pairwise(self) -> bool:
        """Whether the template compares two answers (``{second}``): its grade names the better
        one, 1 the first and 2 the second."""
        return self.needs("second")

    def fingerprint(self) -> str:
        """What the judge's scores depend on in this template (its messages, rubric and scale,
        not its file's name): part of the score cache key."""
        text = repr((self.scale, self.rubric, self.system, self.user))
        return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]

    def with_rubric(self, rubric: Sequence[str]) -> JudgeTemplate:
        """The same template with other rubric lines (reordered or reworded)."""
        return JudgeTemplate(self.name, self.file, self.description, self.scale, tuple(rubric),
                             self.reworded, self.system, self.user)

    def render(self, hypothesis: str, references: Sequence[str] = (),
               source: str | None = None, second: str = "") -> list[dict[str, str]]:
        """The system and user messages for one row (``second``: a pairwise template's second
        answer)."""
        values = {"hypothesis": hypothesis, "second": second, "source": source or "",
                  "references": "\n".join(references),
                  "rubric": "\n".join(f"{i}. {line}" for i, line in enumerate(self.rubric, 1)),
                  "scale_min": str(self.scale[0]), "scale_max": str(self.scale[1])}
        return [{"role": "system", "content": self.system.format(**values)},
                {"role": "user", "content": self.user.format(**values)}]


def _names(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name is not None}


def _lines(value: Any, field: str, where: Path) -> tuple[str, ...]:
    if (not isinstance(value, list) or not value
            or not all(isinstance(v, str) and v.strip() for v in value)):
        raise BlindspotInputError("must be a non-empty list of non-empty strings", file=where,
                                  field=field, fix='Write e.g. rubric = ["first", "second"]')
    return tuple(value)


def _message(value: Any, field: str, where: Path) -> str:
    if not isinstance(value, str) or not value.strip():
        raise BlindspotInputError("must be a non-empty string", file=where, field=field,
                                  fix=f'Write e.g. {field} = """..."""')
    try:
        names = _names(value)
    except ValueError as error:  # a lone brace
        raise BlindspotInputError(f"is not a valid format string ({error})", file=where,
                                  field=field, fix="Write a literal brace as {{ or }}") from None
    unknown = sorted(n for n in names if n not in PLACEHOLDERS)
    if unknown:
        raise BlindspotInputError(f"names the placeholder {{{unknown[0]}}}, which is not one of "
                                  f"{', '.join('{' + p + '}' for p in PLACEHOLDERS)}",
                                  file=where, field=field,
                                  fix="Write a literal brace as {{ or }}")
    return value


def _scale(value: Any, where: Path) -> tuple[int, int]:
    if (not isinstance(value, list) or len(value) != 2
            or not all(isinstance(v, int) and not isinstance(v, bool) for v in value)
            or not 0 <= value[0] < value[1] <= 9):
        raise BlindspotInputError(f"must be [lowest, highest], two whole numbers with "
                                  f"0 <= lowest < highest <= 9, got {value!r}", file=where,
                                  field="scale",
                                  fix="Grades are single digits (one token each), e.g. [1, 5]")
    return value[0], value[1]


def parse_template(data: Mapping[str, Any], where: Path, name: str) -> JudgeTemplate:
    """A template from a TOML file's table, checked field by field."""
    unknown = sorted(set(data) - set(FIELDS))
    if unknown:
        raise BlindspotInputError(f"is not a template field (the fields are "
                                  f"{', '.join(FIELDS)})", file=where, field=unknown[0])
    missing = [f for f, required in FIELDS.items() if required and f not in data]
    if missing:
        raise BlindspotInputError("is missing", file=where, field=missing[0],
                                  fix=f"A template needs {', '.join(f for f, r in FIELDS.items() if r)}")
    user = _message(data["user"], "user", where)
    if "hypothesis" not in _names(user):
        raise BlindspotInputError("never names {hypothesis}: the judge would not see the text "
                                  "it grades", file=where, field="user")
    rubric = _lines(data["rubric"], "rubric", where)
    reworded = _lines(data["reworded"], "reworded", where) if "reworded" in data else None
    if reworded is not None and len(reworded) != len(rubric):
        raise BlindspotInputError(f"has {len(reworded)} lines but rubric has {len(rubric)}: "
                                  "it rewords the same criteria one for one", file=where,
                                  field="reworded")
    description = data.get("description", "")
    if not isinstance(description, str):
        raise BlindspotInputError("must be a string", file=where, field="description")
    scale = _scale(data["scale"], where)
    if "second" in _names(user) and scale != (1, 2):
        raise BlindspotInputError(f"must be [1, 2] in a pairwise template (it names {{second}}: "
                                  f"1 means the first answer is better, 2 the second), got "
                                  f"{list(scale)}", file=where, field="scale")
    return JudgeTemplate(name, str(where), description, scale, rubric,
                         reworded, _message(data["system"], "system", where), user)


def template_path(name_or_path: str) -> Path:
    """The file of a shipped template (by name) or of a user's (a path to a ``.toml`` file)."""
    if name_or_path in shipped_templates():
        return TEMPLATES_DIR / f"{name_or_path}.toml"
    path = Path(name_or_path)
    if path.suffix != ".toml" or not path.is_file():
        raise BlindspotInputError(f"judge template {name_or_path!r} is neither a shipped "
                                  f"template ({', '.join(shipped_templates())}) nor a .toml file",
                                  fix="Name a shipped template or give the path of your own "
                                      "template file (docs/judges.md)")
    return path


def load_template(name_or_path: str) -> JudgeTemplate:
    """A shipped template by name, or a user's template file, read and checked."""
    path = template_path(name_or_path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise BlindspotInputError(f"is not a TOML file ({error})", file=path) from None
    return parse_template(data, path, path.stem)
