"""NUBIA (Kane et al., 2020): neural features of a (reference, hypothesis) pair, aggregated by a
trained regressor and calibrated against the reference scored with itself.

The features, as NUBIA computes them:

* ``semantic_relation``: ``5 x`` an STS regression head on the pair ``<s> ref </s></s> hyp </s>``
  (NUBIA's RoBERTa-large fine-tuned on STS-B);
* the MNLI log-probabilities of contradiction, neutral and entailment on the same pair (NUBIA's
  RoBERTa-large MNLI);
* ``grammar_ref`` / ``grammar_hyp``: GPT-2's mean token cross-entropy of each text after its
  ``<|endoftext|>`` token;
* the word counts of the reference and the hypothesis (the 8-feature aggregators only).

The aggregator (a scikit-learn MLP saved with joblib) maps the features to a raw score ``r``;
with ``s`` the raw score of (reference, reference), NUBIA is
``clip(1 - (s - r) / (|s| + 1), 0, 1)``. An empty reference or hypothesis scores 0, as in NUBIA.
Outputs: ``nubia`` and the human-readable features (``semantic_relation`` capped at 5, the
contradiction / irrelevancy / logical-agreement probabilities in percent, the two grammar
terms). Higher ``nubia`` is better.

Why not the ``nubia-score`` package (0.1.5): it needs ``fairseq`` (which cannot be installed
here, as for PRISM) and the retired ``pytorch-transformers``, and downloads its checkpoints from
S3 on first use. This module is the same computation on Hugging Face models:

* ``sts_model``: a 1-output sequence classifier; ``sts_activation="sigmoid"`` (default) reads a
  cross-encoder trained on similarity/5 (the default ``cross-encoder/stsb-roberta-large``),
  ``"identity"`` a head regressing similarity/5 directly as NUBIA's fairseq head did.
* ``nli_model``: ``roberta-large-mnli`` (the Hub release of fairseq's RoBERTa-large MNLI);
  its label order is read as MENLI reads it.
* ``lm_model``: ``gpt2``.
* ``aggregator``: a joblib file of a regressor with ``predict`` (``six_dim`` says whether it takes
  6 or 8 features). NUBIA's released ones (``nn_2015_2017_8_dim.joblib`` and three more, on
  ``https://nubia-nn.s3.amazonaws.com/aggregators/``) were pickled with scikit-learn 0.22 and
  were trained on the fairseq features: download one and give its path. The file is unpickled:
  give only files you trust.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from statistics import fmean
from typing import Any

from blindspot.models import load_causal_lm, load_sequence_classifier, model_revision
from blindspot.scorers import _lm_utils as lm
from blindspot.scorers.menli import label_indices, nli_probabilities
from blindspot.scoring.card import ModuleCard
from blindspot.scoring.scorer import Reference, ScoreInput, register_scorer

NUBIA_CITATION = """@inproceedings{kane-etal-2020-nubia,
    title = "{NUBIA}: {N}e{U}ral Based Interchangeability Assessor for Text Generation",
    author = "Kane, Hassan and Kocyigit, Muhammed Yusuf and Abdalla, Ali and Ajanoh, Pelkins and Coulibali, Mohamed",
    booktitle = "Proceedings of the 1st Workshop on Evaluating NLG Evaluation",
    year = "2020",
    pages = "28--37",
}
"""  # noqa: E501 (published BibTeX, kept verbatim)

DEFAULT_STS = "cross-encoder/stsb-roberta-large"
DEFAULT_NLI = "roberta-large-mnli"
DEFAULT_LM = "gpt2"
ACTIVATIONS = ("sigmoid", "identity")
FEATURES = ("semantic_relation", "contradiction", "irrelevancy", "logical_agreement",
            "grammar_ref", "grammar_hyp")

_AGGREGATORS: dict[str, Any] = {}


def load_aggregator(path: str) -> Any:
    """The joblib-saved aggregator at ``path``, loaded once per process."""
    resolved = str(Path(path).resolve())
    if resolved not in _AGGREGATORS:
        if not Path(resolved).is_file():
            raise ValueError(f"NUBIA aggregator {path!r} is not a file; download one of NUBIA's "
                             "(e.g. https://nubia-nn.s3.amazonaws.com/aggregators/"
                             "nn_2015_2017_8_dim.joblib) and pass aggregator=<its path>")
        import joblib

        model = joblib.load(resolved)
        if not hasattr(model, "predict"):
            raise ValueError(f"NUBIA aggregator {path!r} has no predict(): not a regressor")
        _AGGREGATORS[resolved] = model
    return _AGGREGATORS[resolved]


def calibrate(raw: float, self_score: float) -> float:
    """NUBIA's calibration of a raw score against the reference's score with itself."""
    value = 1.0 - (self_score - raw) / (abs(self_score) + 1.0)
    return min(1.0, max(0.0, value))


def feature_vector(sts: float, nli_logprobs: Sequence[float], grammar_ref: float,
                   grammar_hyp: float, reference: str, hypothesis: str, six_dim: bool
                   ) -> list[float]:
    """The aggregator's input: similarity, MNLI log-probabilities (c, n, e), the two grammar
    terms, and (8 features) the space-separated word counts."""
    values = [sts, *nli_logprobs, grammar_ref, grammar_hyp]
    if not six_dim:
        values += [float(len(reference.split(" "))), float(len(hypothesis.split(" ")))]
    return values


def sts_scores(model: Any, tokenizer: Any, pairs: Sequence[tuple[str, str]], activation: str,
               batch_size: int = 16) -> list[float]:
    """``5 x`` the STS head's output (after ``activation``) for each (reference, hypothesis)."""
    import torch

    limit = lm.max_positions(tokenizer, model)
    out = [0.0] * len(pairs)
    for chunk in lm.length_chunks([len(a) + len(b) for a, b in pairs], batch_size):
        enc = tokenizer([pairs[i][0] for i in chunk], [pairs[i][1] for i in chunk],
                        padding=True, truncation=True, max_length=limit, padding_side="right",
                        return_tensors="pt")
        with torch.inference_mode():
            logits = model(**enc).logits.float()[:, 0]
        values = torch.sigmoid(logits) if activation == "sigmoid" else logits
        for i, value in zip(chunk, (5.0 * values).tolist(), strict=True):
            out[i] = value
    return out


