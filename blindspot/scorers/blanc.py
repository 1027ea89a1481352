"""BLANC (Vasilyev et al., 2020): how much a summary helps a masked LM fill in its document;
BLANC-help by default, BLANC-tune with ``mode="tune"``.

Each document sentence is tokenized and masked several times: masking ``m`` (0 <= m < ``gap``)
masks the tokens at positions ``p`` with ``(p % gap - m) % gap < gap_mask`` that are long
enough (a whole word of ``min_token_length_normal`` characters or more, the first piece of a
split word of ``min_token_length_lead``, a continuation piece of ``min_token_length_followup``).
Each masked sentence is read twice by the masked LM, after the summary and after a filler of as
many ``filler_token`` tokens: ``[CLS] help sep sentence [SEP]``. Each masked token is counted in
S[base correct][helped correct] (correct = the argmax token is the original); BLANC is
``(S01 - S10) / (S00 + S01 + S10 + S11)`` (``measure="relative"``) or ``S01 / (S00 + S01 + S11)``
(``"improve"``); 0 when nothing was masked. Higher is better; in [-1, 1]. Reference-free.

Choices, stated:

* Defaults are the ``blanc`` package's (0.3.4): ``bert-base-uncased``, gap 2, gap_mask 1, minimum
  lengths 4 / 2 / 100, filler ".", no separator. The paper's own figures used ``gap=6``.
* Texts are NFKD-normalised and split into sentences by NLTK's punkt (its English tables ship
  with the install), as the package does.
* An input longer than the model's limit first cuts the sentence (down to
  ``len_sent_allow_cut`` tokens), then drops the summary's last sentences, then cuts the last
  one kept by tokens, as the package does.
* ``mode="tune"`` is BLANC-tune: a copy of the model is fine-tuned on the summary (its tokens in
  chunks of ``finetune_chunk_size`` every ``finetune_chunk_stride``, plus the top part again,
  masked as above; a masked token is replaced by a random id with ``p_token_replace``, kept with
  ``p_token_original``; AdamW with weight decay 0.01 except biases and LayerNorm weights, a
  linear schedule, ``finetune_epochs`` epochs of batch 1), and the counts compare the original
  and the tuned model on the document's masked sentences read alone. The package seeds only
  when ``random_seed > 0``; here every row's fine-tuning starts from ``random_seed`` (default 0),
  so a score does not depend on what ran before (the scores are cached).
* The ``blanc`` package itself is not used: it declares ``torch<2.0`` (the project pins torch
  2.13) and imports ``AdamW`` from transformers, which no longer has it. With that name given
  (BLANC-help never uses it), its BLANC-help runs here beside ours: the masked inputs (every
  token id, masked position and answer) and the scores are the same
  (``tests/test_reference_models.py``)."""

from __future__ import annotations

import copy
import random
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from blindspot.models import load_masked_lm
from blindspot.scorers import _lm_utils as lm
from blindspot.scorers.mlm_ppl import head_on_positions
from blindspot.scorers.unieval import split_sentences
from blindspot.scoring.card import ModuleCard
from blindspot.scoring.scorer import Reference, ScoreInput, register_scorer

BLANC_CITATION = """@inproceedings{vasilyev-etal-2020-fill,
    title = "Fill in the {BLANC}: Human-free quality estimation of document summaries",
    author = "Vasilyev, Oleg and Dharnidharka, Vedant and Bohannon, John",
    booktitle = "Proceedings of the First Workshop on Evaluation and Comparison of NLP Systems",
    year = "2020",
    pages = "11--20",
}
"""

DEFAULT_MODEL = "bert-base-uncased"
MEASURES = ("relative", "improve")
MODES = ("help", "tune")
#: token ids a masked token may be replaced by while fine-tuning (the package's BERT range)
TOKEN_REPLACE_RANGE = (1000, 29999)
#: label of the positions the fine-tuning loss ignores
IGNORED = -100
#: WordPiece's continuation marker
PIECE_PREFIX = "##"


@dataclass(frozen=True)
class Masking:
    """One masked copy of a sentence: its tokens with masks, and the original token at each
    masked position."""

    tokens: tuple[str, ...]
    answers: tuple[tuple[int, str], ...]


