"""UniEval for summarization (Zhong et al., 2022): evaluation as boolean question answering.

A T5 model trained by UniEval (paper default ``MingZhong/unieval-sum``) reads a question about the
summary, e.g. ``question: Is this a coherent summary to the document? </s> summary: ... </s>
document: ...``; the score of a dimension is P(Yes) / (P(Yes) + P(No)) at the first decoder step.
Four dimensions, as UniEval's summarization evaluator asks them:

- coherence: summary against the document, whole summary;
- consistency: each summary sentence as a claim against the document, averaged over sentences;
- fluency: each summary sentence as a paragraph on its own, averaged over sentences;
- relevance: summary against the reference (mean over the row's references).

``overall`` is the mean of the four. Choices written down here:

- Sentences are split with spaCy's en_core_web_sm (the project's shared, cached parse), since
  UniEval's NLTK punkt data cannot be fetched offline; ``sentence_splitter="nltk"`` uses
  ``nltk.sent_tokenize`` where punkt is installed. An empty summary counts as one empty sentence.
- ``relevance_against="source"`` asks the relevance question against the document instead: the
  blind-spots paper (He et al., 2023, footnote 3) ran UniEval-relevance without the reference.
- Inputs are truncated to ``max_length`` tokens (UniEval: 1024).
- ``precision`` and ``token_budget``: on a GPU, or whenever a precision is asked, the prompts go
  in token batches on the device with one host synchronisation per batch (``docs/gpu.md``); a
  CPU run with no precision asked computes as before.
"""

from __future__ import annotations

from collections.abc import Sequence
from statistics import fmean
from typing import Any

from blindspot.models import load_seq2seq_lm
from blindspot.parsing import get_parser
from blindspot.scorers import _device
from blindspot.scorers import _lm_utils as lm
from blindspot.scorers._lm_utils import length_chunks
from blindspot.scoring.scorer import ScoreInput, register_scorer

DEFAULT_MODEL = "MingZhong/unieval-sum"
DIMENSIONS = ("coherence", "consistency", "fluency", "relevance")


def unieval_question(dimension: str, output: str, document: str = "", reference: str = "") -> str:
    """UniEval's summarization question for one dimension (its exact wording)."""
    if dimension == "coherence":
        return ("question: Is this a coherent summary to the document? </s> summary: " + output
                + " </s> document: " + document)
    if dimension == "consistency":
        return ("question: Is this claim consistent with the document? </s> claim: " + output
                + " </s> document: " + document)
    if dimension == "fluency":
        return "question: Is this a fluent paragraph? </s> paragraph: " + output
    if dimension == "relevance":
        return ("question: Is this summary relevant to the reference? </s> summary: " + output
                + " </s> reference: " + reference)
    raise ValueError(f"unknown UniEval dimension {dimension!r}; valid: {', '.join(DIMENSIONS)}")


def split_sentences(texts: Sequence[str], splitter: str = "spacy") -> list[list[str]]:
    """Each text's sentences (at least one: an empty text is one empty sentence)."""
    if splitter == "spacy":
        parsed = get_parser().parse_many(list(texts))
        found = [[s for s in p.sentence_texts if s] for p in parsed]
    elif splitter == "nltk":
        import nltk  # lazy: importing nltk takes seconds

        found = [nltk.sent_tokenize(t) for t in texts]
    else:
        raise ValueError(f"sentence_splitter must be 'spacy' or 'nltk', got {splitter!r}")
    return [sents or [text] for sents, text in zip(found, texts, strict=True)]


def first_token_id(tokenizer: Any, word: str) -> int:
    """The id of the first token of ``word`` without special tokens ("Yes" -> "▁Yes" in T5)."""
    ids = tokenizer(word, add_special_tokens=False).input_ids
    if not ids:
        raise ValueError(f"the tokenizer has no token for {word!r}")
    return int(ids[0])


def yes_probability(model: Any, tokenizer: Any, prompts: Sequence[str], *, max_length: int = 1024,
                    batch_size: int = 16) -> list[float]:
    """P(Yes) / (P(Yes) + P(No)) of the first decoder step for each prompt.

    Equal to the ratio of the two softmax probabilities; computed as a sigmoid of the logit
    difference, which is the same number without the vocabulary-wide normalisation.
    """
    import torch

    yes, no = first_token_id(tokenizer, "Yes"), first_token_id(tokenizer, "No")
    start = model.config.decoder_start_token_id
    scores = [0.0] * len(prompts)
    for chunk in length_chunks([len(p) for p in prompts], batch_size):
        enc = tokenizer([prompts[i] for i in chunk], padding=True, truncation=True,
                        max_length=max_length, padding_side="right", return_tensors="pt")
        decoder_ids = torch.full((len(chunk), 1), start, dtype=torch.long)
        with torch.inference_mode():
            logits = model(input_ids=enc.input_ids, attention_mask=enc.attention_mask,
                           decoder_input_ids=decoder_ids).logits[:, 0, :].float()
        probs = torch.sigmoid(logits[:, yes] - logits[:, no])
        for i, p in zip(chunk, probs.tolist(), strict=True):
            scores[i] = p
    return scores


