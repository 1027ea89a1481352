"""Running a model metric close to the device's limit: precision, token-budget batches, a split
and retry when a batch runs out of memory, and the likelihood metrics' device-side gather.

See ``docs/gpu.md``. What is decided here, once for every model metric:

* **precision** (the ``precision`` option): ``fp32`` (plain float32), ``tf32`` (float32 weights,
  the matrix units' TF32 mode for matrix products), ``bf16``/``fp16`` (a half-precision copy of
  the model) or ``auto``: bf16 on a CUDA device that supports it, fp32 elsewhere (the measured
  verdicts behind that choice are in ``docs/gpu.md``). A precision that is asked for is part of
  the scorer's configuration, so of the cache key and of the run's signature; ``auto`` is keyed
  by what it resolves to. No precision asked keeps today's computation on a CPU byte for byte.
* **batches by tokens**: longest first, as many rows as fit ``rows x longest <= budget``;
* **out of memory**: a batch that does not fit is split in two and each half retried, with one
  warning line saying so; a single row that does not fit is an error naming the budget to lower;
* **one host synchronisation per batch**: the likelihood metrics take the last hidden state
  (for a causal LM without a padding mask: padding is on the right, so under the causal mask no
  real token sees a pad, and attention runs its fused causal kernel),
  apply the LM head to chunks of the scored positions only, gather the target token's
  log-probability on the device and bring back one sum per row when the batch is done, while the
  next batch is padded, pinned and copied (the device computes asynchronously meanwhile).

Torch is imported inside the functions, so that a warm score cache never imports it.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, TypeVar

#: the values of every model metric's ``precision`` option
PRECISIONS = ("fp32", "tf32", "bf16", "fp16", "auto")
#: tokens (rows x longest row) per batch on a CUDA device and on a CPU, when not given
DEFAULT_TOKEN_BUDGET = {"cuda": 65_536, "cpu": 4_096}
#: inputs per ``score_batch`` call on the device path (the token budget cuts them into batches)
DEVICE_ROWS = 8_192
#: scored positions per LM-head chunk: the (chunk, vocabulary) logits are the largest tensor
HEAD_CHUNK = 8_192

T = TypeVar("T")


def checked_precision(precision: str | None) -> str | None:
    """``precision`` lower-cased, or a ValueError listing the valid values."""
    if precision is None:
        return None
    value = str(precision).lower()
    if value not in PRECISIONS:
        raise ValueError(f"precision must be one of {', '.join(PRECISIONS)}, got {precision!r}")
    return value


def checked_budget(token_budget: int | None) -> int | None:
    if token_budget is None:
        return None
    if int(token_budget) < 1:
        raise ValueError(f"token_budget must be at least 1, got {token_budget!r}")
    return int(token_budget)


def target_device(device: str | None) -> Any:
    """The torch device a scorer runs on: ``device``, else CUDA when there is one, else CPU."""
    import torch

    return torch.device(device or ("cuda" if torch.cuda.is_available() else "cpu"))


def resolve_precision(precision: str | None, device: Any) -> str:
    """The precision actually used: ``auto`` is bf16 on a CUDA device with bf16, else fp32."""
    import torch

    if precision in (None, "fp32"):
        return "fp32"
    if precision == "auto":
        if device.type == "cuda" and torch.cuda.is_bf16_supported():
            return "bf16"
        return "fp32"
    return precision


def weight_dtype(precision: str) -> str | None:
    """The dtype of the model's weights under ``precision`` (None: the float32 as loaded)."""
    return {"bf16": "bfloat16", "fp16": "float16"}.get(precision)


@contextlib.contextmanager
def matmul_precision(precision: str) -> Iterator[None]:
    """TF32 matrix products while active when ``precision`` is tf32; nothing otherwise."""
    import torch

    if precision != "tf32":
        yield
        return
    before = torch.get_float32_matmul_precision()
    torch.set_float32_matmul_precision("high")
    try:
        yield
    finally:
        torch.set_float32_matmul_precision(before)


def token_batches(lengths: Sequence[int], budget: int) -> list[list[int]]:
    """Indices longest first, in batches of as many rows as keep rows x longest within
    ``budget`` (a row longer than the budget is a batch of its own)."""
    order = sorted(range(len(lengths)), key=lambda i: -lengths[i])
    batches: list[list[int]] = []
    for index in order:
        if batches and (len(batches[-1]) + 1) * lengths[batches[-1][0]] <= budget:
            batches[-1].append(index)
        else:
            batches.append([index])
    return batches


