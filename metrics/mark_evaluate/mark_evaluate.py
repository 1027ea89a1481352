"""Mark-Evaluate Petersen on blindspot's cached scoring layer.

Mark-Evaluate Petersen (Mordido & Meinel, 2020) applied to a candidate-reference pair, as the
examination of BERTScore, BLEURT, NUBIA, MoverScore and Mark-Evaluate did (its code, LazerLambda/ME):
the two texts' sets of contextual token vectors (each text encoded alone without [CLS]/[SEP], every
token once in each of the last five layers) are the population; a vector is captured when it lies in a
k-nearest-neighbour hypersphere of the other set; the Petersen estimate `N_hat = M * C / R` (marked
`M = |S| + a`, captured `C = |S'| + b`, recaptured `R = a + b`, with `a` and `b` the vectors of each
set inside the other's spheres) is compared with the known size `N = |S| + |S'|`:
`score = 1 - min(1, |N_hat - N| / N)`; `layers=1` reads the last layer only.

Runs offline on MiniLM (``model_type="minilm"``). Several
references per hypothesis are averaged. See ``blindspot/scorers/`` for every choice and why.

Examples:
    >>> import evaluate
    >>> metric = evaluate.load("metrics/mark_evaluate")
    >>> out = metric.compute(predictions=["The cat sat on the mat.",
    ...                                   "mat the on sat cat The.", "The dog sat on the mat.",
    ...                                   "Quantum computers factor large numbers quickly."],
    ...                      references=["The cat sat on the mat.", "The cat sat on the mat.",
    ...                                  "The cat sat on the mat.",
    ...                                  "My grandmother bakes bread every Sunday morning."],
    ...                      model_type="minilm", use_aggregator=False)
    >>> [round(s, 2) for s in out["me_petersen"]]
    [1.0, 0.56, 0.99, 0.0]
"""

import blindspot.scorers._token_vectors as layers
import blindspot.scoring.module as base

_CITATION = """\
@inproceedings{mordido-meinel-2020-mark,
    title = "Mark-Evaluate: Assessing Language Generation using Population Estimation Methods",
    author = "Mordido, Gon{\\c{c}}alo and Meinel, Christoph",
    booktitle = "Proceedings of COLING 2020",
    year = "2020",
}
"""  # noqa: E501 (published BibTeX, kept verbatim)

_INPUTS = layers.module_inputs(
    """model_type (str): encoder: Hub id, local folder or offline short name "minilm" (default
        "textattack/bert-base-uncased-MNLI").
    k (int): neighbours per hypersphere (default 1, as the examination).
    layers (int): how many of the last hidden states give vectors (default 5, as the examination).""",
    """    me_petersen: in [0, 1], higher is better; 1 for identical texts, 0 when no vector of
        either text falls inside the other's hyperspheres.""")


class MarkEvaluatePetersen(base.ScorerMetric):
    """Mark-Evaluate Petersen on the blindspot scoring layer."""

    scorer_name = "mark_evaluate"
    module_description = __doc__
    module_citation = _CITATION
    module_inputs = _INPUTS
