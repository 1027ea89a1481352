"""MENLI's NLI metric (Chen & Eger, 2023): entailment probabilities of an NLI model as a score.

Whole texts go to the NLI model (no sentence splitting). Options:

- ``direction``: ``"ref->hyp"`` (reference is the premise, hypothesis the NLI hypothesis),
  ``"hyp->ref"``, ``"avg"`` (the class probabilities of the two directions are averaged first, then
  the formula is applied), or ``"src->hyp"`` (reference-free: the source is the premise).
- ``formula``: ``"e"``, ``"-c"``, ``"e-n"``, ``"e-c"``, ``"e-n-2c"`` over the (averaged)
  entailment / neutral / contradiction probabilities.
- ``model``: the paper's NLI-R (``ynie/roberta-large-snli_mnli_fever_anli_R1_R2_R3-nli``) for the
  reference-based directions and the cross-lingual XNLI-D
  (``MoritzLaurer/mDeBERTa-v3-base-mnli-xnli``) for ``src->hyp``; NLI-D is
  ``microsoft/deberta-large-mnli``. The label order is read from the model config's ``id2label``
  where its names say it, else from :data:`KNOWN_LABEL_ORDERS`, else from ``label_order``.
- ``multi_reference``: ``"mean"`` (default) or ``"max"`` over a row's references.

Defaults: direction ``ref->hyp`` and formula ``e``, the paper's overall recommendation for MT
(Section 5); for summarization it found ``e-c`` with ``hyp->ref`` (reference-based) and ``-c``
with ``src->hyp`` (reference-free) best. Pairs longer than the model's maximum are truncated
(longest first).

:func:`combine` is the paper's combination with another metric M over a scored batch:
``w * minmax(N) + (1 - w) * minmax(M)``.
"""

from __future__ import annotations

from collections.abc import Sequence
from statistics import fmean
from typing import Any

from blindspot.minmax import combine as combine_minmax
from blindspot.models import load_sequence_classifier
from blindspot.scorers import _device
from blindspot.scorers._lm_utils import ModelScorer, length_chunks, max_positions, pad_id, place
from blindspot.scoring.card import ModuleCard
from blindspot.scoring.scorer import ScoreInput, register_scorer

#: the MENLI paper (also cited by the MENLI adversarial-set builder's cards)
MENLI_CITATION = """@article{chen-eger-2023-menli,
    title = "{MENLI}: Robust Evaluation Metrics from Natural Language Inference",
    author = "Chen, Yanran and Eger, Steffen",
    journal = "Transactions of the Association for Computational Linguistics",
    volume = "11",
    year = "2023",
    pages = "804--825",
}
"""

NLI_R = "ynie/roberta-large-snli_mnli_fever_anli_R1_R2_R3-nli"
NLI_D = "microsoft/deberta-large-mnli"
XNLI_D = "MoritzLaurer/mDeBERTa-v3-base-mnli-xnli"
MODEL_ALIASES = {"nli-r": NLI_R, "nli-d": NLI_D, "xnli-d": XNLI_D}

#: class order of the output logits of known checkpoints (e = entailment, n = neutral,
#: c = contradiction), used when a config's id2label is generic (LABEL_0, ...)
KNOWN_LABEL_ORDERS: dict[str, tuple[str, str, str]] = {
    NLI_R: ("e", "n", "c"),
    NLI_D: ("c", "n", "e"),
    "microsoft/deberta-xlarge-mnli": ("c", "n", "e"),
    "roberta-large-mnli": ("c", "n", "e"),
    "facebook/bart-large-mnli": ("c", "n", "e"),
    XNLI_D: ("e", "n", "c"),
}

DIRECTIONS = ("ref->hyp", "hyp->ref", "avg", "src->hyp")
FORMULAS = ("e", "-c", "e-n", "e-c", "e-n-2c")
_LABEL_PREFIXES = {"entail": "e", "neutral": "n", "contradict": "c"}

Probabilities = dict[str, float]  # {"e": p_e, "n": p_n, "c": p_c}


def apply_formula(formula: str, p: Probabilities) -> float:
    """One of MENLI's five formulas on entailment / neutral / contradiction probabilities."""
    if formula == "e":
        return p["e"]
    if formula == "-c":
        return -p["c"]
    if formula == "e-n":
        return p["e"] - p["n"]
    if formula == "e-c":
        return p["e"] - p["c"]
    if formula == "e-n-2c":
        return p["e"] - p["n"] - 2 * p["c"]
    raise ValueError(f"formula must be one of {', '.join(FORMULAS)}; got {formula!r}")


def average_probabilities(a: Probabilities, b: Probabilities) -> Probabilities:
    """Class-wise mean of two directions' probabilities (MENLI's bi-directional pooling)."""
    return {k: (a[k] + b[k]) / 2 for k in ("e", "n", "c")}