def long_enough(token: str, next_token: str, lengths: tuple[int, int, int]) -> bool:
    """Whether BLANC may mask ``token``: (normal, lead, follow-up) minimum lengths."""
    normal, lead, followup = lengths
    if token.startswith(PIECE_PREFIX):
        return len(token) - len(PIECE_PREFIX) >= followup
    if next_token.startswith(PIECE_PREFIX):
        return len(token) >= lead
    return len(token) >= normal


def even_maskings(tokens: Sequence[str], gap: int, gap_mask: int, lengths: tuple[int, int, int],
                  mask_token: str) -> list[Masking]:
    """BLANC's even maskings of a sentence (maskings that mask nothing are left out)."""
    gap = min(gap, len(tokens))
    out = []
    for modulus in range(gap):
        masked, answers = [], []
        for index, token in enumerate(tokens):
            following = tokens[index + 1] if index + 1 < len(tokens) else ""
            if (index % gap - modulus) % gap < gap_mask and long_enough(token, following, lengths):
                masked.append(mask_token)
                answers.append((index, token))
            else:
                masked.append(token)
        if answers:
            out.append(Masking(tuple(masked), tuple(answers)))
    return out


def fit_to_limit(sentence: list[str], summary: list[list[str]], extra: int, limit: int,
                 sentence_keep: int) -> tuple[list[str], list[str]]:
    """(sentence, summary tokens) cut so that ``extra + len(summary) + len(sentence) <= limit``."""
    total = sum(map(len, summary))
    excess = extra + total + len(sentence) - limit
    if excess > 0:
        cut = max(0, min(excess, len(sentence) - sentence_keep))
        sentence = sentence[: len(sentence) - cut]
        room = limit - extra - len(sentence)
        if room < total:
            kept = [list(s) for s in summary]
            while len(kept) > 1 and sum(map(len, kept)) > room:
                kept.pop()
            flat = [t for s in kept for t in s]
            return sentence, flat[: max(room, 0)]
    return sentence, [t for s in summary for t in s]


def blanc_measure(counts: list[list[int]], measure: str) -> float:
    """BLANC from the counts ``S[base correct][helped correct]``."""
    (s00, s01), (s10, s11) = counts
    if measure == "relative":
        total = s00 + s01 + s10 + s11
        return (s01 - s10) / total if total else 0.0
    total = s00 + s01 + s11
    return s01 / total if total else 0.0


_BLANC_CARD = ModuleCard(
    title="BLANC", emoji="❓",
    summary=("BLANC-help: how much a summary helps a masked LM fill in its document, on "
             "blindspot's cached scoring layer."),
    description="""\
BLANC (Vasilyev et al., 2020), BLANC-help and BLANC-tune, on blindspot's scoring layer.

Every ``gap``-th token of each document sentence (``sources``) is masked, and a BERT masked LM
fills it in twice: after the summary (``predictions``) and after a filler of as many "."
tokens. BLANC = (tokens the summary made right - tokens it made wrong) / masked tokens
(``measure="relative"``; ``"improve"``: right / (masked - made wrong)). In [-1, 1], higher is
better. Options: ``model`` (default ``bert-base-uncased``), ``measure``, ``gap`` (2; the paper's
figures used 6), ``gap_mask`` (1), ``min_token_length_normal`` / ``_lead`` / ``_followup``
(4 / 2 / 100), ``filler_token`` ("."), ``help_sep`` (""), ``len_sent_allow_cut`` (100),
``inference_batch_size``, ``device``: the ``blanc`` package's defaults. ``mode="tune"`` is
BLANC-tune: a copy of the model is fine-tuned on the summary (``finetune_epochs`` 10,
``finetune_chunk_size`` 64, ``finetune_chunk_stride`` 32, ``finetune_top_fully``,
``p_token_replace`` / ``p_token_original`` 0.1, ``learning_rate`` 5e-5, ``warmup_steps`` 0,
``random_seed`` 0, seeded for every row) and compared with the original on the document alone.""",
    examples="""\
>>> import evaluate, tempfile
>>> from blindspot.tiny_models import tiny_masked_lm
>>> folder = tiny_masked_lm(tempfile.mkdtemp())  # random weights: the numbers mean nothing
>>> blanc = evaluate.load("blindspot/blanc")
>>> out = blanc.compute(predictions=["Fire crews evacuated the homes.", ""],
...                     sources=["A large fire forced the evacuation of several homes."] * 2,
...                     model=folder, use_aggregator=False)
>>> -1 <= out["blanc"][0] <= 1, out["blanc"][1]  # an empty summary helps nothing: 0
(True, 0.0)
""",
    inputs="""\
Args:
    predictions (list of str): summaries.
    sources (list of str): their documents.
    model, mode, measure, gap, gap_mask, min_token_length_normal, min_token_length_lead,
    min_token_length_followup, filler_token, help_sep, len_sent_allow_cut,
    finetune_epochs, finetune_chunk_size, finetune_chunk_stride, finetune_top_fully,
    p_token_replace, p_token_original, learning_rate, warmup_steps, random_seed,
    inference_batch_size, device: see the description.
    use_aggregator (bool): mean over rows (default) or per-row lists.
Returns:
    blanc: in [-1, 1], higher is better.
""",
    citation=BLANC_CITATION,
    sections="""\
## Metric description
BLANC-help (Vasilyev et al., 2020) masks every `gap`-th token of each document sentence and asks a BERT masked LM to fill them in twice: after the summary, and after a filler of the same length. BLANC is the share of tokens the summary made right minus the share it made wrong. `mode="tune"` is BLANC-tune: the model is fine-tuned on the summary instead and compared with the original. Reference-free: it needs `sources`.

The module's docstring (`blanc.py`) states every option, default and choice; the scorer
(`blindspot/scorers/blanc.py`) is the computation, cached and batched by blindspot's scoring
layer, so `blindspot run --metrics blanc` judges it like any other metric.

## How to use
```python
import evaluate
blanc = evaluate.load("blindspot/blanc")  # or the path of this folder
```
See the examples in `blanc.py`; they run offline on tiny models built from configs.
""",  # noqa: E501
    requirements=("torch", "transformers", "spacy"),
)


