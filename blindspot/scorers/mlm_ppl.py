"""MLM-PPL: the negated pseudo-perplexity of the hypothesis under a masked language model.

Following Salazar et al. (2020) as the blind-spots paper (Appendix A) defines it: each token
``w_t`` in turn is replaced by the mask token and predicted from all the others;
``mlm_ppl = -exp(-(1/|W|) * sum_t log P(w_t | W without t))``. Higher is better.

Choices, stated:

* ``W`` is the text's tokens between the tokenizer's special tokens (``<s>``/``</s>``,
  ``[CLS]``/``[SEP]``): those are kept as context, never masked or counted.
* Masking is batched: the |W| masked copies of every text in a batch are stacked and run
  ``mask_batch_size`` copies per forward pass. Only the masked position's hidden state goes
  through the LM head (a forward hook on the encoder), so a pass costs one vocabulary
  projection per copy, not one per token; scores equal a one-mask-at-a-time loop.
* ``precision`` and ``token_budget``: on a GPU, or whenever a precision is asked, the masked
  copies go in batches of ``token_budget`` tokens (split and retried when one runs out of
  memory), in the asked precision, and each copy's log-probability is added to its text's
  total on the device, brought back once per batch (``docs/gpu.md``).
* Texts are cut to the model's window (the tokenizer's and config's limits, or
  ``max_length=``) before masking. An empty text scores NaN (nothing to predict).

Paper default: ``roberta-large``. No masked LM with its head exists offline here.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from blindspot.models import load_masked_lm
from blindspot.scorers import _device
from blindspot.scorers import _lm_utils as lm
from blindspot.scoring.card import ModuleCard
from blindspot.scoring.scorer import ScoreInput, register_scorer

DEFAULT_MODEL = "roberta-large"


def maskable_positions(tokenizer: Any, ids: Sequence[int]) -> list[int]:
    """Positions of the text's own tokens (not the special tokens the tokenizer added)."""
    special = tokenizer.get_special_tokens_mask(list(ids), already_has_special_tokens=True)
    return [i for i, flag in enumerate(special) if not flag]


@contextmanager
def head_on_positions(model: Any, positions: Any, rows: Any = None) -> Iterator[None]:
    """While active, the encoder hands the LM head only row ``b``'s hidden state at
    ``positions[b]``, so the logits are (batch, 1, vocab) instead of (batch, length, vocab).
    With ``rows``, the states at (``rows[k]``, ``positions[k]``) go as one sequence instead
    (several positions per row, as BLANC masks them): the logits are (1, K, vocab).

    Every Hugging Face ``...ForMaskedLM`` applies a position-wise head to its encoder's first
    output; the caller checks the logits' shape and falls back to gathering when a model
    does not go through ``base_model`` this way.
    """
    import torch

    def pick(module: Any, args: Any, output: Any) -> Any:
        hidden = output[0]
        if rows is None:
            every = torch.arange(hidden.shape[0], device=hidden.device)
            picked = hidden[every, positions.to(hidden.device)].unsqueeze(1)
        else:
            picked = hidden[rows.to(hidden.device), positions.to(hidden.device)].unsqueeze(0)
        if isinstance(output, tuple):
            return (picked, *output[1:])
        output.last_hidden_state = picked
        return output

    encoder = getattr(model, "base_model", None)
    handle = encoder.register_forward_hook(pick) if encoder is not None and encoder is not model \
        else None
    try:
        yield
    finally:
        if handle is not None:
            handle.remove()


def masked_logprobs(model: Any, copies: Sequence[Sequence[int]], positions: Sequence[int],
                    mask_id: int, fill: int) -> list[float]:
    """log P(true token at ``positions[k]`` | ``copies[k]`` with that token masked), per copy."""
    return masked_logprobs_on_device(model, copies, positions, mask_id, fill).tolist()


def masked_logprobs_on_device(model: Any, copies: Sequence[Sequence[int]],
                              positions: Sequence[int], mask_id: int, fill: int,
                              precision: str = "fp32") -> Any:
    """:func:`masked_logprobs` as a float32 tensor left on the model's device."""
    import torch

    ids, attention = lm.right_pad(copies, fill)
    truth = ids[torch.arange(len(copies)), torch.tensor(positions)].clone()
    where = torch.tensor(positions, dtype=torch.long)
    ids[torch.arange(len(copies)), where] = mask_id
    device = lm.model_device(model)
    ids, attention = _device.pinned_to(ids, device), _device.pinned_to(attention, device)
    with torch.inference_mode(), head_on_positions(model, where), \
            _device.matmul_precision(precision):
        logits = model(input_ids=ids, attention_mask=attention).logits
        if logits.shape[1] != 1:  # the hook did not apply: gather from the full logits
            logits = logits[torch.arange(len(copies)), where.to(logits.device)].unsqueeze(1)
        logprobs = torch.log_softmax(logits[:, 0].float(), dim=-1)
        return logprobs.gather(-1, truth.to(logprobs.device).unsqueeze(-1)).squeeze(-1)


