"""Per-template human scores h(p') for the deviation protocol (Sai et al. 2021, Eq. 1 and §4).

In the paper, 15 NLP-literate annotators gave each template a penalty on 0-10 ("how much would
the perturbation alter the meaning/essence of a sentence"), normalised to [0, 1]; h(p') is
1 - the mean normalised penalty, and the unperturbed output has h(p) = 1 (penalty 0).

The shipped default, ``human_scores.csv`` (columns ``task, criterion, template, human_score,
basis``), documents per row where its value comes from. **The paper publishes no per-template
number**: Figure 4 shows only the deviations, and the annotations were not released. So:

* invariance and control rows are 1.0, as the paper states (§3: invariant templates affect no
  criterion; §5.2: humans would not lower the score of an alternative reference);
* every other row takes the value of a tier this project chose from the template's effect:
  fluency-minor 0.7 (penalty 0.3), fluency-major 0.5, content-partial 0.5, meaning-changed 0.2,
  unusable 0.1 (generic and back-off dialogue replies are in this tier because §5.2 fn. 4 says
  the experts gave them a high penalty).

Pass your own annotations with ``--protocol-option human_scores=path.csv`` (same columns; the
``basis`` column is optional). A user table replaces the default: every template a run uses must
have a row, and a bad table (missing column, a score outside [0, 1], a duplicate or unknown row)
is refused with the row and the fix named.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from blindspot.checklists.templates import TEMPLATES, Template

DEFAULT_PATH = Path(__file__).with_name("human_scores.csv")
REQUIRED = ("task", "criterion", "template", "human_score")
Key = tuple[str, str, str]


@dataclass
class HumanScores:
    """h(p') per (task, criterion, template), with each value's basis and the table's origin."""

    scores: dict[Key, float]
    basis: dict[Key, str] = field(default_factory=dict)
    origin: str = "default"

    def for_templates(self, templates: Iterable[Template]) -> dict[Key, float]:
        """The scores of ``templates``; a clear error names the rows the table lacks."""
        chosen = list(templates)
        missing = [t.key for t in chosen if t.key not in self.scores]
        if missing:
            shown = ", ".join("/".join(k) for k in missing[:5])
            raise ValueError(f"human score table {self.origin!r} has no row for {len(missing)} "
                             f"template(s) of this run: {shown}; add rows with columns "
                             f"{', '.join(REQUIRED)} or choose fewer criteria")
        return {t.key: self.scores[t.key] for t in chosen}


def _parse_score(value: str | None, where: str) -> float:
    try:
        score = float(value or "")
    except ValueError:
        raise ValueError(f"{where}: human_score {value!r} is not a number; give a value in "
                         f"[0, 1] (1 = humans see no loss)") from None
    if math.isnan(score) or not 0.0 <= score <= 1.0:
        raise ValueError(f"{where}: human_score {value!r} is outside [0, 1]; normalise "
                         f"penalties p to 1 - p/10 for a 0-10 scale")
    return score


def load_human_scores(path: str | Path | None = None) -> HumanScores:
    """The human score table at ``path`` (CSV), or the shipped default."""
    source = Path(path) if path is not None else DEFAULT_PATH
    if not source.is_file():
        raise ValueError(f"human score table {str(source)!r} not found; pass an existing CSV "
                         f"with columns {', '.join(REQUIRED)}")
    known = {t.key for t in TEMPLATES}
    origin = "default" if path is None else source.name
    table = HumanScores({}, {}, origin)
    with open(source, newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        absent = [c for c in REQUIRED if c not in (reader.fieldnames or [])]
        if absent:
            raise ValueError(f"human score table {origin!r} lacks column(s) {absent}; its "
                             f"columns are {reader.fieldnames}; needed: {', '.join(REQUIRED)}")
        for line, row in enumerate(reader, start=2):
            where = f"human score table {origin!r} line {line}"
            key = (row["task"].strip(), row["criterion"].strip(), row["template"].strip())
            if key not in known:
                raise ValueError(f"{where}: no template {'/'.join(key)}; valid rows are "
                                 f"task/criterion/template of `blindspot.checklists.TEMPLATES` "
                                 f"(e.g. summarization/coherence/reorder_sentences)")
            if key in table.scores:
                raise ValueError(f"{where}: template {'/'.join(key)} is given twice; keep one row")
            table.scores[key] = _parse_score(row["human_score"], where)
            table.basis[key] = (row.get("basis") or "").strip()
    return table
