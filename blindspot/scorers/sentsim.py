"""SentSim (Song et al., 2021): sentence-level semantic similarity combined with a token-level one.

``sentence_similarity`` is the cosine between the mean-pooled last-layer token vectors
(sentence-BERT's ``mean-tokens`` pooling) of the hypothesis and of the text it is compared with;
``token_similarity`` is BERTScore F1 (``token_metric="bertscore"``) or ``1 - WMD`` by the project's
MoverScore with uniform token masses (``"wmd"``). SentSim combines them as
``exp(sentence_similarity) + exp(token_similarity)``, as the authors' code does (a distance
``d`` enters as ``exp(1 - d)``). Higher is better.

Choices, stated:

* ``against="source"`` (default: SentSim's cross-lingual, reference-free use, as MENLI ran it) or
  ``"reference"`` (mean over a row's references).
* The authors min-max normalise each component over the evaluated set before the exponentials;
  a per-row score cannot depend on the other rows, so the scorer keeps the raw components and the
  evaluate module's ``normalise_over_set=True`` applies the set's min-max as the authors do
  (:func:`combine_over_set`).
* Paper defaults for the cross-lingual setting: ``sentence-transformers/xlm-r-100langs-bert-base-
  nli-stsb-mean-tokens`` for sentences and ``xlm-roberta-base`` for tokens; offline, ``minilm``
  for both (English only).
* The WMD variant's token vectors are L2-normalised (MoverScore's convention); the authors used
  raw vectors of the same layer.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from statistics import fmean
from typing import Any

from blindspot.minmax import minmax
from blindspot.models import load_encoder, model_revision
from blindspot.scorers import _lm_utils as lm
from blindspot.scorers.bertscore import BertScore
from blindspot.scorers.moverscore import MoverScore
from blindspot.scoring.card import ModuleCard
from blindspot.scoring.scorer import Reference, ScoreInput, register_scorer

SENTSIM_CITATION = """@inproceedings{song-etal-2021-sentsim,
    title = "{S}ent{S}im: Crosslingual Semantic Evaluation of Machine Translation",
    author = "Song, Yurun and Zhao, Junchen and Specia, Lucia",
    booktitle = "Proceedings of the 2021 Conference of the North American Chapter of the Association for Computational Linguistics: Human Language Technologies",
    year = "2021",
    pages = "3143--3156",
}
"""  # noqa: E501 (published BibTeX, kept verbatim)

DEFAULT_SENTENCE_MODEL = "sentence-transformers/xlm-r-100langs-bert-base-nli-stsb-mean-tokens"
DEFAULT_TOKEN_MODEL = "xlm-roberta-base"
TOKEN_METRICS = ("bertscore", "wmd")
AGAINST = ("source", "reference")


def combine(sentence: float, token: float) -> float:
    """SentSim's combination of its two components."""
    return math.exp(sentence) + math.exp(token)


def combine_over_set(sentence: Sequence[float], token: Sequence[float]) -> list[float]:
    """The authors' set-level form: each component min-max normalised over the set, then
    :func:`combine`."""
    return [combine(s, t) for s, t in zip(minmax(sentence), minmax(token), strict=True)]


def mean_pooled(model: Any, tokenizer: Any, texts: Sequence[str], batch_size: int = 32
                ) -> dict[str, Any]:
    """Each distinct text's mean of its last-layer token vectors over the attention mask."""
    import torch

    unique = list(dict.fromkeys(texts))
    limit = lm.max_positions(tokenizer, model)
    device = lm.model_device(model)
    out: dict[str, Any] = {}
    for chunk in lm.length_chunks([len(t) for t in unique], batch_size):
        batch = [unique[i] for i in chunk]
        enc = tokenizer(batch, padding=True, truncation=True, max_length=limit,
                        return_tensors="pt")
        mask = enc["attention_mask"].to(device)
        with torch.inference_mode():
            hidden = model(input_ids=enc["input_ids"].to(device), attention_mask=mask)[0]
        weights = mask.unsqueeze(-1).to(hidden.dtype)
        pooled = ((hidden * weights).sum(dim=1) / weights.sum(dim=1)).double().cpu()
        out.update(zip(batch, pooled, strict=True))
    return out


