"""SUPERT (Gao et al., 2020): a summary against a pseudo-reference of its document's salient
sentences, matched token by token with a sentence-BERT encoder.

The pseudo-reference is the document's first ``pseudo_ref_sentences`` sentences (position is
SUPERT's salience signal: ``top15`` in its release and in SummEval). Every sentence of the
pseudo-reference and of the summary is encoded on its own; the last layer's token vectors are
kept, less special tokens and stop words. Recall is the mean over pseudo-reference tokens of
their best cosine with a summary token, precision the same the other way, and SUPERT is their
harmonic mean (F1; ``sim_metric`` picks recall or precision instead). Higher is better.
Reference-free: it needs the source document. A summary with no token left scores NaN.

Choices, stated:

* ``model``: default ``sentence-transformers/bert-large-nli-stsb-mean-tokens``, SUPERT's
  encoder; offline, ``minilm`` (all-MiniLM-L6-v2, also a sentence-BERT model).
* Stop words: NLTK's English list, as SUPERT's code removes (``stop_words="nltk"``, the list
  written out in :mod:`blindspot.scorers._stop_words`, since NLTK's corpus cannot be fetched
  offline); ``"spacy"`` is spaCy's list, ``stop_words=[...]`` any list, ``[]`` none. Tokens are
  compared lower-cased, as SUPERT does.
* Sentences come from NLTK's punkt (its English tables ship with the install), as SUPERT's.
* The authors' code (yg211/acl20-ref-free-eval) does not run here: it needs their fork of
  sentence-transformers (``encode(..., token_vecs=True)``), which no registry ships; this module
  follows its facts (the above, and the greedy cosine matching of its ``get_sbert_score``).
* One source document per row, so one pseudo-reference (SUPERT averages over the documents of a
  multi-document topic).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from blindspot.models import load_encoder
from blindspot.scorers import _lm_utils as lm
from blindspot.scorers._stop_words import NLTK_ENGLISH, spacy_english
from blindspot.scorers.unieval import split_sentences
from blindspot.scoring.card import ModuleCard
from blindspot.scoring.scorer import Reference, ScoreInput, register_scorer

SUPERT_CITATION = """@inproceedings{gao-etal-2020-supert,
    title = "{SUPERT}: Towards New Frontiers in Unsupervised Evaluation Metrics for Multi-Document Summarization",
    author = "Gao, Yang and Zhao, Wei and Eger, Steffen",
    booktitle = "Proceedings of the 58th Annual Meeting of the Association for Computational Linguistics",
    year = "2020",
    pages = "1347--1354",
}
"""  # noqa: E501 (published BibTeX, kept verbatim)

DEFAULT_MODEL = "sentence-transformers/bert-large-nli-stsb-mean-tokens"
SIM_METRICS = ("f1", "recall", "precision")
#: the stop-word lists a name gives
STOP_LISTS = ("nltk", "spacy")


def token_vectors(model: Any, tokenizer: Any, sentences: Sequence[str], stops: frozenset[str],
                  batch_size: int = 32) -> dict[str, Any]:
    """Each distinct sentence's last-layer token vectors (float64, L2-normalised rows), less
    special tokens and stop words."""
    import torch

    unique = list(dict.fromkeys(sentences))
    out: dict[str, Any] = {}
    limit = lm.max_positions(tokenizer, model)
    device = lm.model_device(model)
    for chunk in lm.length_chunks([len(s) for s in unique], batch_size):
        texts = [unique[i] for i in chunk]
        enc = tokenizer(texts, padding=True, truncation=True, max_length=limit,
                        return_tensors="pt", return_special_tokens_mask=True)
        with torch.inference_mode():
            hidden = model(input_ids=enc["input_ids"].to(device),
                           attention_mask=enc["attention_mask"].to(device))[0].double().cpu()
        for row, text in enumerate(texts):
            tokens = tokenizer.convert_ids_to_tokens(enc["input_ids"][row].tolist())
            keep = [p for p, token in enumerate(tokens)
                    if enc["attention_mask"][row][p] and not enc["special_tokens_mask"][row][p]
                    and token.lower() not in stops]
            vectors = hidden[row, keep]
            out[text] = vectors / vectors.norm(dim=-1, keepdim=True).clamp_min(1e-12)
    return out


def greedy_match(reference: Any, summary: Any) -> tuple[float, float, float]:
    """(recall, precision, F1) of greedy cosine matching between two sets of unit vectors."""
    similarity = reference @ summary.T
    recall = float(similarity.max(dim=1).values.mean())
    precision = float(similarity.max(dim=0).values.mean())
    total = recall + precision
    return recall, precision, (2 * recall * precision / total if total else 0.0)


_SUPERT_CARD = ModuleCard(
    title="SUPERT", emoji="❓",
    summary=("SUPERT: a summary against a pseudo-reference of its document's first sentences, "
             "matched with sentence-BERT token vectors, on blindspot's cached scoring layer."),
    description="""\
SUPERT (Gao et al., 2020) on blindspot's scoring layer.

