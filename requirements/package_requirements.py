"""Print the requirements of the package with extras (default ``all``), one a line, for
``make env``: pyproject.toml's ``dependencies`` and the extras' lists, self-references
(``blindspot-nlg[models]``) expanded, less the packages of ``nodeps.txt`` (installed apart,
without the dependencies they declare). The same package `pip install 'blindspot-nlg[all]'`
installs, resolved with requirements/constraints.txt.

    python requirements/package_requirements.py [EXTRA ...] > build/requirements-all.txt
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parent.parent


def _name(requirement: str) -> str:
    """The normalised distribution name of a requirement line (PEP 503)."""
    return re.sub(r"[-_.]+", "-", re.split(r"[\s\[<>=!~;]", requirement.strip(), maxsplit=1)[0]).lower()


def requirements(extras: list[str]) -> list[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    optional, own = project["optional-dependencies"], _name(project["name"])
    lines, todo, seen = list(project["dependencies"]), list(extras), set()
    while todo:
        extra = todo.pop()
        if extra in seen:
            continue
        seen.add(extra)
        for requirement in optional[extra]:
            if _name(requirement) == own:  # blindspot-nlg[models,...]: its extras, expanded
                todo.extend(re.search(r"\[(.*)\]", requirement).group(1).split(","))
            else:
                lines.append(requirement)
    apart = {_name(line) for line in (ROOT / "requirements" / "nodeps.txt").read_text().splitlines()
             if line.strip() and not line.startswith("#")}
    return [line for line in dict.fromkeys(lines) if _name(line) not in apart]


if __name__ == "__main__":
    print("\n".join(requirements(sys.argv[1:] or ["all"])))
