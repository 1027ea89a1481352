"""CIDEr-D (Vedantam et al., 2015), the CIDEr of the COCO caption evaluation, written from the
paper's definition with the conventions of ``pycocoevalcap`` 1.2 (its ``Cider`` scorer, the code
behind the published numbers, is the reference it is measured against).

For n = 1..4, each text is a vector g^n of its n-gram counts times idf, idf(g) = log(N) -
log(max(1, df(g))), with df(g) the number of reference sets (rows) of a corpus that contain g and
N their number. CIDEr-D_n(c, S) = (10 / |S|) * sum over references s of exp(-(l(c) - l(s))^2 /
(2 sigma^2)) * sum_g min(g^n(c), g^n(s)) * g^n(s) / (|g^n(c)| |g^n(s)|): cosine similarity with
the candidate's weights clipped at the reference's (so repeating an n-gram gains nothing) and a
Gaussian penalty on the length difference (sigma 6; pycocoevalcap measures a text's length as its
number of bigrams, which differs from its tokens only for an empty text). CIDEr-D is the mean
over n. Tokens are COCO's (:func:`blindspot.scorers.coco.coco_tokens`: its PTB tokenizer's,
lower-cased, punctuation dropped, "34-year-old" whole), in Python: no Java at run time.

The idf corpus: the run's references (``idf_references``: the runner and the evaluate module pass
them, as for BERTScore's idf), so a row's score depends on the corpus but not on the batch. With
``idf=False``, or without a corpus, every n-gram weighs 1 (a tf cosine with CIDEr-D's clipping
and length penalty): a row's score never depends on the other rows of its batch.

This is the CIDEr-D variant (the paper's robust form), not plain CIDEr: pycocoevalcap's ``Cider``
is the same.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from typing import Any

from blindspot.scorers.coco import coco_tokens, ngram_counts
from blindspot.scoring.card import ModuleCard
from blindspot.scoring.scorer import Reference, ScoreInput, Scorer, register_scorer

_NGRAM_ORDER = 4
_SIGMA = 6.0


class DocumentFrequency:
    """df of every n-gram over a corpus of reference sets, and log of the corpus size."""

    def __init__(self, reference_sets: Sequence[Sequence[str]]) -> None:
        self.df: Counter[tuple[str, ...]] = Counter()
        for refs in reference_sets:
            self.df.update({g for ref in refs for g in ngram_counts(coco_tokens(ref), _NGRAM_ORDER)})
        self.log_size = math.log(float(len(reference_sets))) if reference_sets else 0.0

    def weight(self, ngram: tuple[str, ...]) -> float:
        return self.log_size - math.log(max(1.0, float(self.df[ngram])))


def _vectors(counts: Counter[tuple[str, ...]], df: DocumentFrequency | None
             ) -> tuple[list[dict[tuple[str, ...], float]], list[float]]:
    vectors: list[dict[tuple[str, ...], float]] = [{} for _ in range(_NGRAM_ORDER)]
    for ngram, count in counts.items():
        vectors[len(ngram) - 1][ngram] = count * (df.weight(ngram) if df is not None else 1.0)
    norms = [math.sqrt(sum(v * v for v in vec.values())) for vec in vectors]
    return vectors, norms


def _length(tokens: Sequence[str]) -> int:
    """pycocoevalcap's length of a text: its number of bigrams."""
    return max(len(tokens) - 1, 0)


def cider_d(hypothesis: str, references: Sequence[str], df: DocumentFrequency | None,
            sigma: float = _SIGMA) -> float:
    """CIDEr-D of one hypothesis against its references with the corpus idf ``df``."""
    if not references:
        return 0.0
    hyp_tokens = coco_tokens(hypothesis)
    hyp_vec, hyp_norm = _vectors(ngram_counts(hyp_tokens, _NGRAM_ORDER), df)
    total = [0.0] * _NGRAM_ORDER
    for ref in references:
        ref_tokens = coco_tokens(ref)
        ref_vec, ref_norm = _vectors(ngram_counts(ref_tokens, _NGRAM_ORDER), df)
        delta = _length(hyp_tokens) - _length(ref_tokens)
        penalty = math.exp(-(delta ** 2) / (2 * sigma ** 2))
        for n in range(_NGRAM_ORDER):
            dot = sum(min(value, ref_vec[n][g]) * ref_vec[n][g]
                      for g, value in hyp_vec[n].items() if g in ref_vec[n])
            if hyp_norm[n] and ref_norm[n]:
                total[n] += penalty * dot / (hyp_norm[n] * ref_norm[n])
    return 10.0 * sum(total) / _NGRAM_ORDER / len(references)