def parse_label_order(order: str | Sequence[str]) -> tuple[str, ...]:
    """``"e,n,c"`` or ``("c", "n", "e")`` as a tuple of class letters, checked."""
    labels = tuple(x.strip().lower()[:1] for x in (order.split(",") if isinstance(order, str)
                                                   else order))
    if sorted(labels) != ["c", "e", "n"]:
        raise ValueError(f"label_order must name e, n and c once each (e.g. 'e,n,c'), got {order!r}")
    return labels


def label_indices(config: Any, model_name: str, override: str | Sequence[str] | None = None
                  ) -> dict[str, int]:
    """Logit index of e, n and c: ``override``, else the config's id2label, else the table."""
    if override is not None:
        return {label: i for i, label in enumerate(parse_label_order(override))}
    names = {int(i): str(n).lower() for i, n in (getattr(config, "id2label", None) or {}).items()}
    found = {}
    for index, name in names.items():
        for prefix, letter in _LABEL_PREFIXES.items():
            if name.startswith(prefix):
                found[letter] = index
    if len(found) == 3:
        return found
    known = KNOWN_LABEL_ORDERS.get(model_name) or KNOWN_LABEL_ORDERS.get(
        getattr(config, "_name_or_path", ""))
    if known is None:
        raise ValueError(f"cannot tell the label order of NLI model {model_name!r} (id2label "
                         f"{names or 'missing'}); pass label_order='e,n,c' (or its order)")
    return {label: i for i, label in enumerate(known)}


def nli_probabilities(model: Any, tokenizer: Any, pairs: Sequence[tuple[str, str]],
                      indices: dict[str, int], *, batch_size: int = 16) -> list[Probabilities]:
    """Softmax class probabilities of (premise, hypothesis) pairs, as {"e", "n", "c"}."""
    import torch

    limit = max_positions(tokenizer, model)
    out: list[Probabilities] = [{}] * len(pairs)
    for chunk in length_chunks([len(a) + len(b) for a, b in pairs], batch_size):
        enc = tokenizer([pairs[i][0] for i in chunk], [pairs[i][1] for i in chunk],
                        padding=True, truncation=True, max_length=limit, padding_side="right",
                        return_tensors="pt")
        with torch.inference_mode():
            probs = torch.softmax(model(**enc).logits.float(), dim=-1).tolist()
        for i, row in zip(chunk, probs, strict=True):
            out[i] = {label: row[j] for label, j in indices.items()}
    return out


def combine(nli_scores: Sequence[float], other_scores: Sequence[float], weight: float = 0.2
            ) -> list[float]:
    """MENLI's combination ``w * minmax(N) + (1 - w) * minmax(M)`` over one scored batch
    (MENLI's default ``w`` = 0.2); :func:`blindspot.minmax.combine`."""
    return combine_minmax(nli_scores, other_scores, weight, weight_name="nli_weight")


def menli_module(module: Any, predictions: list[str], references: list[Any] | None = None,
                 sources: list[str] | None = None, use_aggregator: bool = True,
                 combine_with: Any = None, nli_weight: float = 0.2,
                 combine_key: str | None = None, **options: Any) -> dict[str, Any]:
    """The ``menli`` module's compute: MENLI's NLI scores per row, optionally combined with
    another metric's (``combine_with``: a module or a list of its per-row scores)."""
    rows = module.default_compute(predictions, references, sources, use_aggregator=False,
                                  **options)
    if combine_with is not None:
        given_refs = None if not any(references or []) else references
        given_srcs = None if not any(sources or []) else sources
        other = other_metric_scores(combine_with, predictions, given_refs, given_srcs,
                                    combine_key)
        rows["combined"] = combine(rows["menli"], other, nli_weight)
    return module.aggregate(rows) if use_aggregator else rows


