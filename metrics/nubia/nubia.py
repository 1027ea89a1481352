"""NUBIA (Kane et al., 2020) on blindspot's scoring layer.

Features of each (reference, prediction) pair: ``5 x`` an STS head, the MNLI log-probabilities
(contradiction, neutral, entailment), GPT-2's mean token cross-entropy of both texts and (8
features) their word counts; a trained aggregator maps them to a raw score ``r``, calibrated
against the reference with itself (``s``): ``nubia = clip(1 - (s - r) / (|s| + 1), 0, 1)``.
Options: ``aggregator`` (required: the path of a joblib regressor; NUBIA's own are online only,
e.g. https://nubia-nn.s3.amazonaws.com/aggregators/nn_2015_2017_8_dim.joblib; the file is
unpickled, so give only files you trust), ``sts_model`` (default
``cross-encoder/stsb-roberta-large``), ``sts_activation`` ("sigmoid" or "identity"),
``nli_model`` (``roberta-large-mnli``), ``lm_model`` (``gpt2``), ``six_dim`` (a 6-feature
aggregator), ``nli_label_order``, ``batch_size``, ``device``. Several references: the mean.

Examples:
    >>> import evaluate, tempfile
    >>> from blindspot import tiny_models as tiny
    >>> root = tempfile.mkdtemp()  # random weights: the numbers mean nothing
    >>> models = dict(aggregator=tiny.tiny_nubia_aggregator(root + "/agg.joblib"),
    ...               sts_model=tiny.tiny_regressor(root + "/sts"),
    ...               nli_model=tiny.tiny_nli(root + "/nli"),
    ...               lm_model=tiny.tiny_causal_lm(root + "/lm"))
    >>> nubia = evaluate.load("metrics/nubia")
    >>> out = nubia.compute(predictions=["The cat sat on the mat.", "Stocks fell."],
    ...                     references=["The cat sat on the mat.", "A dog barked."],
    ...                     use_aggregator=False, **models)
    >>> out["nubia"][0]  # the reference itself: calibrated to 1
    1.0
    >>> 0 <= out["nubia"][1] <= 1, sorted(out)[:3]
    (True, ['contradiction', 'grammar_hyp', 'grammar_ref'])
"""

import blindspot.scoring.module as base
from blindspot.scorers.nubia import NUBIA_CITATION

_INPUTS = """
Args:
    predictions (list of str): hypotheses.
    references (list of str or list of list of str): references.
    aggregator, sts_model, sts_activation, nli_model, lm_model, six_dim, nli_label_order,
    batch_size, device: see the description.
    use_aggregator (bool): mean over rows (default) or per-row lists.
Returns:
    nubia: in [0, 1], higher is better; semantic_relation (0-5), contradiction, irrelevancy,
    logical_agreement (percent), grammar_ref, grammar_hyp (GPT-2 cross-entropy).
"""


class Nubia(base.ScorerMetric):
    """NUBIA on the blindspot scoring layer."""

    scorer_name = "nubia"
    module_description = __doc__
    module_citation = NUBIA_CITATION
    module_inputs = _INPUTS