def is_out_of_memory(error: BaseException) -> bool:
    """Whether ``error`` is an allocator's refusal: CUDA's out-of-memory error, or the CPU
    allocator's ``can't allocate memory`` (under a process memory limit)."""
    import torch

    return isinstance(error, torch.OutOfMemoryError) or (
        isinstance(error, RuntimeError) and "can't allocate memory" in str(error))


class BatchTooLargeError(RuntimeError):
    """One row alone does not fit in the device's memory."""


def split_on_oom(run: Callable[[list[int]], T], rows: list[int], metric: str,
                 ) -> list[tuple[list[int], T]]:
    """``run(rows)``; when it runs out of memory, the rows split in two halves, each retried the
    same way, with one warning line. (rows, result) pairs in order."""
    import torch

    try:
        return [(rows, run(rows))]
    except Exception as error:
        if not is_out_of_memory(error):
            raise
        message = str(error).splitlines()[0][:160]
    if torch.cuda.is_available():
        torch.cuda.empty_cache()
    if len(rows) == 1:
        raise BatchTooLargeError(f"{metric}: one text alone ran out of memory ({message}); "
                                 f"lower max_length or free the device")
    half = len(rows) // 2
    warnings.warn(f"{metric}: a batch of {len(rows)} texts ran out of memory; split into "
                  f"{half} + {len(rows) - half} and retried", RuntimeWarning, stacklevel=2)
    return split_on_oom(run, rows[:half], metric) + split_on_oom(run, rows[half:], metric)


def right_pad(sequences: Sequence[Sequence[int]], fill: int) -> tuple[Any, Any]:
    """(ids, attention mask) tensors, padded on the right to the longest sequence."""
    import torch

    width = max(len(s) for s in sequences)
    ids = torch.full((len(sequences), width), fill, dtype=torch.long)
    mask = torch.zeros((len(sequences), width), dtype=torch.long)
    for row, seq in enumerate(sequences):
        ids[row, : len(seq)] = torch.as_tensor(seq, dtype=torch.long)
        mask[row, : len(seq)] = 1
    return ids, mask


def padded_on_device(sequences: Sequence[Sequence[int]], fill: int, device: Any
                     ) -> tuple[Any, Any]:
    """(ids, attention mask) padded on the right (:func:`right_pad`), built on the host, pinned
    when the device is CUDA, and copied without waiting (the copy overlaps the device's current
    work)."""
    ids, mask = right_pad(sequences, fill)
    return pinned_to(ids, device), pinned_to(mask, device)


def _to_device(values: list[int], device: Any) -> Any:
    import torch

    return pinned_to(torch.tensor(values, dtype=torch.long), device)


def pinned_to(tensor: Any, device: Any) -> Any:
    """A host tensor on ``device``, through pinned memory and without waiting when CUDA."""
    if device.type == "cuda":
        tensor = tensor.pin_memory()
    return tensor.to(device, non_blocking=True)


def gathered_logprobs(hidden: Any, head: Any, targets: Any, chunk: int = HEAD_CHUNK) -> Any:
    """log p(target) at each of ``hidden``'s rows (positions, hidden size): the LM head applied
    to ``chunk`` positions at a time, the log-softmax taken in float32, only the target's value
    kept. The full (positions, vocabulary) logits never exist at once."""
    import torch

    out = torch.empty(hidden.shape[0], dtype=torch.float32, device=hidden.device)
    for start in range(0, hidden.shape[0], chunk):
        logits = head(hidden[start: start + chunk]).float()
        picked = logits.gather(-1, targets[start: start + chunk].unsqueeze(-1)).squeeze(-1)
        out[start: start + chunk] = picked - torch.logsumexp(logits, dim=-1)
    return out


def fused_gelu(model: Any) -> Any:
    """``model`` with GPT-2's ``gelu_new`` modules (the tanh approximation of GELU, written as
    six element-wise operations) replaced by torch's one-kernel GELU of the same formula. Done
    on the half-precision copies only: in bf16 the fused kernel also rounds once instead of six
    times. Measured on an H200 with a GPT-2-large-shaped model: the body 1.4x faster."""
    import torch

    for parent in list(model.modules()):
        for name, child in list(parent.named_children()):
            if type(child).__name__ == "NewGELUActivation":
                setattr(parent, name, torch.nn.GELU(approximate="tanh"))
    return model