_NUBIA_CARD = ModuleCard(
    title="NUBIA", emoji="❓",
    summary=("NUBIA: STS, NLI and GPT-2 features of a pair aggregated by a trained regressor and "
             "calibrated, on blindspot's cached scoring layer."),
    description="""\
NUBIA (Kane et al., 2020) on blindspot's scoring layer.

Features of each (reference, prediction) pair: ``5 x`` an STS head, the MNLI log-probabilities
(contradiction, neutral, entailment), GPT-2's mean token cross-entropy of both texts and (8
features) their word counts; a trained aggregator maps them to a raw score ``r``, calibrated
against the reference with itself (``s``): ``nubia = clip(1 - (s - r) / (|s| + 1), 0, 1)``.
Options: ``aggregator`` (required: the path of a joblib regressor; NUBIA's own are online only,
e.g. https://nubia-nn.s3.amazonaws.com/aggregators/nn_2015_2017_8_dim.joblib; the file is
unpickled, so give only files you trust), ``sts_model`` (default
``cross-encoder/stsb-roberta-large``), ``sts_activation`` ("sigmoid" or "identity"),
``nli_model`` (``roberta-large-mnli``), ``lm_model`` (``gpt2``), ``six_dim`` (a 6-feature
aggregator), ``nli_label_order``, ``batch_size``, ``device``. Several references: the mean.""",
    examples="""\
>>> import evaluate, tempfile
>>> from blindspot import tiny_models as tiny
>>> root = tempfile.mkdtemp()  # random weights: the numbers mean nothing
>>> models = dict(aggregator=tiny.tiny_nubia_aggregator(root + "/agg.joblib"),
...               sts_model=tiny.tiny_regressor(root + "/sts"),
...               nli_model=tiny.tiny_nli(root + "/nli"),
...               lm_model=tiny.tiny_causal_lm(root + "/lm"))
>>> nubia = evaluate.load("blindspot/nubia")
>>> out = nubia.compute(predictions=["The cat sat on the mat.", "Stocks fell."],
...                     references=["The cat sat on the mat.", "A dog barked."],
...                     use_aggregator=False, **models)
>>> out["nubia"][0]  # the reference itself: calibrated to 1
1.0
>>> 0 <= out["nubia"][1] <= 1, sorted(out)[:3]
(True, ['contradiction', 'grammar_hyp', 'grammar_ref'])
""",
    inputs="""\
Args:
    predictions (list of str): hypotheses.
    references (list of str or list of list of str): references.
    aggregator, sts_model, sts_activation, nli_model, lm_model, six_dim, nli_label_order,
    batch_size, device: see the description.
    use_aggregator (bool): mean over rows (default) or per-row lists.
Returns:
    nubia: in [0, 1], higher is better; semantic_relation (0-5), contradiction, irrelevancy,
    logical_agreement (percent), grammar_ref, grammar_hyp (GPT-2 cross-entropy).
""",
    citation=NUBIA_CITATION,
    sections="""\
## Metric description
NUBIA (Kane et al., 2020) extracts a semantic-similarity score, the MNLI log-probabilities and GPT-2 perplexity features of a (reference, hypothesis) pair, maps them to a score with a trained aggregator, and calibrates it against the reference scored with itself.

The module's docstring (`nubia.py`) states every option, default and choice; the scorer
(`blindspot/scorers/nubia.py`) is the computation, cached and batched by blindspot's scoring
layer, so `blindspot run --metrics nubia` judges it like any other metric.

## How to use
```python
import evaluate
nubia = evaluate.load("blindspot/nubia")  # or the path of this folder
```
See the examples in `nubia.py`; they run offline on tiny models built from configs.
""",  # noqa: E501
    requirements=("torch", "transformers", "scikit-learn", "joblib"),
)