def masked_totals(model: Any, mask_id: int, fill: int, encoded: Sequence[Sequence[int]],
                  jobs: Sequence[tuple[int, int]], batch_size: int) -> tuple[list[float], list[int]]:
    """Each text's (sum of log-probabilities over its masked copies, number of copies): the
    rows path, ``batch_size`` copies at a time by length, each batch brought back at once."""
    totals, counts = [0.0] * len(encoded), [0] * len(encoded)
    for chunk in lm.length_chunks([len(encoded[row]) for row, _ in jobs], batch_size):
        picked = [jobs[k] for k in chunk]
        scores = masked_logprobs(model, [encoded[row] for row, _ in picked],
                                 [pos for _, pos in picked], mask_id, fill)
        for (row, _), score in zip(picked, scores, strict=True):
            totals[row] += score
            counts[row] += 1
    return totals, counts


_MLM_PPL_CARD = ModuleCard(
    title="MLM-PPL", emoji="🎭",
    summary=("Negated pseudo-perplexity of a text under any masked language model, masking "
             "batched, on blindspot's cached scoring layer."),
    description="""\
MLM-PPL: negated pseudo-perplexity under a masked LM, on blindspot's scoring layer.

Each token of the hypothesis in turn is masked and predicted from all the others (Salazar et al.,
2020); ``mlm_ppl = -exp(mean negative log-probability of the true tokens)``, higher is better.
The tokenizer's special tokens (``<s>``, ``</s>``, ``[CLS]``...) are context, never masked.
Masking is batched: all masked copies of a batch of texts go through the model together,
``mask_batch_size`` copies per pass, and only the masked positions reach the LM head. Options:
``model`` (a Hub id or a local folder; paper default ``roberta-large``), ``max_length``,
``mask_batch_size``, ``device``. No masked LM with its head exists offline here: the example builds
a tiny random one (its scores mean nothing, the code path is the real one).""",
    examples="""\
>>> import math, tempfile
>>> import evaluate, torch
>>> from transformers import AutoTokenizer, BertConfig, BertForMaskedLM
>>> from blindspot.models import resolve_model
>>> folder = tempfile.mkdtemp()
>>> tokenizer = AutoTokenizer.from_pretrained(resolve_model("minilm"))
>>> _ = torch.manual_seed(0)
>>> tiny = BertForMaskedLM(BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=32,
...                                   num_hidden_layers=2, num_attention_heads=2,
...                                   intermediate_size=64))
>>> tiny.save_pretrained(folder); _ = tokenizer.save_pretrained(folder)
>>> mlm_ppl = evaluate.load("blindspot/mlm_ppl")
>>> out = mlm_ppl.compute(predictions=["The cat sat on the mat.", ""], model=folder,
...                       use_aggregator=False)
>>> out["mlm_ppl"][0] <= -1.0, math.isnan(out["mlm_ppl"][1])
(True, True)
""",
    inputs="""\
Args:
    predictions (list of str): the texts to score.
    model (str): masked LM: Hub id or local folder (default "roberta-large").
    max_length (int): cut texts to this many tokens, special tokens included (default: the
        model's window).
    mask_batch_size (int): masked copies per forward pass (default 64; scores do not depend on it).
    device (str): "cpu", "cuda"... (default: CUDA when available).
    use_aggregator (bool): mean over rows (default) or per-row lists.
Returns:
    mlm_ppl: negated pseudo-perplexity, <= -1, higher is better (a list per row when
        use_aggregator=False; NaN for an empty text).
""",
    citation="""\
@inproceedings{salazar-etal-2020-masked,
    title = "Masked Language Model Scoring",
    author = "Salazar, Julian and Liang, Davis and Nguyen, Toan Q. and Kirchhoff, Katrin",
    booktitle = "Proceedings of the 58th Annual Meeting of the Association for Computational
                 Linguistics",
    year = "2020",
    pages = "2699--2712",
}
@inproceedings{he-etal-2023-blind,
    title = "On the Blind Spots of Model-Based Evaluation Metrics for Text Generation",
    author = "He, Tianxing and Zhang, Jingyu and Wang, Tianle and Kumar, Sachin and Cho, Kyunghyun
              and Glass, James and Tsvetkov, Yulia",
    booktitle = "Proceedings of the 61st Annual Meeting of the Association for Computational
                 Linguistics (Volume 1: Long Papers)",
    year = "2023",
}
""",
    sections="""\
## Metric description
MLM-PPL (Salazar et al., 2020) asks a bidirectional masked language model to predict each token
of a text from all the others: every token `w_t` in turn is replaced by the mask token, and
`mlm_ppl = -exp(-(1/|W|) * sum_t log P(w_t | W without t))`. It is negated so that higher is
better. Reference-free: only `predictions` are read.

## How to use
```python
import evaluate
mlm_ppl = evaluate.load("blindspot/mlm_ppl")
mlm_ppl.compute(predictions=["The cat sat on the mat."])                      # roberta-large (Hub)
mlm_ppl.compute(predictions=["The cat sat on the mat."], model="/path/to/mlm")  # a local folder
```
Options: `model` (a Hub id or a local folder of a `...ForMaskedLM` model), `max_length`,
`mask_batch_size` (masked copies per forward pass, default 64; the scores do not depend on it),
`device`; `use_aggregator=False` for per-row scores.

## Output
`mlm_ppl`: at most -1, higher is better; NaN for an empty text.

## Computation details
- `W` is the text's own tokens; the special tokens the tokenizer adds (`<s>`, `</s>`, `[CLS]`,
  `[SEP]`) are context, never masked or counted.
- Masking is batched: the |W| masked copies of every text in a batch are stacked and run
  `mask_batch_size` at a time, and only the masked position's hidden state goes through the LM head,
  so memory holds one vocabulary row per copy instead of one per token. The result equals a
  one-mask-at-a-time loop (tested on BERT, RoBERTa, ELECTRA and DistilBERT architectures).
- Texts are cut to the model's window (512 tokens for RoBERTa) before masking.

## Paper default and variants
The blind-spots paper (He et al., 2023) uses RoBERTa-large (`roberta-large`) on WikiText
open-ended generation. No masked LM with its LM head exists offline on this project's machines
(the offline MiniLM encoder has no MLM head), so offline the module needs a local folder; the tests
run it on tiny randomly initialised models.

## Blind spots the papers found
- **Frequent n-grams**: a sequence of frequent 4-grams gets a better MLM-PPL than the gold text.
- **Repetition**: repeating the last 4-gram of a text improves its MLM-PPL.
- **Sentence switching**: MLM-PPL ranks switched sentences below the gold text, but its slope is
  much flatter than for other noise: it is nearly insensitive to sentence order.
- **Truncation**: a correct ranking with a flat slope; cutting the text costs little.
""",
    requirements=("torch", "transformers"),
)


