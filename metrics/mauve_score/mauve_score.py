"""MAUVE (Pillutla et al., 2021) through mauve-text, on blindspot's cached scoring layer.

MAUVE compares the distribution of the hypothesis set with that of the reference set: each
text becomes the final-layer hidden state of its last token under a feature model, mauve-text
clusters both sets jointly (PCA, k-means) and measures the area under the divergence frontier
of the two cluster histograms. It is corpus-level: one score for the whole set, in (0, 1],
higher is better (1 = indistinguishable sets).

Settings of the blind-spots paper (App. A): scaling ``c = 5``, k-means with 500 iterations and
``n/10`` clusters (mauve-text's ``num_buckets="auto"`` = ``max(2, round(min(|P|, |Q|) / 10))``),
a fixed seed (25, mauve-text's default). The feature model is selectable with ``feature_model``:
a causal LM (``gpt2-large``, the MAUVE paper's default; ``"smollm2"`` offline) or an encoder
(``roberta-large``, ``google/electra-large-discriminator``; ``"minilm"`` offline). Texts are cut
to ``max_text_length`` tokens (default 1024, mauve-text's, capped at the model's window).
Features are computed once per distinct text and cached on disk (keyed by the model's revision,
the truncation length and the text), so re-scoring sets of already-seen texts is fast.

For unpaired samples of different sizes, pass ``reference_set=[...]`` (a flat list of any
length) instead of ``references``. With ``references``, every reference of every row joins the
reference set.

Examples:
    >>> import evaluate
    >>> mauve_metric = evaluate.load("blindspot/mauve_score")
    >>> human = [f"The town of Ashford had {i + 2} mills on the river in the year {1800 + 7 * i}."
    ...          for i in range(20)]
    >>> out = mauve_metric.compute(predictions=human, references=human, feature_model="minilm")
    >>> round(out["mauve"], 4), int(out["num_buckets"])
    (1.0, 2)

    A degenerate hypothesis set against the same human set (of another size) scores far lower:

    >>> degenerate = ["the " * (i + 3) for i in range(30)]
    >>> out = mauve_metric.compute(predictions=degenerate, reference_set=human,
    ...                            feature_model="minilm")
    >>> out["mauve"] < 0.5
    True
"""

from typing import Any

import blindspot.scoring.module as base
from blindspot.scorers.mauve_score import mauve_sets

_CITATION = """\
@inproceedings{pillutla-etal-2021-mauve,
    title = "{MAUVE}: Measuring the Gap Between Neural Text and Human Text using Divergence Frontiers",
    author = "Pillutla, Krishna and Swayamdipta, Swabha and Zellers, Rowan and Thickstun, John and
              Welleck, Sean and Choi, Yejin and Harchaoui, Zaid",
    booktitle = "Advances in Neural Information Processing Systems",
    year = "2021",
}
"""

_INPUTS = """
Args:
    predictions (list of str): the hypothesis set (MAUVE's Q, the model text).
    references (list of str or list of list of str): one entry per prediction; all of them
        together are the reference set (MAUVE's P, the human text).
    reference_set (list of str): instead of references, a reference set of any size.
    feature_model (str): Hub id, local folder or offline short name ("minilm", "smollm2");
        default "gpt2-large".
    max_text_length (int): tokens kept per text, default 1024 (capped at the model's window).
    mauve_scaling_factor (float): c, default 5.
    num_buckets ("auto" or int): k-means clusters, default "auto" (n/10).
    kmeans_max_iter (int): default 500. kmeans_num_redo (int): default 5.
    kmeans_explained_var (float): PCA variance kept, default 0.9. pca_max_data (int): default -1.
    divergence_curve_discretization_size (int): default 25. seed (int): default 25.
    batch_size (int), device (str), feature_cache (path or None): how features are computed.
Returns:
    mauve: in (0, 1], higher is better. mauve_star: MAUVE on smoothed histograms.
    frontier_integral: in [0, 1], lower is better. num_buckets: the number of clusters used.
"""


class MauveScore(base.ScorerMetric):
    """MAUVE on the blindspot scoring layer (corpus-level)."""

    scorer_name = "mauve"
    module_description = __doc__
    module_citation = _CITATION
    module_inputs = _INPUTS

    def compute(self, *, predictions: Any = None, references: Any = None,
                **kwargs: Any) -> dict[str, Any] | None:
        """As ``evaluate``'s compute; ``reference_set=`` takes a reference set of any size."""
        if predictions is not None and not isinstance(predictions, str) and len(predictions) == 0:
            raise ValueError("predictions is empty; MAUVE compares two non-empty sets of texts")
        if "reference_set" not in kwargs:
            return super().compute(predictions=predictions, references=references, **kwargs)
        reference_set = kwargs.pop("reference_set")
        if references is not None:
            raise ValueError("give either references (one per prediction) or reference_set "
                             "(a set of any size), not both")
        for ignored in ("level", "use_aggregator"):  # MAUVE is corpus-level whatever they say
            kwargs.pop(ignored, None)
        return mauve_sets(predictions, reference_set, **kwargs)
