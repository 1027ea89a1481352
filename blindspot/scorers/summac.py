"""SummaC-ZS (Laban et al., 2022): zero-shot NLI consistency of a summary with its document.

The document and the summary are cut into chunks (sentences by default); an NLI model scores
every (document chunk, summary chunk) pair, giving an image of entailment and contradiction
probabilities. For each summary chunk, ``op1`` (max) over the document chunks of the entailment
and of the contradiction probabilities; the chunk's score is ``e - c`` (``use_ent``/``use_con``
pick ``e`` or ``1 - c`` alone); the summary's score is ``op2`` (mean) over its chunks. Higher is
more consistent; in [-1, 1] with both terms. Reference-free: it needs the source.

Choices, stated:

* ``model``: default NLI-R (``ynie/roberta-large-snli_mnli_fever_anli_R1_R2_R3-nli``), the model
  MENLI ran SummaC-ZS with; SummaC's own names are accepted (``"vitc"``, the paper's best
  zero-shot model ``tals/albert-xlarge-vitaminc-mnli``; ``"mnli"``, ``"anli"``...), with the label
  order SummaC states for each; any other checkpoint reads it as MENLI does
  (:func:`blindspot.scorers.menli.label_indices`).
* ``granularity``: ``"sentence"`` (default, MENLI's setting), ``"paragraph"`` (SummaC-ZS's own
  default), ``"2sents"``, ``"mixed"``, ``"document"``, or ``"doc-summary"`` with two of them
  (``"paragraph-sentence"``). As SummaC, chunks of 10 characters or fewer are dropped and at
  most ``max_doc_sents`` (100) document chunks are used; a side with no chunk scores 0.
* Sentences come from NLTK's punkt (its English tables ship with the install), as SummaC's.
  Pairs longer than the model's limit are cut longest-first (SummaC cuts the premise only, at
  500 tokens).
* The ``summac`` PyPI package (0.0.4) is not used: it pins ``huggingface-hub<=0.17`` (the
  project needs ``>=0.34``) and takes only the model names of its table (no local folder).
  Installed without its dependencies it runs here: with a local model entered in its table, its
  ``SummaCZS`` gives our scores (``tests/test_reference_models.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from statistics import fmean
from typing import Any

from blindspot.models import load_sequence_classifier, model_revision
from blindspot.scorers.menli import NLI_R, Probabilities, label_indices, nli_probabilities
from blindspot.scorers.unieval import split_sentences
from blindspot.scoring.card import ModuleCard
from blindspot.scoring.scorer import Reference, ScoreInput, Scorer, register_scorer

SUMMAC_CITATION = """@article{laban-etal-2022-summac,
    title = "{S}umma{C}: Re-Visiting {NLI}-based Models for Inconsistency Detection in Summarization",
    author = "Laban, Philippe and Schnabel, Tobias and Bennett, Paul N. and Hearst, Marti A.",
    journal = "Transactions of the Association for Computational Linguistics",
    volume = "10",
    year = "2022",
    pages = "163--177",
}
"""

#: SummaC's model names, their checkpoints and label orders (e = entailment, n = neutral,
#: c = contradiction), as SummaC states them
SUMMAC_MODELS: dict[str, tuple[str, str]] = {
    "snli-base": ("boychaboy/SNLI_roberta-base", "e,n,c"),
    "snli-large": ("boychaboy/SNLI_roberta-large", "e,n,c"),
    "mnli-base": ("microsoft/deberta-base-mnli", "c,n,e"),
    "mnli": ("roberta-large-mnli", "c,n,e"),
    "anli": (NLI_R, "e,n,c"),
    "vitc-base": ("tals/albert-base-vitaminc-mnli", "e,c,n"),
    "vitc": ("tals/albert-xlarge-vitaminc-mnli", "e,c,n"),
    "vitc-only": ("tals/albert-xlarge-vitaminc", "e,c,n"),
}
GRANULARITIES = ("sentence", "paragraph", "2sents", "mixed", "document")
OPERATORS = ("max", "mean", "min")
#: SummaC drops chunks this short or shorter (characters)
MIN_CHUNK_CHARS = 10

_REDUCE: dict[str, Callable[[Sequence[float]], float]] = {"max": max, "min": min, "mean": fmean}


def _long_enough(chunks: Sequence[str]) -> list[str]:
    return [chunk for chunk in chunks if len(chunk) > MIN_CHUNK_CHARS]


def paragraphs(text: str) -> list[str]:
    """SummaC's paragraphs: blocks between blank lines, else lines."""
    parts = text.split("\n\n") if "\n\n" in text else text.split("\n")
    return _long_enough([part.strip() for part in parts])