def sentsim_module(module: Any, predictions: list[str], references: list[Any] | None = None,
                   sources: list[str] | None = None, use_aggregator: bool = True,
                   normalise_over_set: bool = False, **options: Any) -> dict[str, Any]:
    """The ``sentsim`` module's compute: per-row SentSim, or the authors' set-level rescaling
    (``normalise_over_set=True``) over the call's rows."""
    rows = module.default_compute(predictions, references, sources, use_aggregator=False,
                                  **options)
    if normalise_over_set:
        rows["sentsim"] = combine_over_set(rows["sentence_similarity"], rows["token_similarity"])
    return module.aggregate(rows) if use_aggregator else rows


_SENTSIM_CARD = ModuleCard(
    title="SentSim", emoji="❓",
    summary=("SentSim: sentence-level semantic similarity combined with BERTScore or WMD, on "
             "blindspot's cached scoring layer."),
    description="""\
SentSim (Song et al., 2021) on blindspot's scoring layer.

``sentsim = exp(sentence_similarity) + exp(token_similarity)``: the cosine of mean-pooled
sentence-BERT vectors, and BERTScore F1 (``token_metric="bertscore"``) or 1 - WMD (``"wmd"``,
MoverScore with uniform masses). It compares the prediction with its source (``against=
"source"``, the cross-lingual reference-free use, default) or with its references
(``"reference"``). Options: ``sentence_model`` (default
``sentence-transformers/xlm-r-100langs-bert-base-nli-stsb-mean-tokens``), ``token_model``
(default ``xlm-roberta-base``), ``num_layers`` (of the token model; BERTScore's default layer),
``batch_size``, ``device``; offline, ``"minilm"`` for both. ``normalise_over_set=True`` min-max
normalises each component over the call's rows before the exponentials, as the authors' code
does (the per-row score cannot depend on other rows, so it is off by default).""",
    examples="""\
>>> import evaluate, math
>>> sentsim = evaluate.load("blindspot/sentsim")
>>> out = sentsim.compute(predictions=["The cat sat on the mat.", "Stocks fell sharply."],
...                       references=["The cat sat on the mat.", "A dog barked."],
...                       against="reference", sentence_model="minilm",
...                       token_model="minilm", use_aggregator=False)
>>> round(out["sentsim"][0], 4) == round(2 * math.e, 4)  # identical: both components 1
True
>>> out["sentsim"][1] < out["sentsim"][0]
True
>>> normed = sentsim.compute(predictions=["The cat sat on the mat.", "Stocks fell sharply."],
...                          references=["The cat sat on the mat.", "A dog barked."],
...                          against="reference", sentence_model="minilm",
...                          token_model="minilm", normalise_over_set=True,
...                          use_aggregator=False)
>>> [round(x, 4) for x in normed["sentsim"]] == [round(2 * math.e, 4), 2.0]
True
""",
    inputs="""\
Args:
    predictions (list of str): translations (or any outputs).
    sources (list of str): their sources (against="source", default).
    references (list of str or list of list of str): references (against="reference").
    sentence_model, token_model, token_metric, against, num_layers, batch_size, device: see the
        description.
    normalise_over_set (bool): min-max each component over the rows first (default False).
    use_aggregator (bool): mean over rows (default) or per-row lists.
Returns:
    sentsim: exp(sentence_similarity) + exp(token_similarity), higher is better;
    sentence_similarity, token_similarity: the components.
""",
    citation=SENTSIM_CITATION,
    sections="""\
## Metric description
SentSim (Song et al., 2021) adds the exponentials of a sentence-level similarity (cosine of mean-pooled sentence-BERT vectors) and a token-level one (BERTScore F1, or 1 - WMD). It compares the translation with the source (cross-lingual, default) or with the references.

The module's docstring (`sentsim.py`) states every option, default and choice; the scorer
(`blindspot/scorers/sentsim.py`) is the computation, cached and batched by blindspot's scoring
layer, so `blindspot run --metrics sentsim` judges it like any other metric.

## How to use
```python
import evaluate
sentsim = evaluate.load("blindspot/sentsim")  # or the path of this folder
```
See the examples in `sentsim.py`; they run offline on tiny models built from configs.
""",  # noqa: E501
    requirements=("bert-score==0.3.13", "pot", "torch", "transformers"),
    compute=sentsim_module,
)