def causal_head(model: Any) -> tuple[Any, Any] | None:
    """(the transformer under the LM head, the head) of a causal LM whose logits are the head
    applied to the last hidden state; None when the model transforms its logits further."""
    config = model.config
    if getattr(config, "final_logit_softcapping", None) or getattr(config, "logit_scale", None):
        return None
    base, head = getattr(model, "base_model", None), model.get_output_embeddings()
    if base is None or base is model or head is None:
        return None
    return base, head


def sums_by_batch(launch: Callable[[list[int]], Any], lengths: Sequence[int], budget: int,
                  metric: str) -> list[float]:
    """Each item's total (a float) by :func:`values_by_batch`."""
    return [float(total) for total in values_by_batch(launch, lengths, budget, metric)]


def values_by_batch(launch: Callable[[list[int]], Any], lengths: Sequence[int], budget: int,
                    metric: str) -> list[Any]:
    """Each item's value, computed by ``launch(rows)`` (which queues a batch on the device and
    returns a tensor whose first axis is its rows) over token batches of ``lengths``, split on
    running out of memory; a batch's values are brought back (the one host synchronisation,
    ``tolist``) after the next batch is queued, so the host prepares while the device computes."""
    totals: list[Any] = [None] * len(lengths)
    pending: tuple[list[int], Any] | None = None

    def collect(done: tuple[list[int], Any]) -> None:
        rows, values = done
        for k, value in zip(rows, values.tolist(), strict=True):
            totals[k] = value

    for rows in token_batches(lengths, budget):
        for part, sums in split_on_oom(launch, rows, metric):
            if pending is not None:
                collect(pending)
            pending = (part, sums)
    if pending is not None:
        collect(pending)
    return totals


def scored_positions(spans: Sequence[tuple[int, int]], width: int, device: Any
                     ) -> tuple[Any, Any]:
    """(flat indices into a (rows, width) grid, owning row) of positions ``[first, end)`` of
    each row, built on the host (a boolean mask on the device would wait for the device to
    count it) and copied without waiting."""
    flat: list[int] = []
    owner: list[int] = []
    for row, (first, end) in enumerate(spans):
        flat.extend(range(row * width + first, row * width + end))
        owner.extend([row] * (end - first))
    return _to_device(flat, device), _to_device(owner, device)


def row_sums(picked: Any, owner: Any, rows: int) -> Any:
    """Per-row float64 totals of ``picked`` (on the device)."""
    import torch

    sums = torch.zeros(rows, dtype=torch.float64, device=picked.device)
    return sums.index_add_(0, owner, picked.double())


def causal_sums_on_device(model: Any, sequences: Sequence[Sequence[int]], starts: Sequence[int],
                          fill: int, budget: int, precision: str, metric: str
                          ) -> list[tuple[float, int]]:
    """(sum of log p(token | tokens before it), count) over ``seq[start:]`` for each sequence,
    as :func:`blindspot.scorers._lm_utils.causal_logprob_sums` computes them, with batches by
    ``budget`` tokens, the head and the gather in chunks on the device, one host
    synchronisation per batch, and the next batch prepared while the device works."""
    import torch

    todo = [i for i, seq in enumerate(sequences) if len(seq) > max(starts[i], 1)]
    device = next(model.parameters()).device
    if precision in ("bf16", "fp16"):
        fused_gelu(model)
    parts = causal_head(model)

    def launch(rows: list[int]) -> Any:
        """Queue one batch on the device; the per-row sums, not yet brought back."""
        batch = [sequences[todo[k]] for k in rows]
        ids, _ = padded_on_device(batch, fill, device)
        # target p is predicted from position p - 1: positions [first - 1, end - 1) of the
        # hidden states, whose grid is one shorter than the ids'
        flat, owner = scored_positions([(max(starts[todo[k]], 1) - 1, len(batch[b]) - 1)
                                        for b, k in enumerate(rows)], ids.shape[1] - 1, device)
        with torch.inference_mode(), matmul_precision(precision):
            targets = ids[:, 1:].reshape(-1).index_select(0, flat)
            # right padding under a causal mask: no real token sees a pad, so no padding mask
            # is needed, and attention can take its fused causal kernel (flash attention)
            if parts is not None:
                base, head = parts
                hidden = base(input_ids=ids, use_cache=False)[0]
            else:
                hidden, head = model(input_ids=ids, use_cache=False).logits, torch.nn.Identity()
            hidden = hidden[:, :-1].reshape(-1, hidden.shape[-1]).index_select(0, flat)
            return row_sums(gathered_logprobs(hidden, head, targets), owner, len(rows))

    totals = sums_by_batch(launch, [len(sequences[i]) for i in todo], budget, metric)
    results: list[tuple[float, int]] = [(0.0, 0)] * len(sequences)
    for k, i in enumerate(todo):
        results[i] = (totals[k], len(sequences[i]) - max(starts[i], 1))
    return results


