"""MENLI's NLI metric (Chen & Eger, 2023) on blindspot's scoring layer.

An NLI model reads two whole texts (premise, hypothesis) and the score is a formula over its
entailment (e), neutral (n) and contradiction (c) probabilities. Options: ``direction``
("ref->hyp", default; "hyp->ref"; "avg": class probabilities of both directions averaged, then
the formula; "src->hyp": reference-free, the source is the premise), ``formula`` ("e", default;
"-c", "e-n", "e-c", "e-n-2c"), ``model`` (paper defaults: NLI-R
``ynie/roberta-large-snli_mnli_fever_anli_R1_R2_R3-nli``, and for "src->hyp" the cross-lingual
``MoritzLaurer/mDeBERTa-v3-base-mnli-xnli``; NLI-D ``microsoft/deberta-large-mnli``; aliases
"nli-r", "nli-d", "xnli-d"), ``label_order`` (e.g. "c,n,e"; default: from the model config's
id2label, else a table of known checkpoints), ``multi_reference`` ("mean" or "max").

Combination with any other metric M over the scored batch, as in the paper:
``combine_with=`` an evaluate module (or a list of its per-row scores), ``nli_weight=`` w (0.2),
``combine_key=`` the other module's output to use; the result gets ``combined`` =
``w * minmax(menli) + (1 - w) * minmax(M)``.

Examples:
    >>> import evaluate, tempfile
    >>> from blindspot.tiny_models import tiny_nli
    >>> folder = tiny_nli(tempfile.mkdtemp())  # random weights: the numbers mean nothing
    >>> menli = evaluate.load("metrics/menli")
    >>> out = menli.compute(predictions=["A cat sat.", "A dog ran."],
    ...                     references=["The cat sat.", "No dog ran."], model=folder,
    ...                     direction="avg", formula="e-c", use_aggregator=False)
    >>> len(out["menli"]), all(-1 <= s <= 1 for s in out["menli"])
    (2, True)
    >>> both = menli.compute(predictions=["A cat sat.", "A dog ran."],
    ...                      references=["The cat sat.", "No dog ran."], model=folder,
    ...                      combine_with=[10.0, 30.0], nli_weight=0.2, use_aggregator=False)
    >>> sorted(both), sorted(round(x, 6) for x in both["combined"])
    (['combined', 'menli'], [0.0, 1.0])
    >>> chrf = evaluate.load("metrics/chrf")
    >>> with_chrf = menli.compute(predictions=["A cat sat.", "A dog ran."],
    ...                           references=["The cat sat.", "No dog ran."], model=folder,
    ...                           combine_with=chrf)
    >>> sorted(with_chrf)
    ['combined', 'menli']
    >>> menli.compute(predictions=["Eine Katze."], model=folder, direction="src->hyp")
    Traceback (most recent call last):
    ...
    ValueError: metric 'menli' needs the source texts; pass sources=[...]
"""

from typing import Any

import blindspot.scoring.module as base
from blindspot.scorers import menli as nli

_CITATION = nli.MENLI_CITATION

_INPUTS = """
Args:
    predictions (list of str): hypotheses.
    references (list of str or list of list of str): references (not for direction="src->hyp").
    sources (list of str): sources (direction="src->hyp" only).
    model, direction, formula, label_order, multi_reference: see the description.
    combine_with: an evaluate module or a list of per-row scores of another metric.
    nli_weight (float): w in w * minmax(menli) + (1 - w) * minmax(other) (default 0.2).
    combine_key (str): the other module's output to combine with (default: its only one).
    use_aggregator (bool): mean over rows (default) or per-row lists.
Returns:
    menli: the formula's value (e in [0, 1]; -c in [-1, 0]; e-n, e-c in [-1, 1]; e-n-2c in
        [-3, 1]); combined (with combine_with): in [0, 1].
"""


class Menli(base.ScorerMetric):
    """MENLI's NLI metric, optionally combined with another metric."""

    scorer_name = "menli"
    module_description = __doc__
    module_citation = _CITATION
    module_inputs = _INPUTS

    def _compute(self, predictions: list[str], references: list[Any] | None = None,
                 sources: list[str] | None = None, use_aggregator: bool = True,
                 combine_with: Any = None, nli_weight: float = 0.2,
                 combine_key: str | None = None, **options: Any) -> dict[str, Any]:
        rows = super()._compute(predictions, references, sources, use_aggregator=False,
                                **options)
        if combine_with is not None:
            given_refs = None if not any(references or []) else references
            given_srcs = None if not any(sources or []) else sources
            other = nli.other_metric_scores(combine_with, predictions, given_refs, given_srcs,
                                            combine_key)
            rows["combined"] = nli.combine(rows["menli"], other, nli_weight)
        return base.aggregate(rows) if use_aggregator else rows