def split_chunks(texts: Sequence[str], granularity: str) -> list[list[str]]:
    """Each text's chunks at ``granularity`` (see the module docstring)."""
    if granularity == "document":
        return [[text] for text in texts]
    if granularity == "paragraph":
        return [paragraphs(text) for text in texts]
    sentences = [_long_enough(s) for s in split_sentences(texts, "nltk")]
    if granularity == "sentence":
        return sentences
    if granularity == "2sents":
        return [[" ".join(s[i: i + 2]) for i in range(len(s))] for s in sentences]
    if granularity == "mixed":
        return [s + paragraphs(text) for s, text in zip(sentences, texts, strict=True)]
    raise ValueError(f"granularity must be one of {', '.join(GRANULARITIES)} (or two joined by "
                     f"'-'), got {granularity!r}")


def parse_granularity(granularity: str) -> tuple[str, str]:
    """(document granularity, summary granularity) of ``"sentence"`` or ``"paragraph-sentence"``."""
    parts = str(granularity).split("-")
    if len(parts) > 2 or any(part not in GRANULARITIES for part in parts):
        raise ValueError(f"granularity must be one of {', '.join(GRANULARITIES)} or two of them "
                         f"joined by '-' (document-summary), got {granularity!r}")
    return parts[0], parts[-1]


def image_score(image: Sequence[Sequence[Probabilities]], op1: str = "max", op2: str = "mean",
                use_ent: bool = True, use_con: bool = True) -> float:
    """SummaC-ZS's score of one image: ``image[i][j]`` holds the probabilities of document chunk
    ``i`` against summary chunk ``j``; 0 for an empty image."""
    if not image or not image[0]:
        return 0.0
    reduce_doc, reduce_summary = _REDUCE[op1], _REDUCE[op2]
    per_chunk = []
    for j in range(len(image[0])):
        entail = reduce_doc([row[j]["e"] for row in image])
        contradict = reduce_doc([row[j]["c"] for row in image])
        if use_ent and use_con:
            per_chunk.append(entail - contradict)
        elif use_ent:
            per_chunk.append(entail)
        else:
            per_chunk.append(1.0 - contradict)
    return float(reduce_summary(per_chunk))


_SUMMAC_CARD = ModuleCard(
    title="SummaC-ZS", emoji="❓",
    summary=("SummaC-ZS zero-shot NLI consistency of a summary with its document, on any NLI "
             "model, on blindspot's cached scoring layer."),
    description="""\
SummaC-ZS (Laban et al., 2022) on blindspot's scoring layer.

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
side with no chunk scores 0.""",
    examples="""\
>>> import evaluate, tempfile
>>> from blindspot.tiny_models import tiny_nli
>>> folder = tiny_nli(tempfile.mkdtemp())  # random weights: the numbers mean nothing
>>> summac = evaluate.load("blindspot/summac")
>>> out = summac.compute(predictions=["The cat sat on the mat.", "It rained."],
...                      sources=["A cat sat on the mat all day. It purred loudly.",
...                               "Short."], model=folder, use_aggregator=False)
>>> -1 <= out["summac"][0] <= 1, out["summac"][1]  # "Short." has no chunk: 0
(True, 0.0)
""",
    inputs="""\
Args:
    predictions (list of str): summaries.
    sources (list of str): their documents.
    model, granularity, op1, op2, use_ent, use_con, max_doc_sents, label_order, batch_size:
        see the description.
    use_aggregator (bool): mean over rows (default) or per-row lists.
Returns:
    summac: in [-1, 1] (with use_ent and use_con), higher is more consistent.
""",
    citation=SUMMAC_CITATION,
    sections="""\
## Metric description
SummaC-ZS (Laban et al., 2022) cuts the document and the summary into sentences, scores every (document sentence, summary sentence) pair with an NLI model, takes for each summary sentence the highest entailment minus the highest contradiction probability over the document, and averages over the summary's sentences. Reference-free: it needs `sources`.

The module's docstring (`summac.py`) states every option, default and choice; the scorer
(`blindspot/scorers/summac.py`) is the computation, cached and batched by blindspot's scoring
layer, so `blindspot run --metrics summac` judges it like any other metric.

## How to use
```python
import evaluate
summac = evaluate.load("blindspot/summac")  # or the path of this folder
```
See the examples in `summac.py`; they run offline on tiny models built from configs.
""",  # noqa: E501
    requirements=("torch", "transformers", "spacy"),
)


