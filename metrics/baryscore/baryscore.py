"""BaryScore on blindspot's cached scoring layer.

BaryScore (Colombo et al., 2021): each text gives one distribution per layer of the encoder's top
`layers` hidden states (its L2-normalised token vectors, of equal weight as in the authors' code, or
weighted by idf with `idf=True`); the text is summarised
by the free-support Wasserstein barycenter of those distributions (POT), and the score is the
exact earth mover's distance between the two barycenters (squared Euclidean cost).

Runs offline on MiniLM (``model_type="minilm"``). Several
references per hypothesis are averaged. See ``blindspot/scorers/`` for every choice and why.

Examples:
    >>> import evaluate
    >>> metric = evaluate.load("metrics/baryscore")
    >>> out = metric.compute(predictions=["The weather is nice today.", "I hate these cakes!"],
    ...                      references=["The weather is lovely today.",
    ...                                  "I like my cakes very much."],
    ...                      model_type="minilm", use_aggregator=False)
    >>> [round(s, 2) for s in out["baryscore"]]
    [0.06, 0.56]
"""

import blindspot.scorers._idf_metric as idf_base
import blindspot.scorers._token_vectors as layers

_CITATION = """\
@inproceedings{colombo-etal-2021-automatic,
    title = "Automatic Text Evaluation through the Lens of {W}asserstein Barycenters",
    author = "Colombo, Pierre and Staerman, Guillaume and Clavel, Chlo{\\'e} and Piantanida, Pablo",
    booktitle = "Proceedings of EMNLP 2021",
    year = "2021",
}
"""  # noqa: E501 (published BibTeX, kept verbatim)

_INPUTS = layers.module_inputs(
    """model_type (str): encoder: Hub id, local folder or offline short name "minilm" (default
        "bert-base-uncased", the authors').
    layers (int): how many of the top hidden states (default 5, the authors').
    idf (bool): idf weights from all references of the call (default False: the authors'
        code asks for idf but never applies it, so its numbers are of uniform weights).""",
    """    baryscore: a distance >= 0, lower is better; 0 for identical texts.""")


class BaryScore(idf_base.IdfCorpusMetric):
    """BaryScore on the blindspot scoring layer."""

    scorer_name = "baryscore"
    module_description = __doc__
    module_citation = _CITATION
    module_inputs = _INPUTS
