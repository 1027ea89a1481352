"""SentSim (Song et al., 2021) on blindspot's scoring layer.

``sentsim = exp(sentence_similarity) + exp(token_similarity)``: the cosine of mean-pooled
sentence-BERT vectors, and BERTScore F1 (``token_metric="bertscore"``) or 1 - WMD (``"wmd"``,
MoverScore with uniform masses). It compares the prediction with its source (``against=
"source"``, the cross-lingual reference-free use, default) or with its references
(``"reference"``). Options: ``sentence_model`` (default
``sentence-transformers/xlm-r-100langs-bert-base-nli-stsb-mean-tokens``), ``token_model``
(default ``xlm-roberta-base``), ``num_layers`` (of the token model; BERTScore's default layer),
``batch_size``, ``device``; offline, ``"minilm"`` for both. ``normalise_over_set=True`` min-max
normalises each component over the call's rows before the exponentials, as the authors' code
does (the per-row score cannot depend on other rows, so it is off by default).

Examples:
    >>> import evaluate, math
    >>> sentsim = evaluate.load("metrics/sentsim")
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
"""

from typing import Any

import blindspot.scoring.module as base
from blindspot.scorers.sentsim import SENTSIM_CITATION, combine_over_set

_INPUTS = """
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
"""


class SentSim(base.ScorerMetric):
    """SentSim on the blindspot scoring layer."""

    scorer_name = "sentsim"
    module_description = __doc__
    module_citation = SENTSIM_CITATION
    module_inputs = _INPUTS

    def _compute(self, predictions: list[str], references: list[Any] | None = None,
                 sources: list[str] | None = None, use_aggregator: bool = True,
                 normalise_over_set: bool = False, **options: Any) -> dict[str, Any]:
        rows = super()._compute(predictions, references, sources, use_aggregator=False,
                                **options)
        if normalise_over_set:
            rows["sentsim"] = combine_over_set(rows["sentence_similarity"],
                                               rows["token_similarity"])
        return base.aggregate(rows) if use_aggregator else rows
