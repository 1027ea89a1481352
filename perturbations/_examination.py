"""What the tests of the examination paper share: its citation, its intensity steps and a base
class, so each test module only says what its impairment does.

The paper (seed paper 4) impairs CNN/DailyMail sentences "to various degrees" and scores each
impaired text against the original; its code runs four steps from the original to the maximum
impairment, the intensities .25 .5 .75 1 used here for every task.
"""

from __future__ import annotations

from typing import ClassVar

from blindspot.perturbations._fluency_edits import every_task
from blindspot.perturbations.perturbation import LevelKind, Perturbation, Ratio

EXAMINATION_PAPER = ("Examination of BERTScore, BLEURT, NUBIA, MoverScore and Mark-Evaluate "
                     "with synthetic impairments (seed paper 4)")
#: the paper's intensity steps (the original is the gold itself)
INTENSITIES = (0.25, 0.5, 0.75, 1.0)


class ExaminationTest(Perturbation):
    """A test of the ``examination`` suite: an intensity in (0, 1] at the paper's four steps."""

    category = "examination"
    paper = EXAMINATION_PAPER
    level_kind: ClassVar[LevelKind] = Ratio(0.0, 1.0)
    levels = every_task(INTENSITIES)