A pseudo-reference is built from the first ``pseudo_ref_sentences`` (15) sentences of the
document (``sources``); every sentence of it and of the summary (``predictions``) is encoded on
its own by a sentence-BERT encoder, special tokens and stop words are dropped, and SUPERT is the
F1 of greedy cosine matching between the two sets of token vectors (``sim_metric="recall"`` or
``"precision"`` instead). Higher is better. Options: ``model`` (default
``sentence-transformers/bert-large-nli-stsb-mean-tokens``; offline ``"minilm"``),
``pseudo_ref_sentences``, ``sim_metric``, ``stop_words`` ("nltk", the default: NLTK's English
list, as SUPERT's code; "spacy": spaCy's; or a list of words), ``batch_size``, ``device``.
Sentences are NLTK punkt's, as SUPERT's. A summary with no token left scores NaN.""",
    examples="""\
>>> import evaluate
>>> supert = evaluate.load("blindspot/supert")
>>> document = "A fire broke out at a factory. Two hundred homes were evacuated."
>>> out = supert.compute(predictions=[document, "Prices of wheat rose in March."],
...                      sources=[document, document], model="minilm",
...                      use_aggregator=False)
>>> round(out["supert"][0], 6)  # the summary is the whole pseudo-reference
1.0
>>> out["supert"][1] < out["supert"][0]
True
""",
    inputs="""\
Args:
    predictions (list of str): summaries.
    sources (list of str): their documents.
    model, pseudo_ref_sentences, sim_metric, stop_words, batch_size, device: see the description.
    use_aggregator (bool): mean over rows (default) or per-row lists.
Returns:
    supert: cosine-based F1 (recall or precision), at most 1, higher is better.
""",
    citation=SUPERT_CITATION,
    sections="""\
## Metric description
SUPERT (Gao et al., 2020) builds a pseudo-reference from the document's first 15 sentences and scores the summary by greedy cosine matching (F1) of sentence-BERT token vectors, stop words left out. Reference-free: it needs `sources`.

The module's docstring (`supert.py`) states every option, default and choice; the scorer
(`blindspot/scorers/supert.py`) is the computation, cached and batched by blindspot's scoring
layer, so `blindspot run --metrics supert` judges it like any other metric.

## How to use
```python
import evaluate
supert = evaluate.load("blindspot/supert")  # or the path of this folder
```
See the examples in `supert.py`; they run offline on tiny models built from configs.
""",  # noqa: E501
    requirements=("torch", "transformers", "spacy"),
)


@register_scorer
class Supert(lm.ModelScorer):
    """SUPERT of each summary (hypothesis) against its document (source)."""

    name = "supert"
    card = _SUPERT_CARD
    outputs = ("supert",)
    uses_references = "none"
    uses_source = "required"
    default_batch_size = 16
    version = "2"
    reference = Reference(
        "yg211/acl20-ref-free-eval ref_free_metrics/supert.py (commit f283ce2)",
        differs="not run here: it needs the authors' fork of sentence-transformers "
                "(encode(..., token_vecs=True)), which no registry ships; ours follows its "
                "code's facts (NLTK sentences and stop words, the first 15 sentences, greedy "
                "cosine F1)")

    def __init__(self, model: str = DEFAULT_MODEL, pseudo_ref_sentences: int = 15,
                 sim_metric: str = "f1", stop_words: str | Iterable[str] = "nltk",
                 batch_size: int = 32, device: str | None = None) -> None:
        if sim_metric not in SIM_METRICS:
            raise ValueError(f"sim_metric must be one of {', '.join(SIM_METRICS)}, got "
                             f"{sim_metric!r}")
        if int(pseudo_ref_sentences) < 1:
            raise ValueError(f"pseudo_ref_sentences must be at least 1, got "
                             f"{pseudo_ref_sentences!r}")
        if isinstance(stop_words, str):
            if stop_words not in STOP_LISTS:
                raise ValueError(f"stop_words must be one of {', '.join(STOP_LISTS)} or a list of "
                                 f"words, got {stop_words!r}")
            stops: str | list[str] = stop_words
            self._stops = NLTK_ENGLISH if stop_words == "nltk" else spacy_english()
        else:
            stops = sorted({str(word).lower() for word in stop_words})
            self._stops = frozenset(stops)
        super().__init__(device, model=str(model), pseudo_ref_sentences=int(pseudo_ref_sentences),
                         sim_metric=sim_metric, stop_words=stops)
        self._batch_size = int(batch_size)

    def score_batch(self, batch: Sequence[ScoreInput]) -> list[dict[str, float]]:
        import torch

        documents = split_sentences([item.source or "" for item in batch], "nltk")
        summaries = split_sentences([item.hypothesis for item in batch], "nltk")
        pseudo = [doc[: self.config["pseudo_ref_sentences"]] for doc in documents]
        tokenizer, model = load_encoder(self.config["model"])
        model = lm.place(model, self._device)
        vectors = token_vectors(model, tokenizer,
                                [s for group in (*pseudo, *summaries) for s in group],
                                self._stops, self._batch_size)
        which = SIM_METRICS.index(self.config["sim_metric"])
        order = (2, 0, 1)[which]  # greedy_match returns (recall, precision, f1)
        out = []
        for reference, summary in zip(pseudo, summaries, strict=True):
            ref = torch.cat([vectors[s] for s in reference])
            hyp = torch.cat([vectors[s] for s in summary])
            score = greedy_match(ref, hyp)[order] if len(ref) and len(hyp) else float("nan")
            out.append({"supert": score})
        return out