@register_scorer
class SentSim(lm.ModelScorer):
    """SentSim of each hypothesis against its source (or references)."""

    name = "sentsim"
    card = _SENTSIM_CARD
    outputs = ("sentsim", "sentence_similarity", "token_similarity")
    uses_references = "optional"  # required with against="reference" (set per instance)
    uses_source = "optional"  # required with against="source" (set per instance)
    default_batch_size = 32
    reference = Reference(
        "Song et al.'s released SentSim code (no registry package)",
        differs="not measured here: not run against a snapshot of the authors' code yet; its "
                "cross-lingual models are not offline")
    version = "2"  # the WMD variant: MoverScore without idf weighs [CLS] and [SEP] (its v2)

    def __init__(self, sentence_model: str = DEFAULT_SENTENCE_MODEL,
                 token_model: str = DEFAULT_TOKEN_MODEL, token_metric: str = "bertscore",
                 against: str = "source", num_layers: int | None = None, batch_size: int = 32,
                 device: str | None = None) -> None:
        if token_metric not in TOKEN_METRICS:
            raise ValueError(f"token_metric must be one of {', '.join(TOKEN_METRICS)}, got "
                             f"{token_metric!r}")
        if against not in AGAINST:
            raise ValueError(f"against must be one of {', '.join(AGAINST)}, got {against!r}")
        if token_metric == "bertscore":
            self._token: BertScore | MoverScore = BertScore(
                model_type=token_model, num_layers=num_layers, batch_size=batch_size,
                device=device)
        else:
            self._token = MoverScore(model_type=token_model, num_layers=num_layers, idf=False,
                                     remove_subwords=False, remove_punctuation=False,
                                     batch_size=batch_size, device=device)
        super().__init__(device, sentence_model=str(sentence_model),
                         token_model=self._token.config["model_type"],
                         num_layers=self._token.config["num_layers"], token_metric=token_metric,
                         against=against)
        self._batch_size = int(batch_size)
        self.uses_references = "required" if against == "reference" else "none"
        self.uses_source = "required" if against == "source" else "none"

    def model_revision(self) -> str:
        return f"{model_revision(self.config['sentence_model'])};{self._token.model_revision()}"

    def token_scores(self, hypotheses: list[str], others: list[str]) -> list[float]:
        """The token-level similarity of aligned (hypothesis, other) pairs."""
        if isinstance(self._token, BertScore):
            return [float(row[2]) for row in self._token.pair_scores(hypotheses, others).tolist()]
        items = [ScoreInput(h, (o,)) for h, o in zip(hypotheses, others, strict=True)]
        return [row["moverscore"] for row in self._token.score_batch(items)]

    def score_batch(self, batch: Sequence[ScoreInput]) -> list[dict[str, float]]:
        import torch

        against = [((item.source or "",) if self.config["against"] == "source"
                    else item.references) for item in batch]
        hypotheses = [item.hypothesis for item, others in zip(batch, against, strict=True)
                      for _ in others]
        others = [other for group in against for other in group]
        tokenizer, model = load_encoder(self.config["sentence_model"])
        model = lm.place(model, self._device)
        pooled = mean_pooled(model, tokenizer, hypotheses + others, self._batch_size)
        sentence = [float(torch.nn.functional.cosine_similarity(pooled[h], pooled[o], dim=0))
                    for h, o in zip(hypotheses, others, strict=True)]
        token = self.token_scores(hypotheses, others)
        out, start = [], 0
        for group in against:
            s = sentence[start: start + len(group)]
            t = token[start: start + len(group)]
            start += len(group)
            out.append({"sentsim": fmean(combine(a, b) for a, b in zip(s, t, strict=True)),
                        "sentence_similarity": fmean(s), "token_similarity": fmean(t)})
        return out
