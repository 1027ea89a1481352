"""GPT-PPL: the negated perplexity of the hypothesis under a causal language model.

``gpt_ppl = -exp(-(1/N) * sum_t log p(w_t | w_<t))`` over the hypothesis' N tokens, so that
higher is better (the blind-spots paper reports negated perplexities). Reference-free.

Choices, stated:

* The text is tokenized without special tokens and one prefix token is put before it (the
  tokenizer's BOS, else its EOS; see :func:`~blindspot.scorers._lm_utils.prefix_token_id`),
  so that the first word is scored too. For GPT-2 this is ``<|endoftext|>``; for SmolLM2 it is
  the BOS its tokenizer adds by itself, so the sequence is the one ``tokenizer(text)`` gives.
  ``add_start_token=False`` puts none: the first token is then only context (evaluate's
  ``perplexity`` option of that name).
* Texts longer than the model's window keep their first ``max_length - 1`` tokens (the limit is
  the smaller of the tokenizer's and the config's; ``max_length=`` overrides it).
* A text with no tokens (the empty string) scores NaN: a perplexity of nothing is undefined,
  and any number would rank an empty hypothesis.
* Batches are padded on the right with an attention mask, and pads are left out of every mean,
  so a text scores the same alone or in any batch (up to float rounding).
* ``precision`` (fp32, tf32, bf16, fp16, auto) and ``token_budget``: on a GPU, or whenever a
  precision is asked, batches go by tokens and the LM head and the gather of each target's
  log-probability run in chunks on the device (:mod:`blindspot.scorers._device`,
  ``docs/gpu.md``), and the next batch is tokenized in a worker thread while the device scores
  this one (:func:`blindspot.scoring.engine.scores_in_turn`). A CPU run with no precision asked
  computes as before.

Paper default: ``gpt2-large``. Offline: ``model="smollm2"`` (SmolLM2-135M).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from blindspot.models import load_causal_lm
from blindspot.scorers import _lm_utils as lm
from blindspot.scoring.card import ModuleCard
from blindspot.scoring.scorer import ScoreInput, register_scorer

DEFAULT_MODEL = "gpt2-large"


@dataclass
class CausalBatch:
    """A batch tokenized for a causal LM: the sequences, where scoring starts in each, and the
    id that pads them (the host part of scoring, made ahead while the device works)."""

    sequences: list[list[int]]
    starts: list[int]
    fill: int


def causal_sequences(tokenizer: Any, texts: Sequence[str], limit: int,
                     add_start_token: bool = True) -> tuple[list[list[int]], int]:
    """The token sequences to score (prefix token + text, cut to ``limit``) and where scoring
    starts in them (1 after a prefix token; 1 without one too: the first token is context)."""
    prefix = lm.prefix_token_id(tokenizer) if add_start_token else None
    head = [prefix] if prefix is not None else []
    return [(head + ids)[:limit] for ids in lm.token_ids(tokenizer, texts)], 1


_GPT_PPL_CARD = ModuleCard(
    title="GPT-PPL", emoji="📉",
    summary=("Negated perplexity of a text under any causal language model, on blindspot's cached "
             "scoring layer."),
    description="""\
GPT-PPL: negated perplexity of the hypothesis under a causal LM, on blindspot's scoring layer.

``gpt_ppl = -exp(mean token negative log-likelihood)``, so that higher is better (the blind-spots
paper reports it negated). Reference-free: only ``predictions`` are read. The first token is scored
too, after the tokenizer's BOS token (or EOS where there is no BOS, as for GPT-2's
``<|endoftext|>``); texts longer than the model's window keep their beginning; the empty string
scores NaN. Options: ``model`` (a Hub id, a local folder or an offline short name; paper default
``gpt2-large``, offline ``"smollm2"``), ``max_length``, ``device``. Distinct texts are scored once,
in length-sorted padded batches, and cached on disk.""",
    examples="""\
>>> import evaluate
>>> gpt_ppl = evaluate.load("blindspot/gpt_ppl")
>>> out = gpt_ppl.compute(predictions=["The cat sat on the mat.", "mat the on sat cat The."],
...                       model="smollm2", use_aggregator=False)
>>> fluent, scrambled = out["gpt_ppl"]
>>> round(fluent, -1), fluent > scrambled
(-440.0, True)
>>> round(gpt_ppl.compute(predictions=["The cat sat on the mat."], model="smollm2")["gpt_ppl"], -1)
-440.0
""",
    inputs="""\