def yes_probability_on_device(model: Any, tokenizer: Any, prompts: Sequence[str], *,
                              max_length: int, budget: int, precision: str, metric: str
                              ) -> list[float]:
    """:func:`yes_probability` in token batches on the device (the first decoder step's Yes and
    No logits only, one host synchronisation per batch; :mod:`blindspot.scorers._device`)."""
    import torch

    yes, no = first_token_id(tokenizer, "Yes"), first_token_id(tokenizer, "No")
    start = model.config.decoder_start_token_id
    encodings = ([{"input_ids": list(ids)} for ids in tokenizer(
        list(prompts), truncation=True, max_length=max_length)["input_ids"]] if prompts else [])

    def answer(inputs: dict[str, Any]) -> Any:
        rows = inputs["input_ids"].shape[0]
        decoder_ids = torch.full((rows, 1), start, dtype=torch.long, device=model.device)
        logits = model(**inputs, decoder_input_ids=decoder_ids, use_cache=False).logits[:, 0]
        return torch.sigmoid(logits[:, yes].float() - logits[:, no].float())

    return _device.encoded_rows_on_device(model, answer, encodings, lm.pad_id(tokenizer), budget,
                                          precision, metric)


@register_scorer
class UniEval(lm.ModelScorer):
    """UniEval summarization scores; options: ``model``, ``max_length``, ``relevance_against``
    ("reference" or "source"), ``sentence_splitter`` ("spacy" or "nltk"), ``precision``,
    ``token_budget``, ``device``."""

    name = "unieval"
    outputs = ("coherence", "consistency", "fluency", "relevance", "overall")
    default_output = "overall"
    uses_references = "optional"  # required unless relevance_against="source" (set per instance)
    uses_source = "required"
    default_batch_size = 8

    def __init__(self, model: str = DEFAULT_MODEL, max_length: int = 1024,
                 relevance_against: str = "reference", sentence_splitter: str = "spacy",
                 device: str | None = None, precision: str | None = None,
                 token_budget: int | None = None) -> None:
        if relevance_against not in ("reference", "source"):
            raise ValueError(f"relevance_against must be 'reference' or 'source', got "
                             f"{relevance_against!r}")
        if sentence_splitter not in ("spacy", "nltk"):
            raise ValueError(f"sentence_splitter must be 'spacy' or 'nltk', got "
                             f"{sentence_splitter!r}")
        super().__init__(device, precision, token_budget, model=str(model),
                         max_length=int(max_length),
                         relevance_against=relevance_against,
                         sentence_splitter=sentence_splitter)
        self.uses_references = "required" if relevance_against == "reference" else "none"

    def questions(self, item: ScoreInput, sentences: list[str]) -> list[tuple[str, str]]:
        """(dimension, prompt) pairs for one row; a dimension's score is the mean of its prompts."""
        document = item.source or ""
        against = item.references if self.config["relevance_against"] == "reference" else (
            document,)
        pairs = [("coherence", unieval_question("coherence", item.hypothesis, document))]
        pairs += [("consistency", unieval_question("consistency", s, document)) for s in sentences]
        pairs += [("fluency", unieval_question("fluency", s)) for s in sentences]
        pairs += [("relevance", unieval_question("relevance", item.hypothesis, reference=r))
                  for r in against]
        return pairs

    def score_batch(self, batch: Sequence[ScoreInput]) -> list[dict[str, float]]:
        sentences = split_sentences([item.hypothesis for item in batch],
                                    self.config["sentence_splitter"])
        per_row = [self.questions(item, sents) for item, sents in zip(batch, sentences, strict=True)]
        prompts = list(dict.fromkeys(prompt for pairs in per_row for _, prompt in pairs))
        probability = dict(zip(prompts, self.yes_probabilities(prompts), strict=True))
        return [self.row_scores(pairs, probability) for pairs in per_row]

    def yes_probabilities(self, prompts: Sequence[str]) -> list[float]:
        """P(Yes) of each prompt, on the device path when :meth:`on_device_path`."""
        tokenizer, model = load_seq2seq_lm(self.config["model"], self.weight_dtype())
        if not self.on_device_path():
            return yes_probability(model, tokenizer, prompts, max_length=self.config["max_length"])
        return yes_probability_on_device(
            lm.place(model, self._device), tokenizer, prompts,
            max_length=self.config["max_length"], budget=self.token_budget(),
            precision=self.precision(), metric=self.name)

    @staticmethod
    def row_scores(pairs: list[tuple[str, str]], probability: dict[str, float]
                   ) -> dict[str, float]:
        """Per-dimension means of the prompts' P(Yes), and ``overall`` = mean of the four."""
        scores = {dim: fmean(probability[p] for d, p in pairs if d == dim) for dim in DIMENSIONS}
        scores["overall"] = fmean(scores[dim] for dim in DIMENSIONS)
        return scores