_MENLI_CARD = ModuleCard(
    title="MENLI NLI metric", emoji="⚖️",
    summary=("MENLI's NLI-based metric (directions, formulas, reference-free, min-max combination "
             "with any metric) on blindspot's cached scoring layer."),
    description="""\
MENLI's NLI metric (Chen & Eger, 2023) on blindspot's scoring layer.

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
``w * minmax(menli) + (1 - w) * minmax(M)``.""",
    examples="""\
>>> import evaluate, tempfile
>>> from blindspot.tiny_models import tiny_nli
>>> folder = tiny_nli(tempfile.mkdtemp())  # random weights: the numbers mean nothing
>>> menli = evaluate.load("blindspot/menli")
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
>>> chrf = evaluate.load("blindspot/chrf")
>>> with_chrf = menli.compute(predictions=["A cat sat.", "A dog ran."],
...                           references=["The cat sat.", "No dog ran."], model=folder,
...                           combine_with=chrf)
>>> sorted(with_chrf)
['combined', 'menli']
>>> menli.compute(predictions=["Eine Katze."], model=folder, direction="src->hyp")
Traceback (most recent call last):
...
ValueError: metric 'menli' needs the source texts; pass sources=[...]
""",
    inputs="""\
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
""",
    citation=MENLI_CITATION,
    sections="""\
## Metric description
MENLI (Chen & Eger, 2023) scores a hypothesis with an off-the-shelf NLI model: the premise and
the hypothesis are whole texts (no sentence splitting), and the score is a formula over the
model's entailment (e), neutral (n) and contradiction (c) probabilities.

- `direction`: `"ref->hyp"` (the reference is the premise; default), `"hyp->ref"`, `"avg"` (the
  class probabilities of both directions are averaged first, then the formula is applied), or
  `"src->hyp"` (reference-free: the source is the premise).
- `formula`: `"e"` (default), `"-c"`, `"e-n"`, `"e-c"`, `"e-n-2c"`.
- `model`: NLI-R `ynie/roberta-large-snli_mnli_fever_anli_R1_R2_R3-nli` (default, label order
  e, n, c), NLI-D `microsoft/deberta-large-mnli` (c, n, e), cross-lingual XNLI-D
  `MoritzLaurer/mDeBERTa-v3-base-mnli-xnli` (default for `src->hyp`; e, n, c). Aliases `nli-r`,
  `nli-d`, `xnli-d`. The label order comes from the model config's `id2label` when its names say
  it, else from a table of known checkpoints, else from `label_order="e,n,c"` (or its order).
- `multi_reference`: `"mean"` (default) or `"max"` over a row's references.

Combination with any other metric M: `w * minmax(N) + (1 - w) * minmax(M)` over the scored batch
(`combine_with=` an evaluate module or a list of its per-row scores, `nli_weight=` w, default 0.2,
`combine_key=` the other module's output when it has several).

## How to use
```python
import evaluate
menli = evaluate.load("blindspot/menli")
menli.compute(predictions=["A man plays guitar."], references=["A man is playing the guitar."])
menli.compute(predictions=["A man plays guitar."], sources=["Ein Mann spielt Gitarre."],
              direction="src->hyp")
chrf = evaluate.load("blindspot/chrf")
menli.compute(predictions=hyps, references=refs, combine_with=chrf, nli_weight=0.2)
```

## Output
`menli`: e in [0, 1]; -c in [-1, 0]; e-n, e-c in [-1, 1]; e-n-2c in [-3, 1]; higher is better.
`combined` (with `combine_with`): in [0, 1]. Min-max needs the whole batch: a combined score
depends on the other rows scored with it (a constant batch maps to 0).

## Paper default and variants
Over MT the paper recommends formula `e` from the premise-to-candidate direction; for
summarization it found `e-c` with the candidate as premise (`hyp->ref`) best reference-based and
`-c` from the source (`src->hyp`) best reference-free. The best combinations it reports are
BLEURT + 0.2 × NLI-R (reference-based MT) and COMET + 0.3 × NLI-D (reference-free MT); all
weights below 0.5 were safe choices. Pairs longer than the model's maximum length are truncated
(longest first); the paper's models were trained on sentence pairs, so long source documents are
a known weakness.

## Blind spots the papers found
- NLI metrics are at about random level on fluency attacks (typos, jumbling, subject-verb
  disagreement), worst reference-free.
- They correlate much less with human segment-level MT judgements (0.15–0.22 Pearson) than
  trained metrics, hence the combination.
- Cross-lingual (reference-free) NLI models are weaker than monolingual ones.

## Offline use and tests
No NLI weights exist offline. The tests check the five formulas, the four directions and
multi-reference pooling on known class probabilities, label orders from configs and the table,
that a classifier with permuted output rows and id2label gives identical scores, parity with a
direct softmax on a tiny random classifier, and the min-max combination by hand.
""",
    requirements=("torch", "transformers"),
    compute=menli_module,
)


