"""XMoverScore (Zhao et al., 2020): reference-free MT evaluation by a cross-lingual mover's
distance between the source and the translation, plus a target-side language model.

Both texts are encoded by a multilingual encoder (``[CLS] text [SEP]``, hidden states of layer
``layer``); the source's vectors may be remapped into the target space first (``mapping="CLP"``:
times a linear projection; ``"UMD"``: less their component along a bias direction). Each text
becomes the means of its ``ngram`` consecutive vectors, each L2-normalised and of equal mass; the
earth mover's flow between the two (Euclidean costs) is solved exactly, the smallest
``dropout_rate`` share of its non-zero entries is dropped as noise, and
``xmover = 1 - sum(flow * cost)``. ``lm`` is the mean log-probability of the translation's tokens
under a causal LM (0 for a text of one token or none), and ``xmoverscore = xmover + lm_weight *
lm``. Higher is better.

Paper defaults: ``bert-base-multilingual-cased``, layer 8, bigrams, dropout 0.3, GPT-2, weight
0.1, CLP remapping. The remapping matrices are released per language pair (``mapping/layer-8/``
of the authors' repository, e.g. ``europarl-v7.de-en.8.BAM`` for CLP and ``...GBDD`` for UMD):
give one with ``remapping=`` (a NumPy file, read without pickle); without one ``mapping`` must
be ``"none"``, the default here, since no matrix ships with the project.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from blindspot.models import load_causal_lm, load_encoder, model_revision
from blindspot.scorers import _lm_utils as lm
from blindspot.scoring.card import ModuleCard
from blindspot.scoring.scorer import Reference, ScoreInput, register_scorer

XMOVERSCORE_CITATION = """@inproceedings{zhao-etal-2020-limitations,
    title = "On the Limitations of Cross-lingual Encoders as Exposed by Reference-Free Machine Translation Evaluation",
    author = "Zhao, Wei and Glava{\\v{s}}, Goran and Peyrard, Maxime and Gao, Yang and West, Robert and Eger, Steffen",
    booktitle = "Proceedings of the 58th Annual Meeting of the Association for Computational Linguistics",
    year = "2020",
    pages = "1656--1671",
}
"""  # noqa: E501 (published BibTeX, kept verbatim)

DEFAULT_MODEL = "bert-base-multilingual-cased"
DEFAULT_LM = "gpt2"
MAPPINGS = ("none", "CLP", "UMD")


def read_remapping(path: str | None, mapping: str) -> Any:
    """The remapping of ``mapping`` as a float tensor: CLP's (d, d) projection, or UMD's bias
    direction (the file's first row); None for ``"none"``."""
    import numpy as np
    import torch

    if mapping == "none":
        return None
    if not path or not Path(path).is_file():
        raise ValueError(f"mapping={mapping!r} needs remapping=<file> (the authors' "
                         f"{'.BAM' if mapping == 'CLP' else '.GBDD'} matrix for the language "
                         f"pair); got {path!r}. Use mapping='none' to score without remapping")
    try:
        array = np.load(path, allow_pickle=False)
    except ValueError as error:
        raise ValueError(f"remapping file {path!r} is not a plain NumPy array ({error})") from error
    matrix = torch.tensor(array, dtype=torch.float64)
    return matrix if mapping == "CLP" else matrix.reshape(-1, matrix.shape[-1])[0]


def remap(vectors: Any, mapping: str, remapping: Any) -> Any:
    """Source vectors moved into the target space (CLP: ``x @ W``; UMD: ``x - (x . b) b``)."""
    if mapping == "CLP":
        return vectors @ remapping
    if mapping == "UMD":
        return vectors - (vectors @ remapping).unsqueeze(-1) * remapping
    return vectors


def ngram_means(vectors: Any, ngram: int) -> Any:
    """Means of every ``ngram`` consecutive rows (all rows' mean when there are fewer)."""
    if len(vectors) <= ngram:
        return vectors.mean(dim=0, keepdim=True)
    return vectors.unfold(0, ngram, 1).mean(dim=-1)


def mover_with_dropout(source: Any, target: Any, dropout_rate: float) -> float:
    """``1 - sum(flow * cost)`` after dropping the smallest non-zero flows, between two sets of
    equal-mass vectors (normalised here)."""
    import numpy as np
    import ot
    import torch

    source = source / source.norm(dim=-1, keepdim=True)
    target = target / target.norm(dim=-1, keepdim=True)
    cost = torch.cdist(source, target, compute_mode="donot_use_mm_for_euclid_dist").numpy()
    flow = ot.emd(np.full(len(source), 1 / len(source)), np.full(len(target), 1 / len(target)),
                  cost, numItermax=1_000_000)
    nonzero = np.sort(flow[flow > 0])
    if len(nonzero):
        threshold = nonzero[max(int(len(nonzero) * dropout_rate), 1) - 1]
        flow = np.where(flow < threshold, 0.0, flow)
    return float(1.0 - (flow * cost).sum())


_XMOVERSCORE_CARD = ModuleCard(
    title="XMoverScore", emoji="❓",
    summary=("XMoverScore: a cross-lingual mover's distance between source and translation plus a "
             "target-side language model, on blindspot's cached scoring layer."),
    description="""\
XMoverScore (Zhao et al., 2020) on blindspot's scoring layer.

Reference-free MT evaluation: the source (``sources``) and the translation (``predictions``) are
encoded by a multilingual encoder (layer ``layer``), the source's vectors optionally remapped
(``mapping="CLP"``: times the released projection; ``"UMD"``: less the released bias direction;
give the file with ``remapping=``), each text becomes its ``ngram`` means, and ``xmover`` = 1 -
the earth mover's cost after the smallest ``dropout_rate`` of the flows are dropped. ``lm`` is
the translation's mean token log-probability under ``lm_model``, and ``xmoverscore = xmover +
lm_weight * lm``. Paper defaults: ``model="bert-base-multilingual-cased"``, ``layer=8``,
``ngram=2``, ``dropout_rate=0.3``, ``lm_model="gpt2"``, ``lm_weight=0.1``, CLP remapping (its
matrix per language pair is released by the authors; ``mapping="none"`` is the default here).
``lm_model=None`` leaves the LM term out (``lm`` = 0).""",
    examples="""\
>>> import evaluate
>>> xmover = evaluate.load("blindspot/xmoverscore")
>>> out = xmover.compute(predictions=["The cat sat on the mat.", "Stocks fell."],
...                      sources=["The cat sat on the mat.", "Die Katze schlief."],
...                      model="minilm", layer=6, lm_model=None, use_aggregator=False)
>>> round(out["xmover"][0], 6), out["lm"]  # identical texts: no transport cost
(1.0, [0.0, 0.0])
>>> out["xmoverscore"] == out["xmover"]
True
""",
    inputs="""\
Args:
    predictions (list of str): translations.
    sources (list of str): their sources.
    model, layer, ngram, mapping, remapping, dropout_rate, lm_model, lm_weight, batch_size,
    device: see the description.
    use_aggregator (bool): mean over rows (default) or per-row lists.
Returns:
    xmoverscore: xmover + lm_weight * lm; xmover: at most 1; lm: a mean log-probability (<= 0).
    Higher is better.
""",
    citation=XMOVERSCORE_CITATION,
    sections="""\
## Metric description
XMoverScore (Zhao et al., 2020) encodes the source and the translation with a multilingual encoder (layer 8 of mBERT), optionally remaps the source's vectors (CLP or UMD), solves the earth mover's flow between their bigram vectors, drops the 30% smallest flows, and adds 0.1 times the translation's mean token log-probability under GPT-2. Reference-free: it needs `sources`.

The module's docstring (`xmoverscore.py`) states every option, default and choice; the scorer
(`blindspot/scorers/xmoverscore.py`) is the computation, cached and batched by blindspot's scoring
layer, so `blindspot run --metrics xmoverscore` judges it like any other metric.

## How to use
```python
import evaluate
xmoverscore = evaluate.load("blindspot/xmoverscore")  # or the path of this folder
```
See the examples in `xmoverscore.py`; they run offline on tiny models built from configs.
""",  # noqa: E501
    requirements=("pot", "torch", "transformers"),
)


@register_scorer
class XMoverScore(lm.ModelScorer):
    """XMoverScore of each translation (hypothesis) against its source."""

    name = "xmoverscore"
    card = _XMOVERSCORE_CARD
    outputs = ("xmoverscore", "xmover", "lm")
    uses_references = "none"
    uses_source = "required"
    default_batch_size = 32
    reference = Reference(
        "AIPHES/ACL20-Reference-Free-MT-Evaluation score_utils_2.py (commit 2026e18)",
        differs="not measured here (its mBERT, GPT-2 and remapping matrices are not offline); its "
                "released code scores 1 / (1 + transport cost) and turns GPT-2's loss into "
                "(1 / exp(loss)) ** (1 / n), ours the paper's 1 - cost and mean log-probability; "
                "it prunes the same way (flows below the k-th smallest non-zero one dropped, "
                "k = max(1, int(dropout_rate x their count))), on the source-to-hypothesis block "
                "of a plan solved over both texts' points")

    def __init__(self, model: str = DEFAULT_MODEL, layer: int = 8, ngram: int = 2,
                 mapping: str = "none", remapping: str | None = None,
                 dropout_rate: float = 0.3, lm_model: str | None = DEFAULT_LM,
                 lm_weight: float = 0.1, batch_size: int = 32, device: str | None = None) -> None:
        if mapping not in MAPPINGS:
            raise ValueError(f"mapping must be one of {', '.join(MAPPINGS)}, got {mapping!r}")
        if int(ngram) < 1 or not 0 <= float(dropout_rate) < 1:
            raise ValueError(f"ngram must be at least 1 and dropout_rate in [0, 1); got "
                             f"ngram={ngram!r}, dropout_rate={dropout_rate!r}")
        self._remapping = read_remapping(remapping, mapping)
        super().__init__(device, model=str(model), layer=int(layer), ngram=int(ngram),
                         mapping=mapping,
                         remapping=None if remapping is None else str(Path(remapping).resolve()),
                         dropout_rate=float(dropout_rate),
                         lm_model=None if lm_model is None else str(lm_model),
                         lm_weight=float(lm_weight))
        self._batch_size = int(batch_size)

    def model_revision(self) -> str:
        parts = [model_revision(self.config["model"])]
        if self.config["lm_model"] is not None:
            parts.append(model_revision(self.config["lm_model"]))
        if self.config["remapping"] is not None:
            parts.append(model_revision(self.config["remapping"]))
        return ";".join(parts)

    def layer_vectors(self, texts: Sequence[str]) -> dict[str, Any]:
        """Each distinct text's layer-``layer`` vectors ([CLS] and [SEP] included), float64."""
        import torch

        tokenizer, model = load_encoder(self.config["model"])
        model = lm.place(model, self._device)
        layers = model.config.num_hidden_layers
        if not 0 <= self.config["layer"] <= layers:
            raise ValueError(f"layer must be between 0 and {layers} for model "
                             f"{self.config['model']!r}, got {self.config['layer']}")
        unique = list(dict.fromkeys(texts))
        limit = lm.max_positions(tokenizer, model)
        out: dict[str, Any] = {}
        for chunk in lm.length_chunks([len(t) for t in unique], self._batch_size):
            batch = [unique[i] for i in chunk]
            enc = tokenizer(batch, padding=True, truncation=True, max_length=limit,
                            return_tensors="pt")
            device = lm.model_device(model)
            with torch.inference_mode():
                hidden = model(input_ids=enc["input_ids"].to(device),
                               attention_mask=enc["attention_mask"].to(device),
                               output_hidden_states=True).hidden_states[self.config["layer"]]
            for row, text in enumerate(batch):
                length = int(enc["attention_mask"][row].sum())
                out[text] = hidden[row, :length].double().cpu()
        return out

    def lm_scores(self, texts: Sequence[str]) -> list[float]:
        """Mean log-probability of each text's tokens after its first (0 for one token)."""
        if self.config["lm_model"] is None:
            return [0.0] * len(texts)
        tokenizer, model = load_causal_lm(self.config["lm_model"])
        model = lm.place(model, self._device)
        limit = lm.max_positions(tokenizer, model)
        sequences = [ids[:limit] for ids in lm.token_ids(tokenizer, texts)]
        sums = lm.causal_logprob_sums(model, sequences, [1] * len(sequences),
                                      lm.pad_id(tokenizer), self._batch_size)
        return [total / count if count else 0.0 for total, count in sums]

    def score_batch(self, batch: Sequence[ScoreInput]) -> list[dict[str, float]]:
        sources = [item.source or "" for item in batch]
        hypotheses = [item.hypothesis for item in batch]
        vectors = self.layer_vectors(sources + hypotheses)
        mapping, ngram = self.config["mapping"], self.config["ngram"]
        language = self.lm_scores(hypotheses)
        out = []
        for source, hypothesis, lm_score in zip(sources, hypotheses, language, strict=True):
            src = ngram_means(remap(vectors[source], mapping, self._remapping), ngram)
            hyp = ngram_means(vectors[hypothesis], ngram)
            xmover = mover_with_dropout(src, hyp, self.config["dropout_rate"])
            out.append({"xmoverscore": xmover + self.config["lm_weight"] * lm_score,
                        "xmover": xmover, "lm": lm_score})
        return out