@register_scorer
class Blanc(lm.ModelScorer):
    """BLANC-help (or BLANC-tune) of each summary (hypothesis) for its document (source), on any
    masked LM."""

    name = "blanc"
    card = _BLANC_CARD
    outputs = ("blanc",)
    uses_references = "none"
    uses_source = "required"
    default_batch_size = 8
    version = "2"
    reference = Reference("blanc 0.3.4 (BlancHelp), run beside ours on MiniLM under a built "
                          "masked-LM head: the same masked inputs token for token (the built "
                          "head guesses none right, so both score 0)", max_abs_diff=1e-9, rows=3)

    def __init__(self, model: str = DEFAULT_MODEL, mode: str = "help", measure: str = "relative",
                 gap: int = 2, gap_mask: int = 1, min_token_length_normal: int = 4,
                 min_token_length_lead: int = 2, min_token_length_followup: int = 100,
                 filler_token: str = ".", help_sep: str = "", len_sent_allow_cut: int = 100,
                 finetune_epochs: int = 10, finetune_chunk_size: int = 64,
                 finetune_chunk_stride: int = 32, finetune_top_fully: bool = True,
                 p_token_replace: float = 0.1, p_token_original: float = 0.1,
                 learning_rate: float = 5e-5, warmup_steps: int = 0, random_seed: int = 0,
                 inference_batch_size: int = 32, device: str | None = None) -> None:
        if mode not in MODES:
            raise ValueError(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
        if measure not in MEASURES:
            raise ValueError(f"measure must be one of {', '.join(MEASURES)}, got {measure!r}")
        if int(gap) < 1 or not 1 <= int(gap_mask) <= int(gap):
            raise ValueError(f"gap must be at least 1 and gap_mask between 1 and gap; got gap="
                             f"{gap!r}, gap_mask={gap_mask!r}")
        if int(finetune_chunk_size) < 1 or int(finetune_chunk_stride) < 1:
            raise ValueError("finetune_chunk_size and finetune_chunk_stride must be at least 1")
        # the fine-tuning options are in the identity only for BLANC-tune
        tune: dict[str, Any] = {"finetune_epochs": int(finetune_epochs),
                "finetune_chunk_size": int(finetune_chunk_size),
                "finetune_chunk_stride": int(finetune_chunk_stride),
                "finetune_top_fully": bool(finetune_top_fully),
                "p_token_replace": float(p_token_replace),
                "p_token_original": float(p_token_original),
                "learning_rate": float(learning_rate), "warmup_steps": int(warmup_steps),
                "random_seed": int(random_seed)} if mode == "tune" else {}
        # how copies are grouped into forward passes does not change scores: not a cache key
        super().__init__(device, model=str(model), mode=mode, measure=measure, gap=int(gap),
                         gap_mask=int(gap_mask),
                         lengths=[int(min_token_length_normal), int(min_token_length_lead),
                                  int(min_token_length_followup)],
                         filler_token=str(filler_token), help_sep=str(help_sep),
                         len_sent_allow_cut=int(len_sent_allow_cut), **tune)
        self._inference_batch_size = max(1, int(inference_batch_size))

    def inputs(self, tokenizer: Any, document: str, summary: str, limit: int
               ) -> list[tuple[list[int], list[int], list[int], list[str]]]:
        """Per masking of every document sentence: (helped ids, filler ids, masked positions in
        both, original tokens)."""
        config = self.config
        clean = [unicodedata.normalize("NFKD", text) for text in (document, summary)]
        doc_sentences, summary_sentences = split_sentences(clean, "nltk")
        summary_tokens = [tokenizer.tokenize(s) for s in summary_sentences if s.strip()]
        separator = tokenizer.tokenize(config["help_sep"]) if config["help_sep"] else []
        lengths = tuple(config["lengths"])
        out = []
        for sentence in doc_sentences:
            tokens, helper = fit_to_limit(tokenizer.tokenize(sentence), summary_tokens or [[]],
                                          2 + len(separator), limit, config["len_sent_allow_cut"])
            filler = [config["filler_token"]] * len(helper)
            offset = 1 + len(helper) + len(separator)
            for masking in even_maskings(tokens, config["gap"], config["gap_mask"], lengths,
                                         tokenizer.mask_token):
                body = [*separator, *masking.tokens, tokenizer.sep_token]
                helped = tokenizer.convert_tokens_to_ids([tokenizer.cls_token, *helper, *body])
                filled = tokenizer.convert_tokens_to_ids([tokenizer.cls_token, *filler, *body])
                out.append((helped, filled, [offset + i for i, _ in masking.answers],
                            [token for _, token in masking.answers]))
        return out

    def predictions(self, model: Any, tokenizer: Any, sequences: list[list[int]],
                    positions: list[list[int]]) -> list[list[str]]:
        """The argmax token at each of ``positions[k]`` of each sequence."""
        import torch

        out: list[list[str]] = [[] for _ in sequences]
        device = lm.model_device(model)
        for chunk in lm.length_chunks([len(s) for s in sequences], self._inference_batch_size):
            ids, mask = lm.right_pad([sequences[k] for k in chunk], lm.pad_id(tokenizer))
            rows = torch.tensor([r for r, k in enumerate(chunk) for _ in positions[k]])
            columns = torch.tensor([p for k in chunk for p in positions[k]])
            with torch.inference_mode(), head_on_positions(model, columns, rows):
                logits = model(input_ids=ids.to(device), attention_mask=mask.to(device)).logits
            if logits.shape[0] != 1 or logits.shape[1] != len(columns):  # the hook did not apply
                logits = logits[rows.to(logits.device), columns.to(logits.device)].unsqueeze(0)
            best = iter(tokenizer.convert_ids_to_tokens(logits[0].argmax(dim=-1).tolist()))
            for k in chunk:
                out[k] = [next(best) for _ in positions[k]]
        return out

    def tuning_examples(self, tokenizer: Any, summary: str, rng: random.Random
                        ) -> list[tuple[list[int], list[int]]]:
        """BLANC-tune's training set from the summary: (input ids, labels) per masking of each
        chunk, labels ``IGNORED`` except at the masked positions."""
        config = self.config
        tokens = tokenizer.tokenize(unicodedata.normalize("NFKD", summary))
        size, stride = config["finetune_chunk_size"], config["finetune_chunk_stride"]
        chunks = []
        for start in range(0, len(tokens), stride):
            chunks.append(tokens[start: start + size])
            if config["finetune_top_fully"] and 0 < start < size:
                chunks.append(tokens[:start])
        high = min(TOKEN_REPLACE_RANGE[1], len(tokenizer) - 1)
        out = []
        for chunk in chunks:
            for masking in even_maskings(chunk, config["gap"], config["gap_mask"],
                                         tuple(config["lengths"]), tokenizer.mask_token):
                ids = tokenizer.convert_tokens_to_ids(
                    [tokenizer.cls_token, *masking.tokens, tokenizer.sep_token])
                labels = [IGNORED] * len(ids)
                for index, token in masking.answers:
                    original = tokenizer.convert_tokens_to_ids(token)
                    labels[index + 1] = original
                    draw = rng.random()
                    if draw < config["p_token_replace"]:
                        ids[index + 1] = rng.randint(TOKEN_REPLACE_RANGE[0], high)
                    elif draw < config["p_token_replace"] + config["p_token_original"]:
                        ids[index + 1] = original
                out.append((ids, labels))
        return out

    def finetuned(self, model: Any, tokenizer: Any, summary: str) -> Any:
        """A copy of ``model`` fine-tuned on ``summary`` (BLANC-tune), in eval mode."""
        import torch
        from transformers import get_linear_schedule_with_warmup

        config = self.config
        torch.manual_seed(config["random_seed"])
        examples = self.tuning_examples(tokenizer, summary, random.Random(config["random_seed"]))
        tuned = copy.deepcopy(model)
        tuned.train()
        plain = ("bias", "LayerNorm.weight")
        groups = [{"params": [p for n, p in tuned.named_parameters()
                              if not any(x in n for x in plain)], "weight_decay": 1e-2},
                  {"params": [p for n, p in tuned.named_parameters()
                              if any(x in n for x in plain)], "weight_decay": 0.0}]
        optimizer = torch.optim.AdamW(groups, lr=config["learning_rate"], eps=1e-8)
        schedule = get_linear_schedule_with_warmup(
            optimizer, num_warmup_steps=config["warmup_steps"],
            num_training_steps=max(1, len(examples) * config["finetune_epochs"]))
        device = lm.model_device(tuned)
        with torch.enable_grad():
            for _ in range(config["finetune_epochs"]):
                for ids, labels in examples:
                    optimizer.zero_grad()
                    loss = tuned(input_ids=torch.tensor([ids], device=device),
                                 labels=torch.tensor([labels], device=device)).loss
                    loss.backward()
                    optimizer.step()
                    schedule.step()
        return tuned.eval()

    def tune_score(self, model: Any, tokenizer: Any, item: ScoreInput, limit: int) -> float:
        """BLANC-tune of one row: the original against the tuned model, sentences read alone."""
        jobs = self.inputs(tokenizer, item.source or "", "", limit)
        sequences = [alone for alone, _, _, _ in jobs]
        positions = [where for _, _, where, _ in jobs]
        base = self.predictions(model, tokenizer, sequences, positions)
        tuned = self.predictions(self.finetuned(model, tokenizer, item.hypothesis), tokenizer,
                                 sequences, positions)
        counts = [[0, 0], [0, 0]]
        for (_, _, _, truth), without, with_tuning in zip(jobs, base, tuned, strict=True):
            for answer, before, after in zip(truth, without, with_tuning, strict=True):
                counts[int(before == answer)][int(after == answer)] += 1
        return blanc_measure(counts, self.config["measure"])

    def score_batch(self, batch: Sequence[ScoreInput]) -> list[dict[str, float]]:
        tokenizer, model = load_masked_lm(self.config["model"])
        model = lm.place(model, self._device)
        if tokenizer.mask_token is None or tokenizer.cls_token is None:
            raise ValueError(f"model {self.config['model']!r} has no mask or CLS token: BLANC "
                             "needs a BERT-style masked LM")
        limit = lm.max_positions(tokenizer, model)
        if self.config["mode"] == "tune":
            return [{"blanc": self.tune_score(model, tokenizer, item, limit)} for item in batch]
        per_row = [self.inputs(tokenizer, item.source or "", item.hypothesis, limit)
                   for item in batch]
        sequences, positions = [], []
        for jobs in per_row:
            for helped, filled, where, _ in jobs:
                sequences += [helped, filled]
                positions += [where, where]
        guesses = iter(self.predictions(model, tokenizer, sequences, positions))
        scores = []
        for jobs in per_row:
            counts = [[0, 0], [0, 0]]
            for _, _, _, truth in jobs:
                with_summary, with_filler = next(guesses), next(guesses)
                for answer, with_help, without in zip(truth, with_summary, with_filler,
                                                      strict=True):
                    counts[int(without == answer)][int(with_help == answer)] += 1
            scores.append({"blanc": blanc_measure(counts, self.config["measure"])})
        return scores
