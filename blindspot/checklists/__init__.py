"""Perturbation checklists (Sai et al., EMNLP 2021): the template table per task and criterion,
and the per-template human scores the deviation protocol compares metrics with."""

from blindspot.checklists.human_scores import HumanScores, load_human_scores
from blindspot.checklists.templates import (
    CONTROL,
    TASKS,
    TEMPLATES,
    Template,
    canonical_checklist_task,
    templates_for,
)

__all__ = ["CONTROL", "HumanScores", "TASKS", "TEMPLATES", "Template", "canonical_checklist_task",
           "load_human_scores", "templates_for"]