Args:
    predictions (list of str): the texts to score.
    model (str): causal LM: Hub id, local folder, or "smollm2" offline (default "gpt2-large").
    max_length (int): cut texts to this many tokens (default: the model's window).
    device (str): "cpu", "cuda"... (default: CUDA when available).
    use_aggregator (bool): mean over rows (default) or per-row lists.
Returns:
    gpt_ppl: negated perplexity, <= -1, higher is better (a list per row when
        use_aggregator=False; NaN for an empty text).
""",
    citation="""\
@inproceedings{he-etal-2023-blind,
    title = "On the Blind Spots of Model-Based Evaluation Metrics for Text Generation",
    author = "He, Tianxing and Zhang, Jingyu and Wang, Tianle and Kumar, Sachin and Cho, Kyunghyun
              and Glass, James and Tsvetkov, Yulia",
    booktitle = "Proceedings of the 61st Annual Meeting of the Association for Computational
                 Linguistics (Volume 1: Long Papers)",
    year = "2023",
}
@article{radford2019language,
    title = "Language Models are Unsupervised Multitask Learners",
    author = "Radford, Alec and Wu, Jeffrey and Child, Rewon and Luan, David and Amodei, Dario
              and Sutskever, Ilya",
    year = "2019",
}
""",
    sections="""\
## Metric description
GPT-PPL scores a text by how probable a causal (left-to-right) language model finds it:
`gpt_ppl = -exp(-(1/N) * sum_t log p(w_t | w_<t))` over the text's N tokens. It is negated so that,
like every blindspot metric, higher is better. It is reference-free: only `predictions` are read.
This module computes it through blindspot's scoring layer: distinct texts are scored once, in
length-sorted batches, and cached on disk.

## How to use
```python
import evaluate
gpt_ppl = evaluate.load("blindspot/gpt_ppl")
gpt_ppl.compute(predictions=["The cat sat on the mat."])                   # gpt2-large (Hub)
gpt_ppl.compute(predictions=["The cat sat on the mat."], model="smollm2")  # offline SmolLM2-135M
```
Options: `model` (a Hub id, a local folder, or an offline short name), `max_length` (cut texts to
this many tokens), `device`; `use_aggregator=False` for per-row scores.

## Output
`gpt_ppl`: at most -1 (a perplexity is at least 1), higher is better; NaN for an empty text
(the perplexity of no tokens is undefined, and any number would rank it).

## Computation details
- The first token is scored too: one prefix token goes before the text, the tokenizer's BOS
  token, else its EOS token (GPT-2's `<|endoftext|>`, its document separator). SmolLM2's tokenizer
  adds its BOS by itself, so the scored sequence is exactly `tokenizer(text)`.
- Batches are padded on the right with an attention mask (whatever the tokenizer's
  `padding_side`) and pads are left out of every mean: a text scores the same alone or in a batch
  (tested to 1e-5 relative).
- Texts longer than the model's window (the smaller of the tokenizer's and the config's limit)
  keep their beginning.
- The model loads once per process and is shared with other modules that use the same checkpoint.

## Paper default and variants
The blind-spots paper (He et al., 2023) uses GPT2-large (`gpt2-large`) on WikiText open-ended
generation. Without the Hub, `model="smollm2"` (SmolLM2-135M-Instruct) is the real offline model;
any causal LM id or folder works.

## Blind spots the papers found
- **Frequent n-grams**: a sequence of frequent 4-grams (or 3-grams) gets a better GPT-PPL than the
  gold text, and more so the more frequent the n-grams.
- **Repetition**: repeating the last 4-gram of a text improves its GPT-PPL, increasingly with each
  repetition.
- **Self-evaluation bias**: a GPT-2 evaluator ranks generations from its own base model higher
  than those of larger (better) models.
- **Truncation**: GPT-PPL does prefer the complete text, but its score barely moves as more of the
  text is cut (a flat slope).
The paper recommends pairing it with a diversity metric (rep-n) and with MAUVE.
""",
    requirements=("torch", "transformers"),
)


@register_scorer
class GptPpl(lm.PreparedAhead):
    """Negated perplexity under any causal LM (a Hub id, a local folder or ``"smollm2"``)."""

    name = "gpt_ppl"
    card = _GPT_PPL_CARD
    outputs = ("gpt_ppl",)
    uses_references = "none"
    uses_source = "none"
    version = "1"

    def __init__(self, model: str = DEFAULT_MODEL, max_length: int | None = None,
                 device: str | None = None, add_start_token: bool = True,
                 precision: str | None = None, token_budget: int | None = None) -> None:
        # in the identity only when off, so that cached scores stay valid
        super().__init__(device, precision, token_budget, model=str(model), max_length=max_length,
                         **({} if add_start_token else {"add_start_token": False}))

    def _model(self) -> tuple[Any, Any]:
        tokenizer, model = load_causal_lm(self.config["model"], self.weight_dtype())
        return tokenizer, lm.place(model, self._device)

    def prepare_batch(self, batch: Sequence[ScoreInput]) -> CausalBatch:
        tokenizer, model = self._model()
        limit = lm.max_positions(tokenizer, model, self.config["max_length"])
        sequences, start = causal_sequences(tokenizer, [item.hypothesis for item in batch], limit,
                                            self.config.get("add_start_token", True))
        return CausalBatch(sequences, [start] * len(sequences), lm.pad_id(tokenizer))

    def score_prepared(self, batch: Sequence[ScoreInput], prepared: CausalBatch
                       ) -> list[dict[str, float]]:
        _, model = self._model()
        sums = self.causal_sums(model, prepared.sequences, prepared.starts, prepared.fill,
                                len(prepared.sequences))
        return [{"gpt_ppl": lm.negated_perplexity(lm.mean_or_nan(total, count))}
                for total, count in sums]