@register_scorer
class Menli(ModelScorer):
    """MENLI's NLI metric; options ``model``, ``direction``, ``formula``, ``label_order``,
    ``multi_reference``."""

    name = "menli"
    card = _MENLI_CARD
    outputs = ("menli",)
    # set per instance: references for the ref directions, the source for src->hyp
    uses_references = "optional"
    uses_source = "optional"
    default_batch_size = 32

    def __init__(self, model: str | None = None, direction: str = "ref->hyp", formula: str = "e",
                 label_order: str | None = None, multi_reference: str = "mean",
                 device: str | None = None, precision: str | None = None,
                 token_budget: int | None = None) -> None:
        if direction not in DIRECTIONS:
            raise ValueError(f"direction must be one of {', '.join(DIRECTIONS)}; got {direction!r}")
        if formula not in FORMULAS:
            raise ValueError(f"formula must be one of {', '.join(FORMULAS)}; got {formula!r}")
        if multi_reference not in ("mean", "max"):
            raise ValueError(f"multi_reference must be 'mean' or 'max', got {multi_reference!r}")
        name = model or (XNLI_D if direction == "src->hyp" else NLI_R)
        name = MODEL_ALIASES.get(str(name).lower(), str(name))
        if label_order is not None:
            label_order = ",".join(parse_label_order(label_order))
        super().__init__(device, precision, token_budget, model=name, direction=direction,
                         formula=formula, label_order=label_order,
                         multi_reference=multi_reference)
        free = direction == "src->hyp"
        self.uses_references = "none" if free else "required"
        self.uses_source = "required" if free else "none"

    def premise_pairs(self, item: ScoreInput) -> list[list[tuple[str, str]]]:
        """Per reference (or the source), the (premise, hypothesis) pairs its score needs."""
        direction, hyp = self.config["direction"], item.hypothesis
        if direction == "src->hyp":
            return [[(item.source or "", hyp)]]
        if direction == "ref->hyp":
            return [[(ref, hyp)] for ref in item.references]
        if direction == "hyp->ref":
            return [[(hyp, ref)] for ref in item.references]
        return [[(ref, hyp), (hyp, ref)] for ref in item.references]

    def probabilities(self, pairs: Sequence[tuple[str, str]]) -> dict[tuple[str, str], Probabilities]:
        """Class probabilities of distinct (premise, hypothesis) pairs."""
        tokenizer, model = load_sequence_classifier(self.config["model"], self.weight_dtype())
        indices = label_indices(model.config, self.config["model"], self.config["label_order"])
        unique = list(dict.fromkeys(pairs))
        if not self.on_device_path():
            return dict(zip(unique, nli_probabilities(model, tokenizer, unique, indices),
                            strict=True))
        model = place(model, self._device)
        rows = _device.encoded_rows_on_device(
            model, lambda inputs: model(**inputs).logits.float().softmax(dim=-1),
            _device.pair_encodings(tokenizer, unique, max_positions(tokenizer, model)),
            pad_id(tokenizer), self.token_budget(), self.precision(), self.name)
        return {pair: {label: row[j] for label, j in indices.items()}
                for pair, row in zip(unique, rows, strict=True)}

    def score_batch(self, batch: Sequence[ScoreInput]) -> list[dict[str, float]]:
        groups = [self.premise_pairs(item) for item in batch]
        probs = self.probabilities([p for g in groups for ref in g for p in ref])
        pool = max if self.config["multi_reference"] == "max" else fmean
        out = []
        for group in groups:
            per_ref = []
            for ref_pairs in group:
                p = probs[ref_pairs[0]]
                if len(ref_pairs) == 2:
                    p = average_probabilities(p, probs[ref_pairs[1]])
                per_ref.append(apply_formula(self.config["formula"], p))
            out.append({"menli": float(pool(per_ref))})
        return out


def other_metric_scores(metric: Any, predictions: Sequence[str], references: Any = None,
                        sources: Sequence[str] | None = None, key: str | None = None
                        ) -> list[float]:
    """Per-row scores of another metric for :func:`combine`.

    ``metric`` is a list of scores (returned as floats), or an ``evaluate`` module (anything with
    ``compute``): it is called with the inputs its features take and ``use_aggregator=False``
    where supported, and ``key`` picks the output (default: its only per-row output).
    """
    if not hasattr(metric, "compute"):
        return [float(x) for x in metric]
    names = set(metric._feature_names()) if hasattr(metric, "_feature_names") else {
        "predictions", "references"}
    kwargs: dict[str, Any] = {"predictions": list(predictions)}
    if "references" in names and references is not None:
        kwargs["references"] = references
    if "sources" in names and sources is not None:
        kwargs["sources"] = sources
    if hasattr(metric, "scorer_name"):
        kwargs["use_aggregator"] = False
    result = metric.compute(**kwargs)
    per_row = {k: v for k, v in result.items() if isinstance(v, (list, tuple))}
    if key is None:
        if len(per_row) != 1:
            raise ValueError(f"combine_key must name one of the other metric's per-row outputs: "
                             f"{sorted(per_row) or 'none (it returned no per-row lists)'}")
        key = next(iter(per_row))
    if key not in per_row:
        raise ValueError(f"combine_key {key!r} is not a per-row output of the other metric; "
                         f"it has {sorted(per_row)}")
    return [float(x) for x in per_row[key]]