_CIDER_CARD = ModuleCard(
    title="CIDEr-D", emoji="🖼",
    summary=("CIDEr-D (consensus tf-idf n-gram similarity, the COCO caption evaluation's) on "
             "blindspot's cached scoring layer."),
    description="""\
CIDEr-D (Vedantam et al., 2015): consensus-based image-description evaluation, the CIDEr of the
COCO caption evaluation, written from its definition and measured against ``pycocoevalcap`` 1.2's
``Cider`` with its PTB tokenizer (docs/metrics.md gives the figure).

Tf-idf weighted n-gram (1..4) cosine similarity between a caption and each of its references,
the caption's weights clipped at the reference's, a Gaussian penalty on the length difference
(sigma 6), averaged over references and orders and multiplied by 10. The idf corpus is the
references of the call (one document per row), as in the COCO evaluation; ``idf=False`` weighs
every n-gram 1. Tokens are COCO's: its PTB tokenizer's, lower-cased, punctuation dropped
("34-year-old" one token), computed in Python (no Java; 0.5% of texts tokenize otherwise than the
jar). ``cider`` is the mean over rows; ``use_aggregator=False`` gives one score per row
(deduplicated and cached), what ``blindspot run --metrics cider`` judges.""",
    examples="""\
>>> import evaluate
>>> cider = evaluate.load("blindspot/cider")
>>> predictions = ["a man rides a horse on the beach", "two dogs play in the snow"]
>>> references = [["a man riding a horse on a beach", "a person on a horse at the beach"],
...               ["two dogs playing in the snow", "dogs run through snow"]]
>>> out = cider.compute(predictions=predictions, references=references, use_aggregator=False)
>>> [round(v, 4) for v in out["cider"]]
[2.4879, 2.1723]
>>> out = cider.compute(predictions=predictions, references=references, idf=False,
...                     use_aggregator=False)
>>> [round(v, 4) for v in out["cider"]]
[3.1576, 2.5869]
""",
    inputs="""\
Args:
    predictions (list of str): candidate captions (or any hypotheses).
    references (list of str or list of list of str): references per prediction.
    idf (bool): weight n-grams by idf over the call's references (default True).
    sigma (float): width of the length penalty, default 6.
    use_aggregator (bool): True (default): the mean over rows; False: one score per row.
Returns:
    cider: CIDEr-D, >= 0 (10 when a caption equals each of its references), higher is better.
""",
    citation="""\
@inproceedings{vedantam2015cider,
  title={{CIDEr}: Consensus-based image description evaluation},
  author={Vedantam, Ramakrishna and Lawrence Zitnick, C and Parikh, Devi},
  booktitle={Proceedings of the IEEE Conference on Computer Vision and Pattern Recognition},
  pages={4566--4575},
  year={2015}
}
""",
    sections="""\
## Metric description
CIDEr-D (Vedantam et al., 2015): consensus-based image-description evaluation, the CIDEr of the
COCO caption evaluation, written from its definition and measured against ``pycocoevalcap`` 1.2's
``Cider`` with its PTB tokenizer (docs/metrics.md gives the figure).

Tf-idf weighted n-gram (1..4) cosine similarity between a caption and each of its references,
the caption's weights clipped at the reference's, a Gaussian penalty on the length difference
(sigma 6), averaged over references and orders and multiplied by 10. The idf corpus is the
references of the call (one document per row), as in the COCO evaluation; ``idf=False`` weighs
every n-gram 1. Tokens are COCO's: its PTB tokenizer's, lower-cased, punctuation dropped
("34-year-old" one token), computed in Python (no Java; 0.5% of texts tokenize otherwise than the
jar). ``cider`` is the mean over rows; ``use_aggregator=False`` gives one score per row
(deduplicated and cached), what ``blindspot run --metrics cider`` judges.

Offline after `make env`: `evaluate.load("blindspot/cider")`; `blindspot run --data demo --metrics cider` judges the
per-row scores. The full list of metrics the papers examine, with what is left out and why:
`docs/metrics.md`.
""",  # noqa: E501
)


@register_scorer
class Cider(Scorer):
    """CIDEr-D, >= 0 (10 for a hypothesis equal to each of its references)."""

    name = "cider"
    card = _CIDER_CARD
    outputs = ("cider",)
    model_option = None
    kind = "lexical"
    supports_idf = True
    uses_references = "required"
    default_batch_size = 256
    #: 2: COCO's PTB tokens (were lower-cased words and punctuation)
    version = "2"
    reference = Reference("pycocoevalcap 1.2 (Cider; PTBTokenizer, Java)", max_abs_diff=0.01,
                          rows=200, differs="COCO's tokens in Python, no Java: 0.5% of texts "
                          "tokenize otherwise than the jar; rows whose texts tokenize alike score "
                          "the same to 1e-12")

    def __init__(self, idf: bool = True, idf_references: Sequence[Any] | None = None,
                 sigma: float = _SIGMA) -> None:
        if not isinstance(idf, bool):
            raise ValueError(f"cider option idf must be True or False, got {idf!r}")
        if isinstance(sigma, bool) or not isinstance(sigma, (int, float)) or sigma <= 0:
            raise ValueError(f"cider option sigma must be a number > 0, got {sigma!r}")
        corpus = ([[r] if isinstance(r, str) else list(r) for r in idf_references]
                  if idf_references is not None else None)
        super().__init__(idf=idf, idf_references=corpus, sigma=float(sigma))
        self._df = DocumentFrequency(corpus) if idf and corpus is not None else None

    def score_batch(self, batch: Sequence[ScoreInput]) -> list[dict[str, float]]:
        return [{"cider": cider_d(item.hypothesis, item.references, self._df,
                                  self.config["sigma"])}
                for item in batch]