@register_scorer
class MlmPpl(lm.ModelScorer):
    """Negated pseudo-perplexity under any masked LM (a Hub id or a local folder)."""

    name = "mlm_ppl"
    card = _MLM_PPL_CARD
    outputs = ("mlm_ppl",)
    uses_references = "none"
    uses_source = "none"
    version = "1"

    def __init__(self, model: str = DEFAULT_MODEL, max_length: int | None = None,
                 mask_batch_size: int = 64, device: str | None = None,
                 precision: str | None = None, token_budget: int | None = None) -> None:
        if int(mask_batch_size) < 1:
            raise ValueError(f"mask_batch_size must be at least 1, got {mask_batch_size!r}")
        # how the masked copies are grouped does not change the scores: not a cache key
        super().__init__(device, precision, token_budget, model=str(model), max_length=max_length)
        self._mask_batch_size = int(mask_batch_size)

    def score_batch(self, batch: Sequence[ScoreInput]) -> list[dict[str, float]]:
        tokenizer, model = load_masked_lm(self.config["model"], self.weight_dtype())
        model = lm.place(model, self._device)
        if tokenizer.mask_token_id is None:
            raise ValueError(f"model {self.config['model']!r} has no mask token: not a masked LM")
        limit = lm.max_positions(tokenizer, model, self.config["max_length"])
        encoded = tokenizer([item.hypothesis for item in batch], truncation=True,
                            max_length=limit)["input_ids"]
        jobs = [(row, pos) for row, ids in enumerate(encoded)
                for pos in maskable_positions(tokenizer, ids)]
        counts = [0] * len(batch)
        fill = lm.pad_id(tokenizer)
        if self.on_device_path():
            totals = self._totals_on_device(model, tokenizer.mask_token_id, fill, encoded, jobs)
            for row, _ in jobs:
                counts[row] += 1
            return [{"mlm_ppl": lm.negated_perplexity(lm.mean_or_nan(total, count))}
                    for total, count in zip(totals, counts, strict=True)]
        totals, counts = masked_totals(model, tokenizer.mask_token_id, fill, encoded, jobs,
                                       self._mask_batch_size)
        return [{"mlm_ppl": lm.negated_perplexity(lm.mean_or_nan(total, count))}
                for total, count in zip(totals, counts, strict=True)]

    def _totals_on_device(self, model: Any, mask_id: int, fill: int,
                          encoded: Sequence[Sequence[int]], jobs: Sequence[tuple[int, int]]
                          ) -> list[float]:
        """Each text's sum of log-probabilities over its masked copies: the copies in token
        batches, each batch's log-probabilities brought back at once."""

        def launch(chunk: list[int]) -> Any:
            picked = [jobs[k] for k in chunk]
            return masked_logprobs_on_device(model, [encoded[row] for row, _ in picked],
                                             [pos for _, pos in picked], mask_id, fill,
                                             self.precision())

        per_copy = _device.sums_by_batch(launch, [len(encoded[row]) for row, _ in jobs],
                                         self.token_budget(), self.name)
        totals = [0.0] * len(encoded)
        for (row, _), value in zip(jobs, per_copy, strict=True):
            totals[row] += value
        return totals