def seq2seq_sums_on_device(model: Any, sources: Sequence[Sequence[int]],
                           targets: Sequence[Sequence[int]], fill: int, budget: int,
                           precision: str, metric: str) -> list[float]:
    """Sum of log p(target token | source, target before it) of each (source, target) pair
    under an encoder-decoder model, as BARTScore computes it: batches by ``budget`` tokens
    (source and target together), the model's own logits (in its precision) read only at the
    target's tokens, the log-softmax in float32 in chunks, one host synchronisation per batch."""
    import torch

    device = next(model.parameters()).device

    def launch(rows: list[int]) -> Any:
        ids, mask = padded_on_device([sources[k] for k in rows], fill, device)
        labels, _ = padded_on_device([targets[k] for k in rows], fill, device)
        flat, owner = scored_positions([(0, len(targets[k])) for k in rows], labels.shape[1],
                                       device)
        with torch.inference_mode(), matmul_precision(precision):
            decoder_ids = model.prepare_decoder_input_ids_from_labels(labels=labels)
            logits = model(input_ids=ids, attention_mask=mask, decoder_input_ids=decoder_ids,
                           use_cache=False).logits
            picked = gathered_logprobs(logits.reshape(-1, logits.shape[-1]).index_select(0, flat),
                                       torch.nn.Identity(), labels.reshape(-1).index_select(0, flat))
            return row_sums(picked, owner, len(rows))

    lengths = [len(s) + len(t) for s, t in zip(sources, targets, strict=True)]
    return sums_by_batch(launch, lengths, budget, metric)


def padded_encoding(encodings: Sequence[Mapping[str, Sequence[int]]], fill: int, device: Any
                    ) -> dict[str, Any]:
    """A tokenizer's unpadded outputs for a batch (``input_ids`` and any ``token_type_ids``)
    padded on the right, with the attention mask, on ``device`` (:func:`padded_on_device`)."""
    ids, mask = padded_on_device([e["input_ids"] for e in encodings], fill, device)
    inputs = {"input_ids": ids, "attention_mask": mask}
    if "token_type_ids" in encodings[0]:
        inputs["token_type_ids"] = padded_on_device([e["token_type_ids"] for e in encodings], 0,
                                                    device)[0]
    return inputs


def encoded_rows_on_device(model: Any, forward: Callable[[dict[str, Any]], Any],
                           encodings: Sequence[Mapping[str, Sequence[int]]], fill: int,
                           budget: int, precision: str, metric: str) -> list[Any]:
    """``forward(padded inputs)``'s per-row values (a tensor with the rows first, computed on the
    device) over token batches of ``encodings`` (a tokenizer's unpadded, already truncated
    outputs), split on running out of memory, one host synchronisation per batch: the shared
    path of the classifier and single-step metrics (BLEURT, MENLI's NLI, UniEval's answer)."""
    import torch

    device = next(model.parameters()).device

    def launch(rows: list[int]) -> Any:
        inputs = padded_encoding([encodings[k] for k in rows], fill, device)
        with torch.inference_mode(), matmul_precision(precision):
            return forward(inputs)

    return values_by_batch(launch, [len(e["input_ids"]) for e in encodings], budget, metric)


def pair_encodings(tokenizer: Any, pairs: Sequence[tuple[str, str]], limit: int
                   ) -> list[dict[str, list[int]]]:
    """Each (first, second) text pair tokenized as the model reads it, truncated to ``limit``
    tokens, unpadded (the token batches pad them)."""
    if not pairs:
        return []
    enc = tokenizer([a for a, _ in pairs], [b for _, b in pairs], truncation=True,
                    max_length=limit)
    fields = [f for f in ("input_ids", "token_type_ids") if f in enc]
    return [{f: list(enc[f][i]) for f in fields} for i in range(len(pairs))]