@register_scorer
class SummaC(Scorer):
    """SummaC-ZS of each summary (hypothesis) against its document (source)."""

    name = "summac"
    card = _SUMMAC_CARD
    outputs = ("summac",)
    uses_references = "none"
    uses_source = "required"
    default_batch_size = 16
    version = "2"
    reference = Reference(
        "summac 0.0.4 (SummaCZS, granularity='sentence'), run beside ours on a tiny NLI model",
        max_abs_diff=1e-6, rows=3,
        differs="default granularity 'sentence' and model NLI-R, MENLI's setting (SummaC's own: "
                "'paragraph', 'mnli')")

    def __init__(self, model: str = NLI_R, granularity: str = "sentence", op1: str = "max",
                 op2: str = "mean", use_ent: bool = True, use_con: bool = True,
                 max_doc_sents: int = 100, label_order: str | None = None,
                 batch_size: int = 16) -> None:
        for name, value in (("op1", op1), ("op2", op2)):
            if value not in OPERATORS:
                raise ValueError(f"{name} must be one of {', '.join(OPERATORS)}, got {value!r}")
        if not (use_ent or use_con):
            raise ValueError("use_ent and use_con cannot both be false: nothing would be scored")
        if int(max_doc_sents) < 1:
            raise ValueError(f"max_doc_sents must be at least 1, got {max_doc_sents!r}")
        parse_granularity(granularity)
        checkpoint, known_order = SUMMAC_MODELS.get(str(model), (str(model), None))
        super().__init__(model=checkpoint, granularity=str(granularity), op1=op1, op2=op2,
                         use_ent=bool(use_ent), use_con=bool(use_con),
                         max_doc_sents=int(max_doc_sents),
                         label_order=label_order or known_order)
        self._batch_size = int(batch_size)

    def model_revision(self) -> str:
        return model_revision(self.config["model"])

    def chunks(self, batch: Sequence[ScoreInput]) -> list[tuple[list[str], list[str]]]:
        """(document chunks, summary chunks) of each row."""
        doc_level, summary_level = parse_granularity(self.config["granularity"])
        documents = split_chunks([item.source or "" for item in batch], doc_level)
        summaries = split_chunks([item.hypothesis for item in batch], summary_level)
        limit = self.config["max_doc_sents"]
        return [(doc[:limit], summary) for doc, summary in zip(documents, summaries, strict=True)]

    def score_batch(self, batch: Sequence[ScoreInput]) -> list[dict[str, float]]:
        rows = self.chunks(batch)
        pairs = list(dict.fromkeys((d, s) for doc, summary in rows for d in doc for s in summary))
        probabilities: dict[tuple[str, str], Probabilities] = {}
        if pairs:
            tokenizer, model = load_sequence_classifier(self.config["model"])
            indices = label_indices(model.config, self.config["model"], self.config["label_order"])
            probabilities = dict(zip(pairs, nli_probabilities(
                model, tokenizer, pairs, indices, batch_size=self._batch_size), strict=True))
        options: dict[str, Any] = {key: self.config[key]
                                   for key in ("op1", "op2", "use_ent", "use_con")}
        return [{"summac": image_score([[probabilities[(d, s)] for s in summary] for d in doc],
                                       **options)}
                for doc, summary in rows]