@register_scorer
class Nubia(lm.ModelScorer):
    """NUBIA of each hypothesis against each reference (mean over references)."""

    name = "nubia"
    card = _NUBIA_CARD
    outputs = ("nubia", *FEATURES)
    default_output = "nubia"
    uses_references = "required"
    default_batch_size = 16
    reference = Reference(
        "nubia-score 0.1.5",
        differs="cannot run here: it needs fairseq, which does not import on Python 3.11, and "
                "downloads its checkpoints from S3; ours is the same computation on Hugging Face "
                "models")

    def __init__(self, aggregator: str | None = None, sts_model: str = DEFAULT_STS,
                 nli_model: str = DEFAULT_NLI, lm_model: str = DEFAULT_LM,
                 sts_activation: str = "sigmoid", six_dim: bool = False,
                 nli_label_order: str | None = None, batch_size: int = 16,
                 device: str | None = None) -> None:
        if aggregator is None:
            raise ValueError("nubia needs aggregator=<path of a joblib regressor>: NUBIA's own are "
                             "online only (https://nubia-nn.s3.amazonaws.com/aggregators/"
                             "nn_2015_2017_8_dim.joblib); see the metric's description")
        if sts_activation not in ACTIVATIONS:
            raise ValueError(f"sts_activation must be one of {', '.join(ACTIVATIONS)}, got "
                             f"{sts_activation!r}")
        super().__init__(device, aggregator=str(Path(aggregator).resolve()),
                         sts_model=str(sts_model), nli_model=str(nli_model),
                         lm_model=str(lm_model), sts_activation=sts_activation,
                         six_dim=bool(six_dim), nli_label_order=nli_label_order)
        self._batch_size = int(batch_size)

    def model_revision(self) -> str:
        return ";".join(model_revision(self.config[key])
                        for key in ("aggregator", "sts_model", "nli_model", "lm_model"))

    def grammar(self, texts: Sequence[str]) -> dict[str, float]:
        """GPT-2's mean token cross-entropy of each distinct text after its EOS token."""
        tokenizer, model = load_causal_lm(self.config["lm_model"])
        model = lm.place(model, self._device)
        unique = list(dict.fromkeys(texts))
        limit = lm.max_positions(tokenizer, model)
        head = [tokenizer.eos_token_id] if tokenizer.eos_token_id is not None else []
        sequences = [(head + ids)[:limit] for ids in lm.token_ids(tokenizer, unique)]
        sums = lm.causal_logprob_sums(model, sequences, [1] * len(sequences),
                                      lm.pad_id(tokenizer), self._batch_size)
        return {text: -total / count if count else math.nan
                for text, (total, count) in zip(unique, sums, strict=True)}

    def pair_features(self, pairs: Sequence[tuple[str, str]]
                      ) -> dict[tuple[str, str], tuple[float, list[float]]]:
        """(STS feature, MNLI log-probabilities c, n, e) of each distinct pair."""
        unique = list(dict.fromkeys(pairs))
        tokenizer, model = load_sequence_classifier(self.config["sts_model"])
        model = lm.place(model, self._device)
        sts = sts_scores(model, tokenizer, unique, self.config["sts_activation"],
                         self._batch_size)
        tokenizer, model = load_sequence_classifier(self.config["nli_model"])
        model = lm.place(model, self._device)
        indices = label_indices(model.config, self.config["nli_model"],
                                self.config["nli_label_order"])
        probs = nli_probabilities(model, tokenizer, unique, indices, batch_size=self._batch_size)
        return {pair: (s, [math.log(max(p[k], 1e-45)) for k in ("c", "n", "e")])
                for pair, s, p in zip(unique, sts, probs, strict=True)}

    def score_batch(self, batch: Sequence[ScoreInput]) -> list[dict[str, float]]:
        import numpy as np

        rows = [[(ref, item.hypothesis) for ref in item.references] for item in batch]
        live = [pair for group in rows for pair in group if pair[0] and pair[1]]
        pairs = live + [(ref, ref) for ref, _ in live]
        features = self.pair_features(pairs) if pairs else {}
        grammar = self.grammar([text for pair in live for text in pair])
        six_dim = self.config["six_dim"]
        vectors = []
        for ref, hyp in live:
            for other in (hyp, ref):  # the pair, then the reference with itself
                sts, logprobs = features[(ref, other)]
                vectors.append(feature_vector(sts, logprobs, grammar[ref], grammar[ref if
                               other == ref else hyp], ref, other, six_dim))
        raw = (load_aggregator(self.config["aggregator"]).predict(np.array(vectors)).tolist()
               if vectors else [])
        scored = {}
        for k, (ref, hyp) in enumerate(live):
            sts, logprobs = features[(ref, hyp)]
            probs = np.exp(np.array(logprobs) - np.logaddexp.reduce(logprobs))
            scored[(ref, hyp)] = {
                "nubia": calibrate(float(raw[2 * k]), float(raw[2 * k + 1])),
                "semantic_relation": min(5.0, sts), "contradiction": 100 * float(probs[0]),
                "irrelevancy": 100 * float(probs[1]), "logical_agreement": 100 * float(probs[2]),
                "grammar_ref": grammar[ref], "grammar_hyp": grammar[hyp]}
        empty = dict.fromkeys(self.outputs, 0.0)
        return [{key: fmean(scored.get(pair, empty)[key] for pair in group)
                 for key in self.outputs} for group in rows]
