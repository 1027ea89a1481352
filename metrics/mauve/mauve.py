"""MAUVE (Pillutla et al., 2021) through mauve-text: a drop-in for evaluate's canonical ``mauve``.

The same arguments, defaults and output as ``evaluate.load("mauve")``: ``compute_mauve`` of
mauve-text with ``p_text=predictions`` and ``q_text=references`` (or ``p_features``/``q_features``,
``p_tokens``/``q_tokens``), ``num_buckets`` ("auto"), ``pca_max_data`` (-1),
``kmeans_explained_var`` (0.9), ``kmeans_num_redo`` (5), ``kmeans_max_iter`` (500),
``featurize_model_name`` ("gpt2-large"), ``device_id`` (-1: CPU), ``max_text_length`` (1024),
``divergence_curve_discretization_size`` (25), ``mauve_scaling_factor`` (5), ``verbose`` and
``seed`` (25); it returns mauve-text's result object (``out.mauve``, ``out.frontier_integral``,
``out.divergence_curve``, ``out.p_hist``, ``out.q_hist``...).

Added: texts are featurized here, as mauve-text does (the last layer's state at each text's last
token, cut to ``max_text_length``), by ANY model: ``featurize_model_name`` may be a Hub id, a
local folder or an offline short name (``"minilm"``, ``"smollm2"``), where mauve-text takes only
the GPT-2 family; each distinct text's features are computed once and cached on disk.

A blind-spot run (``blindspot run --metrics mauve``, the ``mauve_score`` module) scores the
hypotheses as MAUVE's Q and the references as its P, the blind-spots paper's setting.

Examples:
    >>> import evaluate
    >>> import numpy as np
    >>> mauve = evaluate.load("metrics/mauve")
    >>> features = np.random.RandomState(0).randn(40, 8).astype(np.float32)
    >>> out = mauve.compute(predictions=["a"] * 40, references=["a"] * 40, p_features=features,
    ...                     q_features=features.copy(), verbose=False)
    >>> print(out.mauve, out.num_buckets)
    1.0 4
    >>> out = mauve.compute(predictions=["hello there", "general kenobi"],
    ...                     references=["hello there", "general kenobi"],
    ...                     featurize_model_name="minilm", verbose=False)
    >>> print(out.mauve, out.p_hist)
    0.75 [0.5 0.5]

    The second example is the canonical module's documented one, with MiniLM features: for two
    identical sets of two texts mauve-text 0.4.0 quantizes into two buckets and gives 0.75 (the
    canonical docstring prints 1.0, an untested example), whatever the feature model.
"""

from typing import Any, cast

from mauve import compute_mauve

import blindspot.scoring.module as base
from blindspot.scorers import mauve_score
from blindspot.scoring.scorer import get_scorer

_CITATION = """\
@inproceedings{pillutla-etal:mauve:neurips2021,
  title={MAUVE: Measuring the Gap Between Neural Text and Human Text using Divergence Frontiers},
  author={Pillutla, Krishna and Swayamdipta, Swabha and Zellers, Rowan and Thickstun, John and
          Welleck, Sean and Choi, Yejin and Harchaoui, Zaid},
  booktitle = {NeurIPS},
  year      = {2021}
}
"""

_INPUTS = """
Args:
    predictions (list of str): the generated texts (MAUVE's P).
    references (list of str): the human texts (MAUVE's Q).
    p_features, q_features (arrays of shape (n, d)): features instead of texts.
    p_tokens, q_tokens: token ids instead of texts (featurized by mauve-text, GPT-2 family only).
    num_buckets ("auto" or int), pca_max_data (int), kmeans_explained_var (float),
    kmeans_num_redo (int), kmeans_max_iter (int), divergence_curve_discretization_size (int),
    mauve_scaling_factor (float), seed (int): mauve-text's settings, its defaults.
    featurize_model_name (str): the feature model: Hub id, local folder or offline short name
        ("minilm", "smollm2"); default gpt2-large.
    device_id (int): GPU id for featurization, -1 (default) for the CPU.
    max_text_length (int): tokens per text, default 1024 (capped by the model's window).
    verbose (bool): mauve-text's progress messages.
Returns:
    mauve-text's result: mauve in (0, 1], higher = the sets are closer; frontier_integral,
    divergence_curve, p_hist, q_hist, num_buckets.
"""


def _device(device_id: int) -> str:
    """mauve-text's device choice: the GPU of that id when there is one, else the CPU."""
    import torch

    return f"cuda:{device_id}" if device_id >= 0 and torch.cuda.is_available() else "cpu"


class Mauve(base.ScorerMetric):
    """MAUVE: evaluate's ``mauve``, with features from any model, cached."""

    scorer_name = "mauve"
    module_description = __doc__
    module_citation = _CITATION
    module_inputs = _INPUTS

    def _compute(self, predictions: list[str], references: list[str], p_features: Any = None,
                 q_features: Any = None, p_tokens: Any = None, q_tokens: Any = None,
                 num_buckets: Any = "auto", pca_max_data: int = -1,
                 kmeans_explained_var: float = 0.9, kmeans_num_redo: int = 5,
                 kmeans_max_iter: int = 500, featurize_model_name: str = "gpt2-large",
                 device_id: int = -1, max_text_length: int = 1024,
                 divergence_curve_discretization_size: int = 25, mauve_scaling_factor: float = 5,
                 verbose: bool = True, seed: int = 25) -> Any:
        if (p_features is None and p_tokens is None) or (q_features is None and q_tokens is None):
            found = get_scorer(self.scorer_name, feature_model=featurize_model_name,
                               max_text_length=max_text_length, device=_device(device_id))
            scorer = cast(mauve_score.Mauve, found)  # scorer_name is the Mauve scorer's
            if p_features is None and p_tokens is None:
                p_features = scorer.feature_matrix(predictions, "predictions")
            if q_features is None and q_tokens is None:
                q_features = scorer.feature_matrix(references, "references")
        return compute_mauve(p_features=p_features, q_features=q_features, p_tokens=p_tokens,
                             q_tokens=q_tokens, num_buckets=num_buckets,
                             pca_max_data=pca_max_data,
                             kmeans_explained_var=kmeans_explained_var,
                             kmeans_num_redo=kmeans_num_redo, kmeans_max_iter=kmeans_max_iter,
                             featurize_model_name=featurize_model_name, device_id=device_id,
                             max_text_length=max_text_length,
                             divergence_curve_discretization_size=(
                                 divergence_curve_discretization_size),
                             mauve_scaling_factor=mauve_scaling_factor, verbose=verbose,
                             seed=seed)
