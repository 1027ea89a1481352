"""BARTScore (Yuan et al., 2021): the mean token log-likelihood of one text given another.

``score(x -> y) = (1/|y|) * sum_t log p(y_t | y_<t, x)`` under a sequence-to-sequence model.
Variants, as the blind-spots paper (Appendix A) lists them:

* ``precision``: reference -> hypothesis;  ``recall``: hypothesis -> reference;
* ``f``: the mean of precision and recall;  ``faithfulness``: source -> hypothesis.

Choices, stated:

* Sequence-to-sequence (default): both texts are tokenized with the tokenizer's special tokens
  (BART: ``<s> ... </s>``), cut to the model's window (1024 for BART), and every target token is
  scored, the model building the decoder input by shifting the target right, as BARTScore's
  released scorer does. Padding is on the right and pads are left out of the mean.
* Multiple references: each direction is scored against every reference and the per-reference
  scores are aggregated per variant with ``multi_ref="mean"`` (the default of BARTScore's
  ``multi_ref_score``) or ``"max"`` (the best reference); ``f`` is then the mean of the
  aggregated precision and recall, so ``f == (precision + recall) / 2`` always holds.
* A variant whose input is missing (no references, or no source) is NaN; a row with neither
  is an error.
* ``model_kind="causal"``: ``mean log p(text | prompt with the other text)`` under a causal LM,
  so BARTScore also runs on the offline SmolLM2. The sequence is ``[BOS] + prompt-before +
  other + prompt-after + text`` (each part tokenized on its own, without special tokens) and
  only ``text``'s tokens are scored. The default prompt ``"{context}\\nIn other words:\\n"``
  puts the other text first and asks for a restatement ("in other words" is one of the
  prompts BARTScore's prompted variant uses). When the sequence is longer than the window,
  the text keeps at least half of it and the other text is cut from its end.

Paper default: ``facebook/bart-large-cnn`` (BARTScore-cnn); ``-para`` is the same model
fine-tuned on ParaBank2, which BARTScore's authors released as a separate file (give its
local folder). Offline: ``model_kind="causal", model="smollm2"``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import fmean
from typing import Any

from blindspot.models import load_causal_lm, load_seq2seq_lm
from blindspot.scorers import _device
from blindspot.scorers import _lm_utils as lm
from blindspot.scoring.card import ModuleCard
from blindspot.scoring.scorer import ScoreInput, register_scorer

DEFAULT_MODELS = {"seq2seq": "facebook/bart-large-cnn", "causal": "gpt2-large"}
DEFAULT_PROMPT = "{context}\nIn other words:\n"
AGGREGATES = {"mean": fmean, "max": max}

Pair = tuple[str, str]  # (conditioning text, scored text)


def seq2seq_mean_logprobs(tokenizer: Any, model: Any, pairs: Sequence[Pair], limit: int,
                          batch_size: int, on_device: tuple[int, str] | None = None
                          ) -> list[float]:
    """BARTScore of each (source, target) pair: mean log p(target token | source, prefix).
    ``on_device``: (token budget, precision) of the device path
    (:func:`blindspot.scorers._device.seq2seq_sums_on_device`)."""
    sources, targets = seq2seq_tokens(tokenizer, pairs, limit)
    return seq2seq_means(model, sources, targets, lm.pad_id(tokenizer), batch_size, on_device)


def seq2seq_tokens(tokenizer: Any, pairs: Sequence[Pair], limit: int
                   ) -> tuple[list[list[int]], list[list[int]]]:
    """(sources, targets): each pair's two texts tokenized with the special tokens, cut to
    ``limit``."""
    if not pairs:
        return [], []
    sources = tokenizer([s for s, _ in pairs], truncation=True, max_length=limit)["input_ids"]
    targets = tokenizer(text_target=[t for _, t in pairs], truncation=True,
                        max_length=limit)["input_ids"]
    return sources, targets


def seq2seq_means(model: Any, sources: Sequence[Sequence[int]],
                  targets: Sequence[Sequence[int]], fill: int, batch_size: int,
                  on_device: tuple[int, str] | None = None) -> list[float]:
    """Mean log p(target token | source, prefix) of each tokenized (source, target) pair."""
    import torch

    if not sources:
        return []
    if on_device is not None:
        sums = _device.seq2seq_sums_on_device(model, sources, targets, fill, *on_device,
                                              "bartscore")
        return [lm.mean_or_nan(total, len(t)) for total, t in zip(sums, targets, strict=True)]
    results = [math.nan] * len(sources)
    device = lm.model_device(model)
    for rows in lm.length_chunks([len(s) + len(t) for s, t in zip(sources, targets, strict=True)],
                                 batch_size):
        ids, mask = lm.right_pad([sources[i] for i in rows], fill)
        labels, label_mask = lm.right_pad([targets[i] for i in rows], fill)
        labels = labels.masked_fill(label_mask == 0, -100)
        with torch.inference_mode():
            logits = model(input_ids=ids.to(device), attention_mask=mask.to(device),
                           labels=labels.to(device), use_cache=False).logits
        logprobs = torch.log_softmax(logits.float(), dim=-1)
        picked = logprobs.gather(-1, labels.clamp(min=0).to(device).unsqueeze(-1)).squeeze(-1)
        picked = picked * label_mask.to(device)
        for b, i in enumerate(rows):
            results[i] = lm.mean_or_nan(float(picked[b].sum()), int(label_mask[b].sum()))
    return results


def split_prompt(prompt: str) -> tuple[str, str]:
    """The prompt's text before and after ``{context}`` (a ValueError if it has none)."""
    if prompt.count("{context}") != 1:
        raise ValueError(f"prompt must contain '{{context}}' exactly once, got {prompt!r}")
    before, after = prompt.split("{context}")
    return before, after


