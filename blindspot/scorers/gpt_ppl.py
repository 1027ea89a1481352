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


@register_scorer
class GptPpl(lm.PreparedAhead):
    """Negated perplexity under any causal LM (a Hub id, a local folder or ``"smollm2"``)."""

    name = "gpt_ppl"
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
