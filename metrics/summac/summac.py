"""SummaC-ZS (Laban et al., 2022) on blindspot's scoring layer.

The document (``sources``) and the summary (``predictions``) are cut into sentences; an NLI model
scores every (document sentence, summary sentence) pair; each summary sentence gets the highest
entailment minus the highest contradiction probability over the document (``op1="max"``), and
the summary the mean over its sentences (``op2="mean"``). In [-1, 1], higher is more consistent.
Options: ``model`` (default NLI-R ``ynie/roberta-large-snli_mnli_fever_anli_R1_R2_R3-nli``, as
MENLI ran SummaC-ZS; SummaC's names ``"vitc"``, ``"mnli"``, ``"anli"``... are accepted),
``granularity`` ("sentence", "paragraph", "2sents", "mixed", "document", or
"document-summary" such as "paragraph-sentence"), ``op1``, ``op2`` ("max", "mean", "min"),
``use_ent``, ``use_con``, ``max_doc_sents`` (100), ``label_order`` (e.g. "e,n,c"; default: the
model's own), ``batch_size``. Chunks of 10 characters or fewer are dropped, as SummaC does; a
side with no chunk scores 0.

Examples:
    >>> import evaluate, tempfile
    >>> from blindspot.tiny_models import tiny_nli
    >>> folder = tiny_nli(tempfile.mkdtemp())  # random weights: the numbers mean nothing
    >>> summac = evaluate.load("metrics/summac")
    >>> out = summac.compute(predictions=["The cat sat on the mat.", "It rained."],
    ...                      sources=["A cat sat on the mat all day. It purred loudly.",
    ...                               "Short."], model=folder, use_aggregator=False)
    >>> -1 <= out["summac"][0] <= 1, out["summac"][1]  # "Short." has no chunk: 0
    (True, 0.0)
"""

import blindspot.scoring.module as base
from blindspot.scorers.summac import SUMMAC_CITATION

_INPUTS = """
Args:
    predictions (list of str): summaries.
    sources (list of str): their documents.
    model, granularity, op1, op2, use_ent, use_con, max_doc_sents, label_order, batch_size:
        see the description.
    use_aggregator (bool): mean over rows (default) or per-row lists.
Returns:
    summac: in [-1, 1] (with use_ent and use_con), higher is more consistent.
"""


class SummaC(base.ScorerMetric):
    """SummaC-ZS on the blindspot scoring layer."""

    scorer_name = "summac"
    module_description = __doc__
    module_citation = SUMMAC_CITATION
    module_inputs = _INPUTS