def causal_sequence(prefix: list[int], before: list[int], context: list[int], after: list[int],
                    text: list[int], limit: int) -> tuple[list[int], int]:
    """(token ids, index of the first scored token): ``text`` after the prompted context, cut
    to ``limit`` by shortening the context's end and, past half the window, the text's end."""
    room = limit - len(prefix) - len(before) - len(after)
    if room < 2:
        raise ValueError(f"the prompt leaves no room for text in a {limit}-token window")
    if len(context) + len(text) > room:
        text = text[: max(room - len(context), room // 2)]
        context = context[: room - len(text)]
    head = prefix + before + context + after
    return head + text, len(head)


def causal_mean_logprobs(tokenizer: Any, model: Any, pairs: Sequence[Pair], prompt: str,
                         limit: int, batch_size: int,
                         sums_of: Any = lm.causal_logprob_sums) -> list[float]:
    """Causal BARTScore of each (context, text) pair: mean log p(text token | prompt, context,
    text before it). ``sums_of``: how the sums are computed (a scorer's ``causal_sums``)."""
    sequences, starts = causal_tokens(tokenizer, pairs, prompt, limit)
    return causal_means(model, sequences, starts, lm.pad_id(tokenizer), batch_size, sums_of)


def causal_tokens(tokenizer: Any, pairs: Sequence[Pair], prompt: str, limit: int
                  ) -> tuple[list[list[int]], list[int]]:
    """(sequences, where scoring starts in each): each (context, text) pair as the causal LM
    reads it (:func:`causal_sequence`)."""
    if not pairs:
        return [], []
    prefix_id = lm.prefix_token_id(tokenizer)
    prefix = [prefix_id] if prefix_id is not None else []
    before, after = (lm.token_ids(tokenizer, [part])[0] if part else []
                     for part in split_prompt(prompt))
    contexts = lm.token_ids(tokenizer, [c for c, _ in pairs])
    texts = lm.token_ids(tokenizer, [t for _, t in pairs])
    built = [causal_sequence(prefix, before, c, after, t, limit)
             for c, t in zip(contexts, texts, strict=True)]
    return [s for s, _ in built], [start for _, start in built]


def causal_means(model: Any, sequences: Sequence[Sequence[int]], starts: Sequence[int],
                 fill: int, batch_size: int, sums_of: Any = lm.causal_logprob_sums
                 ) -> list[float]:
    """Mean log p(token | tokens before it) over ``seq[start:]`` of each sequence."""
    if not sequences:
        return []
    sums = sums_of(model, sequences, starts, fill, batch_size)
    return [lm.mean_or_nan(total, count) for total, count in sums]


def pairs_of(item: ScoreInput) -> list[Pair]:
    """Every (conditioning, scored) pair a row needs."""
    pairs = [p for ref in item.references for p in ((ref, item.hypothesis), (item.hypothesis, ref))]
    if item.source is not None:
        pairs.append((item.source, item.hypothesis))
    return pairs


@dataclass
class PairTokens:
    """A batch's distinct pairs, tokenized: for a seq2seq model ``first`` holds the sources and
    ``second`` the targets; for a causal LM, the sequences and where scoring starts in each (the
    host part of scoring, made ahead while the device works)."""

    pairs: list[Pair]
    first: list[list[int]]
    second: list[Any]
    fill: int


def variants(item: ScoreInput, score: dict[Pair, float], aggregate: Any) -> dict[str, float]:
    """The four outputs of one row from its pairs' scores."""
    out = dict.fromkeys(("precision", "recall", "f", "faithfulness"), math.nan)
    if item.references:
        out["precision"] = aggregate([score[(r, item.hypothesis)] for r in item.references])
        out["recall"] = aggregate([score[(item.hypothesis, r)] for r in item.references])
        out["f"] = (out["precision"] + out["recall"]) / 2
    if item.source is not None:
        out["faithfulness"] = score[(item.source, item.hypothesis)]
    return out


_BARTSCORE_CARD = ModuleCard(
    title="BARTScore", emoji="🧮",
    summary=("BARTScore precision / recall / F / faithfulness on any seq2seq model, or on a causal"
             " LM, on blindspot's cached scoring layer."),
    description="""\
BARTScore: mean token log-likelihood of one text given another, on blindspot's scoring layer.

Variants (Yuan et al., 2021), one output each: ``precision`` (reference -> hypothesis), ``recall``
(hypothesis -> reference), ``f`` (their mean) and ``faithfulness`` (source -> hypothesis). Give
``references`` for the first three, ``sources`` for faithfulness, or both; a variant without its
input is NaN. With several references per row, each variant is the mean over references
(``multi_ref="mean"``, BARTScore's ``multi_ref_score`` default) or the best one (``"max"``), and
``f`` is the mean of the aggregated precision and recall. Options: ``model`` (paper default
``facebook/bart-large-cnn``; BARTScore-para is the same model fine-tuned on ParaBank2, from a local
folder), ``model_kind`` ("seq2seq", or "causal": mean log p(text | prompt + other text) under a
causal LM, e.g. the offline ``"smollm2"``), ``prompt`` (causal only, default
``"{context}\\nIn other words:\\n"``), ``multi_ref``, ``max_length``, ``device``. Scores are
log-probabilities: <= 0, higher is better.""",
    examples="""\
>>> import evaluate
>>> bartscore = evaluate.load("blindspot/bartscore")
>>> out = bartscore.compute(predictions=["The cat sat on the mat."],
...                         references=[["A cat was sitting on the mat."]],
...                         sources=["A cat sat on a mat all day long."],
...                         model_kind="causal", model="smollm2", use_aggregator=False)
>>> sorted(out)
['f', 'faithfulness', 'precision', 'recall']
>>> out["f"][0] == (out["precision"][0] + out["recall"][0]) / 2
True
>>> all(values[0] < 0 for values in out.values())
True
>>> only_source = bartscore.compute(predictions=["The cat sat on the mat."],
...                                 sources=["A cat sat on a mat all day long."],
...                                 model_kind="causal", model="smollm2")
>>> only_source["faithfulness"] == out["faithfulness"][0], str(only_source["f"])
(True, 'nan')
>>> bartscore.compute(predictions=["The cat sat on the mat."], model_kind="causal",
...                   model="smollm2")
Traceback (most recent call last):
...
ValueError: bartscore needs references=[...] (precision, recall, f) or sources=[...] (faithfulness) for every prediction
""",  # noqa: E501
    inputs="""\
Args:
    predictions (list of str): hypotheses.
    references (list of str or list of list of str, optional): one or several references per
        hypothesis (precision, recall, f).
    sources (list of str, optional): the source texts (faithfulness).
    model (str): Hub id or local folder (default "facebook/bart-large-cnn"; "gpt2-large" for
        model_kind="causal"; "smollm2" offline).
    model_kind (str): "seq2seq" (default) or "causal".
    prompt (str): causal only; must contain "{context}" once.
    multi_ref (str): "mean" (default) or "max" over references.
    max_length (int): token window (default: the model's).
    device (str): "cpu", "cuda"... (default: CUDA when available).
    use_aggregator (bool): mean over rows (default) or per-row lists.
Returns:
    precision, recall, f, faithfulness: mean log-likelihoods (<= 0, higher is better; NaN where
        the variant's input was not given).
""",
    citation="""\
@inproceedings{yuan2021bartscore,
    title = "{BARTS}core: Evaluating Generated Text as Text Generation",
    author = "Yuan, Weizhe and Neubig, Graham and Liu, Pengfei",
    booktitle = "Advances in Neural Information Processing Systems",
    volume = "34",
    pages = "27263--27277",
    year = "2021",
}
""",
    sections="""\
## Metric description
BARTScore (Yuan et al., 2021) treats evaluation as generation: the score of `x -> y` is the mean
token log-likelihood of `y` given `x` under a sequence-to-sequence model,
`(1/|y|) * sum_t log p(y_t | y_<t, x)`. Four variants, each an output of this module:

| output | direction | needs |
|---|---|---|
| `precision` | reference -> hypothesis | `references` |
| `recall` | hypothesis -> reference | `references` |
| `f` | mean of precision and recall | `references` |
| `faithfulness` | source -> hypothesis | `sources` |

## How to use
```python
import evaluate
bartscore = evaluate.load("blindspot/bartscore")
bartscore.compute(predictions=hyps, references=refs, sources=docs)   # facebook/bart-large-cnn
bartscore.compute(predictions=hyps, sources=docs)                    # faithfulness only
bartscore.compute(predictions=hyps, references=refs, model_kind="causal", model="smollm2")
```
Options: `model`, `model_kind` (`"seq2seq"` or `"causal"`), `multi_ref` (`"mean"` or `"max"`),
`prompt` (causal only), `max_length`, `device`; `use_aggregator=False` for per-row scores.
`references` and `sources` are each optional in `compute`; a variant whose input is missing is NaN.

## Output
Each variant is a mean log-probability: at most 0, higher is better.

## Computation details
- Seq2seq: both texts are tokenized with the tokenizer's special tokens (BART: `<s> ... </s>`),
  cut to the model's window (1024 tokens for BART), and every target token is scored with the
  decoder input made by shifting the target right (the model's own `labels` path), as BARTScore's
  released scorer does. Pads are on the right and left out of the mean.
- Multiple references: each direction is scored against every reference, and the per-reference
  scores are aggregated per variant: `multi_ref="mean"` (default, the default of BARTScore's
  `multi_ref_score`) or `"max"` (best reference). `f` is the mean of the aggregated precision and
  recall, so `f == (precision + recall) / 2` always holds.
- Causal variant (`model_kind="causal"`): `mean log p(text | prompt with the other text)` under a
  causal LM, so the metric also runs on the offline SmolLM2. The sequence is
  `[BOS] + other text + "\\nIn other words:\\n" + text` (default `prompt="{context}\\nIn other words:\\n"`;
  "in other words" is one of the prompts BARTScore's prompted variant uses); each part is tokenized
  on its own and only the text's tokens are scored. When it is longer than the window, the text
  keeps at least half of it and the other text is cut from its end. An empty text scores NaN here.
- Distinct (conditioning, scored) pairs are scored once per batch: a hypothesis scored against the
  same reference for two rows costs one evaluation.

## Paper default and variants
`facebook/bart-large-cnn` (BARTScore-cnn) is the default. BARTScore-para is BART-large-cnn further
fine-tuned on ParaBank2; its authors distribute it as a separate checkpoint file, so give its
local folder as `model`. The blind-spots paper (He et al., 2023) reports the faithfulness variant
for summarization (as BARTScore's authors do on SummEval), F for translation, and tests all four
with both checkpoints; MENLI (Chen & Eger, 2023) uses precision and F (reference-based) and
faithfulness (reference-free). No seq2seq model exists offline here: the tests run the seq2seq
path on tiny randomly initialised BART and T5 models, and the causal path on the real SmolLM2.
The prompted BARTScore variant (prompt search) is not implemented.

## Blind spots the papers found
- **Copy-source**: giving the whole source article as the summary scores higher than the gold
  summary for recall, F and faithfulness: the length-averaged log-likelihood does not see that
  the "summary" is the article (removing the averaging fixes this but favours short outputs).
- **Truncation**: precision, F and faithfulness fail to penalise cut summaries (they are confused
  by it, not lowered); recall behaves well.
- **Sentence switching**: BARTScore-para recall does not penalise shuffled sentences.
- **Fluency errors**: recall (-cnn and -para) fails several fluency tests on summaries (removed
  stop-words, removed prepositions, noised punctuation).
- **Repetition**: every variant prefers a text whose last n-gram is repeated.
- **Self-evaluation bias**: a BART-based evaluator favours BART-based generators and a T5-based one
  T5-based generators (less so for the reference-based -para variant).
- MENLI's adversarial preference tests (reference-based MT): BARTScore-P picks the correct
  paraphrase over the meaning-changed hypothesis in about two cases of three on average;
  BARTScore-F is the most robust of the untrained metrics there.
""",
    requirements=("torch", "transformers"),
)


@register_scorer
class BartScore(lm.PreparedAhead):
    """BARTScore P / R / F / faithfulness on any seq2seq model, or on a causal LM."""

    name = "bartscore"
    card = _BARTSCORE_CARD
    outputs = ("precision", "recall", "f", "faithfulness")
    default_output = "f"
    uses_references = "optional"
    uses_source = "optional"
    version = "1"

    def __init__(self, model: str | None = None, model_kind: str = "seq2seq",
                 multi_ref: str = "mean", prompt: str = DEFAULT_PROMPT,
                 max_length: int | None = None, device: str | None = None,
                 precision: str | None = None, token_budget: int | None = None) -> None:
        if model_kind not in DEFAULT_MODELS:
            raise ValueError(f"model_kind must be 'seq2seq' or 'causal', got {model_kind!r}")
        if multi_ref not in AGGREGATES:
            raise ValueError(f"multi_ref must be 'mean' or 'max', got {multi_ref!r}")
        config: dict[str, Any] = {"model": str(model or DEFAULT_MODELS[model_kind]),
                                  "model_kind": model_kind, "multi_ref": multi_ref,
                                  "max_length": max_length}
        if model_kind == "causal":  # the prompt is part of the cache key only where it is used
            split_prompt(prompt)
            config["prompt"] = prompt
        super().__init__(device, precision, token_budget, **config)

    def _model(self) -> tuple[Any, Any]:
        load = load_causal_lm if self.config["model_kind"] == "causal" else load_seq2seq_lm
        tokenizer, model = load(self.config["model"], self.weight_dtype())
        return tokenizer, lm.place(model, self._device)

    def prepare_batch(self, batch: Sequence[ScoreInput]) -> PairTokens:
        for item in batch:
            if not item.references and item.source is None:
                raise ValueError("bartscore needs references=[...] (precision, recall, f) or "
                                 "sources=[...] (faithfulness) for every prediction")
        unique = list(dict.fromkeys(p for item in batch for p in pairs_of(item)))
        tokenizer, model = self._model()
        limit = lm.max_positions(tokenizer, model, self.config["max_length"])
        if self.config["model_kind"] == "causal":
            sequences, starts = causal_tokens(tokenizer, unique, self.config["prompt"], limit)
            return PairTokens(unique, sequences, starts, lm.pad_id(tokenizer))
        sources, targets = seq2seq_tokens(tokenizer, unique, limit)
        return PairTokens(unique, sources, targets, lm.pad_id(tokenizer))

    def score_prepared(self, batch: Sequence[ScoreInput], prepared: PairTokens
                       ) -> list[dict[str, float]]:
        _, model = self._model()
        if self.config["model_kind"] == "causal":
            means = causal_means(model, prepared.first, prepared.second, prepared.fill,
                                 self.default_batch_size, self.causal_sums)
        else:
            on_device = (self.token_budget(), self.precision()) if self.on_device_path() else None
            means = seq2seq_means(model, prepared.first, prepared.second, prepared.fill,
                                  self.default_batch_size, on_device)
        score = dict(zip(prepared.pairs, means, strict=True))
        aggregate = AGGREGATES[self.config["multi_ref"]]
        return [variants(item, score, aggregate) for item in batch]
