"""Benchmark: model metrics on a GPU against the chip's measured bf16 matrix-multiply rate.

Builds random-initialised models of the papers' shapes from configs with the offline tokenizers
(compute is what a speed figure needs, not the weights), measures the device's bf16 matrix
product rate in the same run, and prints for each metric: tokens/s, achieved TFLOP/s (useful
FLOPs: 2 x parameters x real tokens plus attention; padding is not counted), the share of the
measured rate, and the ratio to the direct library call on the same texts.

* GPT-PPL, GPT-2-large-shaped causal LM (36 layers, 1280 wide, 20 heads) with SmolLM2's 49,152
  token vocabulary, on ``--n`` WikiText golds: ours (``precision=bf16``, batches by
  ``--token-budget`` tokens) through ``score_rows``, against the scorer as it computes without a
  precision (float32, 8 rows a batch, full-vocabulary log-softmax: ``causal_logprob_sums``) and
  a plain transformers float32 loop, both on the first ``--baseline-n`` golds (tokens/s compared);
  and ``--cells`` cells of a truncation curve over the golds scored in turn (the next cell
  tokenized while the device scores this one), as a run scores them, against one call a cell;
* BERTScore, BERT-large-shaped encoder (24 layers, 1024 wide; bert_score cuts it at layer 17)
  with MiniLM's vocabulary, on ``--pairs`` WMT21 system outputs each with its 2 references:
  ours (``precision=bf16``) through ``score_rows`` against ``bert_score.BERTScorer.score``
  (the model loaded before the clock for both; fast tokenizers for both; the best reference,
  bert_score's own reduction);
* BARTScore, BART-large-shaped, on WMT21 (reference, output) pairs, against today's scorer;
* MENLI's NLI model (RoBERTa-large-shaped, 3 classes), BLEURT (BLEURT-20-shaped: RemBERT's
  32 x 1152) and UniEval's Boolean answer (T5-large-shaped), each against a plain float32
  transformers loop on the same pairs (today's scorers of these run their model on the CPU);
* COMET, a ``RegressionMetric`` estimator on an XLM-R-large-shaped encoder (24 x 1024; BERT
  architecture with MiniLM's vocabulary: the same body compute), on WMT21 (source, output,
  reference) triples: ours (``comet_scores_on_device``) against COMET's own ``model.predict``
  (its Lightning Trainer, float32, batches of 16) on the first ``--baseline-n`` triples;
* MLM-PPL (RoBERTa-large-shaped masked LM) against today's float32 ``masked_logprobs`` loop,
  MAUVE's features (GPT-2-large-shaped) against today's ``last_token_states`` loop, and
  MoverScore (DistilBERT-shaped, the transport on the host) against the scorer with no precision;
* an out-of-memory split on the device: a memory cap set with
  ``torch.cuda.set_per_process_memory_fraction`` and a token budget too large for it.

    python benchmarks/gpu_scoring.py --baseline-n 1000  # on a GPU: the paper shapes
    python benchmarks/gpu_scoring.py --size tiny      # anywhere: a smoke test at tiny sizes

The figures measured on an H200 are in ``docs/gpu.md``.
"""

from __future__ import annotations

import argparse
import copy
import json
import math
import statistics
import sys
import tempfile
import time
import warnings
from dataclasses import dataclass
from itertools import islice
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

#: (layers, width, heads, mlp width) of the paper-shaped models, and tiny stand-ins
SHAPES = {
    "paper": {"gpt": (36, 1280, 20, 5120), "bert": (24, 1024, 16, 4096), "bert_layer": 17,
              "bart": (12, 1024, 16, 4096), "t5": (24, 1024, 16, 4096),
              "nli": (24, 1024, 16, 4096), "bleurt": (32, 1152, 18, 4608),
              "mlm": (24, 1024, 16, 4096), "distilbert": (6, 768, 12, 3072),
              "comet": (24, 1024, 16, 4096)},
    "tiny": {"gpt": (2, 64, 2, 256), "bert": (2, 64, 2, 256), "bert_layer": 2,
             "bart": (1, 64, 2, 256), "t5": (1, 64, 2, 256), "nli": (2, 64, 2, 256),
             "bleurt": (2, 64, 2, 256), "mlm": (2, 64, 2, 256),
             "distilbert": (2, 64, 2, 256), "comet": (2, 64, 2, 256)},
}


@dataclass
class Row:
    """One printed line: a metric's figures."""

    metric: str
    what: str
    seconds: float
    tokens: int
    flops: float
    baseline: str = ""
    baseline_tokens_per_s: float = math.nan

    def line(self, rate: float) -> str:
        tps = self.tokens / self.seconds
        tflops = self.flops / self.seconds / 1e12
        ratio = tps / self.baseline_tokens_per_s if self.baseline_tokens_per_s else math.nan
        return (f"{self.metric:<10} {self.what:<34} {self.seconds:8.2f} s {tps:12,.0f} tok/s "
                f"{tflops:8.1f} TFLOP/s {100 * tflops / rate:6.1f}% of bf16  x{ratio:6.1f} vs "
                f"{self.baseline}")


def log(message: str) -> None:
    print(message, flush=True)


def sync(device) -> None:
    import torch

    if device.type == "cuda":
        torch.cuda.synchronize()


def matmul_rate(device, size: int) -> float:
    """The bf16 matrix product rate in TFLOP/s: median of timed products on random data."""
    import torch

    a = torch.randn(size, size, device=device, dtype=torch.bfloat16)
    b = torch.randn(size, size, device=device, dtype=torch.bfloat16)
    for _ in range(3):
        a @ b
    times = []
    for _ in range(10):
        sync(device)
        start = time.perf_counter()
        a @ b
        sync(device)
        times.append(time.perf_counter() - start)
    return 2 * size ** 3 / statistics.median(times) / 1e12


def wikitext_golds(data: Path, n: int) -> list[str]:
    with open(data / "wikitext103_open_ended.jsonl", encoding="utf-8") as fh:
        return [json.loads(line)["gold"] for line in islice(fh, n)]


def wmt_pairs(data: Path, n: int) -> tuple[list[str], list[list[str]]]:
    """``n`` system outputs and their 2 references (gold and reference) from WMT21 de-en."""
    hyps, refs = [], []
    with open(data / "wmt21_de_en_translation.jsonl", encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            for output in row["systems"].values():
                hyps.append(output)
                refs.append([row["gold"], row["reference"]])
                if len(hyps) == n:
                    return hyps, refs
    return hyps, refs


def body_flops(layers: int, width: int, mlp: int, lengths: list[int], causal: bool) -> float:
    """Forward FLOPs of a transformer body over sequences of ``lengths``: 2 x the layer weights
    per token, and the attention products (halved under a causal mask)."""
    per_token = 2 * layers * (4 * width * width + 2 * width * mlp)
    attention = sum(4 * layers * width * n * n for n in lengths) * (0.5 if causal else 1.0)
    return per_token * sum(lengths) + attention


def build_gpt(shape: tuple[int, int, int, int], vocab: int, device, folder: Path):
    """A GPT-2-shaped causal LM, random weights, float32, registered under ``folder`` as the
    project's loader would load it (the bf16 copy too), with SmolLM2's tokenizer there."""
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    from blindspot import models

    layers, width, heads, mlp = shape
    config = GPT2Config(n_layer=layers, n_embd=width, n_head=heads, n_inner=mlp, vocab_size=vocab,
                        n_positions=1024)
    with torch.device(device):
        model = GPT2LMHeadModel._from_config(config, attn_implementation="sdpa").eval()
    model.config.architectures = ["GPT2LMHeadModel"]  # what MAUVE reads to take it as causal
    model.config.save_pretrained(folder)
    path = models.resolve_model(str(folder))
    models._CACHE[("causal-lm", path)] = model
    models._CACHE[("causal-lm-bfloat16", path)] = copy.deepcopy(model).to(torch.bfloat16)
    return model


def copy_tokenizer(source: str, folder: Path) -> None:
    from transformers import AutoTokenizer

    AutoTokenizer.from_pretrained(source).save_pretrained(folder)


def bert_encoder_folder(args, device, shape: tuple[int, int, int, int], prefix: str):
    """(folder, tokenizer): a BERT-architecture encoder of ``shape``, random weights, saved in
    a new folder with the offline MiniLM's tokenizer (or ``--bert-tokenizer``)."""
    import torch
    from transformers import AutoTokenizer, BertConfig, BertModel

    from blindspot.models import resolve_model

    folder = Path(tempfile.mkdtemp(prefix=prefix))
    copy_tokenizer(args.bert_tokenizer or resolve_model("minilm"), folder)
    tokenizer = AutoTokenizer.from_pretrained(folder)
    layers, width, heads, mlp = shape
    config = BertConfig(num_hidden_layers=layers, hidden_size=width, num_attention_heads=heads,
                        intermediate_size=mlp, vocab_size=len(tokenizer))
    with torch.device(device):
        BertModel(config).save_pretrained(folder)
    return folder, tokenizer


def models_cache_half(folder: Path):
    from blindspot import models

    return models._CACHE[("causal-lm-bfloat16", models.resolve_model(str(folder)))]


def timed(device, work, repeat: int = 3) -> float:
    """Median seconds of ``work()`` after one warm-up."""
    work()
    times = []
    for _ in range(repeat):
        sync(device)
        start = time.perf_counter()
        work()
        sync(device)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def breakdown(model, sequences, budget: int, device, flops) -> None:
    """Where one token batch's time goes (bf16): the body with and without the padding mask,
    with the fused tanh GELU (the same function as GPT-2's ``gelu_new``), and the LM head."""
    import torch

    from blindspot.scorers import _device

    lengths = [len(s) for s in sequences]
    rows = _device.token_batches(lengths, budget)[0]
    batch = [sequences[i] for i in rows]
    ids, mask = _device.padded_on_device(batch, 0, device)
    base, head = _device.causal_head(model)
    from transformers.activations import NewGELUActivation

    with torch.inference_mode():
        for block in base.h:  # GPT-2's own gelu_new
            block.mlp.act = NewGELUActivation()
        masked = timed(device, lambda: base(input_ids=ids, attention_mask=mask, use_cache=False))
        plain = timed(device, lambda: base(input_ids=ids, use_cache=False))
        _device.fused_gelu(model)
        fused = timed(device, lambda: base(input_ids=ids, use_cache=False))
        hidden = base(input_ids=ids, use_cache=False)[0].reshape(-1, model.config.n_embd)
        targets = ids.reshape(-1)
        head_s = timed(device, lambda: _device.gathered_logprobs(hidden, head, targets))
    work = flops(batch)
    log(f"one batch of {len(rows)} texts x {ids.shape[1]} tokens ({sum(map(len, batch)):,} real): "
        f"body with padding mask {masked * 1e3:.1f} ms ({work / masked / 1e12:.0f} TFLOP/s), "
        f"without {plain * 1e3:.1f} ms ({work / plain / 1e12:.0f}), with fused GELU "
        f"{fused * 1e3:.1f} ms ({work / fused / 1e12:.0f}); LM head + gather over all "
        f"{hidden.shape[0]:,} positions {head_s * 1e3:.1f} ms")


def bench_gpt(args, device, shape, rows: list[Row]) -> None:
    import torch
    from transformers import AutoTokenizer

    from blindspot.models import resolve_model
    from blindspot.scorers import _lm_utils as lm
    from blindspot.scorers.gpt_ppl import GptPpl, causal_sequences
    from blindspot.scoring.engine import score_rows

    folder = Path(tempfile.mkdtemp(prefix="gpt-shaped-"))
    copy_tokenizer(args.gpt_tokenizer or resolve_model("smollm2"), folder)
    tokenizer = AutoTokenizer.from_pretrained(folder)
    model = build_gpt(shape, len(tokenizer), device, folder)
    texts = wikitext_golds(args.data, args.n)
    layers, width, _, mlp = shape
    params = sum(p.numel() for p in model.parameters())
    log(f"GPT-2-large-shaped: {params / 1e9:.2f}B parameters, vocabulary {len(tokenizer):,}")

    def flops(sequences: list[list[int]]) -> float:
        scored = sum(len(s) - 1 for s in sequences)
        return body_flops(layers, width, mlp, [len(s) for s in sequences], True) \
            + 2 * width * len(tokenizer) * scored

    limit = lm.max_positions(tokenizer, model)
    sequences, _ = causal_sequences(tokenizer, texts, limit)
    tokens = sum(len(s) - 1 for s in sequences)
    base_n = min(args.baseline_n, len(texts))
    base_seqs = sequences[:base_n]
    base_tokens = sum(len(s) - 1 for s in base_seqs)

    # today's scorer: float32, 8 rows a batch, full-vocabulary log-softmax, a sync per row
    lm.causal_logprob_sums(model, base_seqs[:8], [1] * 8, lm.pad_id(tokenizer), 8)
    sync(device)
    start = time.perf_counter()
    today = lm.causal_logprob_sums(model, base_seqs, [1] * base_n, lm.pad_id(tokenizer), 8)
    sync(device)
    today_s = time.perf_counter() - start
    rows.append(Row("gpt_ppl", f"today's scorer fp32 ({base_n} texts)", today_s, base_tokens,
                    flops(base_seqs)))

    # a plain transformers loop, float32, batches of 8 in data order
    pad = lm.pad_id(tokenizer)
    start = time.perf_counter()
    plain = []
    for i in range(0, base_n, 8):
        ids, mask = lm.right_pad(base_seqs[i: i + 8], pad)
        ids, mask = ids.to(device), mask.to(device)
        with torch.inference_mode():
            logits = model(input_ids=ids, attention_mask=mask).logits
        labels = ids[:, 1:].masked_fill(mask[:, 1:] == 0, -100)
        nll = torch.nn.functional.cross_entropy(logits[:, :-1].reshape(-1, logits.shape[-1]),
                                                labels.reshape(-1), reduction="none")
        plain += (-nll.view(labels.shape).sum(dim=1)).tolist()
    sync(device)
    plain_s = time.perf_counter() - start
    rows.append(Row("gpt_ppl", f"plain transformers fp32 ({base_n})", plain_s, base_tokens,
                    flops(base_seqs)))

    results = {}
    runs = [("bf16", budget) for budget in args.budgets if budget != args.token_budget]
    for precision, budget in [("bf16", args.token_budget), ("fp32", args.token_budget), *runs]:
        scorer = GptPpl(model=str(folder), precision=precision, token_budget=budget)
        score_rows(scorer, texts, cache=None)  # warm-up: kernels, handles, the allocator
        sync(device)
        start = time.perf_counter()
        results.setdefault(precision, score_rows(scorer, texts, cache=None)["gpt_ppl"])
        sync(device)
        seconds = time.perf_counter() - start
        rows.append(Row("gpt_ppl", f"ours {precision} ({len(texts)}, {budget // 1024}k tok)",
                        seconds, tokens,
                        flops(sequences), "today's scorer", base_tokens / today_s))
    cells_in_turn(args, device, folder, tokenizer, texts, limit, flops, rows,
                  base_tokens / today_s)
    rel = [abs(a - b) / abs(b) for a, b in zip(results["bf16"], results["fp32"], strict=True)
           if not math.isnan(b)]
    mean_today = [t / c for t, c in today]
    ours32 = [-math.log(-v) for v in results["fp32"][:base_n]]  # mean log-prob per text
    log(f"gpt_ppl: {tokens:,} scored tokens; bf16 vs fp32 relative difference median "
        f"{statistics.median(rel):.2e}, max {max(rel):.2e}; ours fp32 vs today's scorer max |mean "
        f"log p| difference "
        f"{max(abs(a - b) for a, b in zip(ours32, mean_today, strict=False)):.2e}; plain loop "
        f"vs today's sums {max(abs(a - t) for a, (t, _) in zip(plain, today, strict=True)):.2e}")

    breakdown(models_cache_half(folder), sequences, args.token_budget, device,
              lambda seqs: body_flops(layers, width, mlp, [len(x) for x in seqs], True))

    if device.type == "cuda":  # a batch that does not fit: split and retried
        torch.cuda.empty_cache()
        cap = (torch.cuda.memory_allocated() + args.oom_headroom_gb * 2 ** 30) \
            / torch.cuda.get_device_properties(device).total_memory
        torch.cuda.set_per_process_memory_fraction(cap)
        scorer = GptPpl(model=str(folder), precision="bf16", token_budget=1 << 20)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            start = time.perf_counter()
            capped = score_rows(scorer, texts[:800], cache=None)["gpt_ppl"]
            sync(device)
        torch.cuda.set_per_process_memory_fraction(1.0)
        splits = [str(w.message) for w in caught if "out of memory" in str(w.message)]
        same = max(abs(a - b) / abs(b) for a, b in zip(capped, results["bf16"][:800], strict=True)
                   if not math.isnan(b))
        log(f"oom split: cap {args.oom_headroom_gb} GiB over the weights, one batch of 800 texts: "
            f"{len(splits)} split(s) in {time.perf_counter() - start:.2f} s, scores within "
            f"{same:.1e} of the uncapped run; first: {splits[0] if splits else 'none'}")
    del model
    from blindspot import models

    models._CACHE.clear()


def cells_in_turn(args, device, folder: Path, tokenizer, texts: list[str], limit: int, flops,
                  rows: list[Row], today_tokens_per_s: float) -> None:
    """A run's shape: ``--cells`` cells of the golds (the golds, then truncation at 0.1, 0.2...),
    each one score job sorted as the runner sorts it, scored in turn (the next cell tokenized in
    a worker while the device scores this one) against one ``score_batch`` call after another
    (tokenizing between them, as a cell-by-cell run did before). bf16, the same token budget."""
    import os

    from blindspot.perturbations.truncation import truncate
    from blindspot.scorers.gpt_ppl import GptPpl, causal_sequences
    from blindspot.scoring.engine import scores_in_turn
    from blindspot.scoring.scorer import ScoreInput

    levels = [0.1 * k for k in range(args.cells)]
    cells = [[t if p == 0 else truncate(t, p) or t for t in texts] for p in levels]
    jobs = [sorted((ScoreInput(t) for t in dict.fromkeys(cell)), key=ScoreInput.cost,
                   reverse=True) for cell in cells]
    start = time.perf_counter()
    seqs = [s for job in jobs
            for s in causal_sequences(tokenizer, [i.hypothesis for i in job], limit)[0]]
    tokenize_s = time.perf_counter() - start
    scored = sum(len(s) - 1 for s in seqs)
    log(f"gpt_ppl cells: {len(jobs)} cells, {sum(map(len, jobs)):,} texts, {scored:,} scored "
        f"tokens; tokenizing them all takes {tokenize_s:.2f} s here (TOKENIZERS_PARALLELISM="
        f"{os.environ.get('TOKENIZERS_PARALLELISM', 'unset')})")
    scorer = GptPpl(model=str(folder), precision="bf16", token_budget=args.token_budget)
    list(scores_in_turn(scorer, jobs[:2]))  # warm-up
    timings = {}
    for how, work in (("one after another", lambda: [scorer.score_batch(j) for j in jobs]),
                      ("in turn", lambda: list(scores_in_turn(scorer, jobs)))):
        sync(device)
        start = time.perf_counter()
        timings[how] = work()
        sync(device)
        rows.append(Row("gpt_ppl", f"ours bf16 {len(jobs)} cells {how}",
                        time.perf_counter() - start, scored, flops(seqs), "today's scorer",
                        today_tokens_per_s))
    assert timings["in turn"] == timings["one after another"], "in turn changed a score"


def bench_bertscore(args, device, shape, layer: int, rows: list[Row]) -> None:
    from bert_score import BERTScorer

    from blindspot.scorers.bertscore import BertScore
    from blindspot.scoring.engine import score_rows

    folder, tokenizer = bert_encoder_folder(args, device, shape, "bert-shaped-")
    layers, width, heads, mlp = shape
    hyps, refs = wmt_pairs(args.data, args.pairs)
    texts = list(dict.fromkeys([*hyps, *(r for pair in refs for r in pair)]))
    lengths = [len(ids) for ids in tokenizer([t.strip() for t in texts])["input_ids"]]
    flops = body_flops(layer, width, mlp, lengths, False)
    log(f"BERT-large-shaped at layer {layer}: {len(hyps):,} outputs x 2 references, "
        f"{len(texts):,} distinct texts, {sum(lengths):,} tokens")

    library = BERTScorer(model_type=str(folder), num_layers=layer, batch_size=64,
                         device=str(device), use_fast_tokenizer=True)
    library.score(hyps, refs)  # warm-up
    times = []
    for _ in range(2):
        sync(device)
        start = time.perf_counter()
        theirs = library.score(hyps, refs)[2].tolist()
        sync(device)
        times.append(time.perf_counter() - start)
    theirs_s = min(times)
    log(f"bert_score: {times[0]:.2f} s and {times[1]:.2f} s")
    rows.append(Row("bertscore", "bert_score.BERTScorer.score fp32", theirs_s, sum(lengths), flops))
    del library

    for precision in ("bf16", "fp32"):
        scorer = BertScore(model_type=str(folder), num_layers=layer, precision=precision,
                           references_reduce="max", use_fast_tokenizer=True,
                           token_budget=args.bert_token_budget, device=str(device))
        scorer.model()
        score_rows(scorer, hyps, refs, cache=None)  # warm-up: kernels, the allocator
        times = []
        for _ in range(2):
            scorer._embedding_cache.clear()
            sync(device)
            start = time.perf_counter()
            ours = score_rows(scorer, hyps, refs, cache=None)["f1"]
            sync(device)
            times.append(time.perf_counter() - start)
        seconds = min(times)
        scorer._embedding_cache.clear()
        encode = timed(device, lambda s=scorer: (s._embedding_cache.clear(), s.embeddings(texts)))
        match = timed(device, lambda s=scorer: s.pair_scores(
            [h for h, r in zip(hyps, refs, strict=True) for _ in r], [x for r in refs for x in r]))
        log(f"bertscore ours {precision}: {times[0]:.2f} s and {times[1]:.2f} s; encoding the "
            f"{len(texts):,} texts {encode:.2f} s, matching the pairs (vectors cached) "
            f"{match:.2f} s")
        rows.append(Row("bertscore", f"ours {precision}", seconds, sum(lengths), flops,
                        "bert_score", sum(lengths) / theirs_s))
        log(f"bertscore ours {precision} vs bert_score F1: max |difference| "
            f"{max(abs(a - b) for a, b in zip(ours, theirs, strict=True)):.2e}")
        from blindspot import models

        models._CACHE.clear()


def bench_bartscore(args, device, shape, rows: list[Row]) -> None:
    """BARTScore, BART-large-shaped (12 + 12 layers, 1024 wide) with SmolLM2's vocabulary, on
    (reference, output) pairs of WMT21: ours bf16 against the row path (today's, float32)."""
    import torch
    from transformers import AutoTokenizer, BartConfig, BartForConditionalGeneration

    from blindspot import models
    from blindspot.scorers import _lm_utils as lm
    from blindspot.scorers.bartscore import BartScore, seq2seq_mean_logprobs
    from blindspot.scoring.scorer import ScoreInput

    folder = Path(tempfile.mkdtemp(prefix="bart-shaped-"))
    copy_tokenizer(args.gpt_tokenizer or models.resolve_model("smollm2"), folder)
    tokenizer = AutoTokenizer.from_pretrained(folder)
    layers, width, heads, mlp = shape
    pad = lm.pad_id(tokenizer)
    config = BartConfig(vocab_size=len(tokenizer), d_model=width, encoder_layers=layers,
                        decoder_layers=layers, encoder_attention_heads=heads,
                        decoder_attention_heads=heads, encoder_ffn_dim=mlp, decoder_ffn_dim=mlp,
                        pad_token_id=pad, bos_token_id=pad, eos_token_id=pad,
                        decoder_start_token_id=pad, max_position_embeddings=1024)
    with torch.device(device):
        model = BartForConditionalGeneration._from_config(config, attn_implementation="sdpa")
    model.eval().config.save_pretrained(folder)
    path = models.resolve_model(str(folder))
    models._CACHE[("seq2seq-lm", path)] = model
    models._CACHE[("seq2seq-lm-bfloat16", path)] = copy.deepcopy(model).to(torch.bfloat16)
    hyps, refs = wmt_pairs(args.data, args.bart_pairs)
    pairs = [(r[0], h) for h, r in zip(hyps, refs, strict=True)]
    src = tokenizer([s for s, _ in pairs])["input_ids"]
    tgt = tokenizer([t for _, t in pairs])["input_ids"]
    lengths_e, lengths_d = [len(x) for x in src], [len(x) for x in tgt]
    params = 2 * layers * (4 * width * width + 2 * width * mlp)
    flops = (params / 2 * sum(lengths_e) + (params / 2 + 2 * layers * width * width)
             * sum(lengths_d) + 2 * width * len(tokenizer) * sum(lengths_d))
    tokens = sum(lengths_e) + sum(lengths_d)
    base_n = min(args.baseline_n, len(pairs))
    base_tokens = sum(lengths_e[:base_n]) + sum(lengths_d[:base_n])
    seq2seq_mean_logprobs(tokenizer, model, pairs[:8], 1024, 8)
    sync(device)
    start = time.perf_counter()
    today = seq2seq_mean_logprobs(tokenizer, model, pairs[:base_n], 1024, 8)
    sync(device)
    today_s = time.perf_counter() - start
    rows.append(Row("bartscore", f"today's scorer fp32 ({base_n} pairs)", today_s, base_tokens,
                    flops * base_tokens / tokens))
    # a row with its reference as the source scores exactly the pair (reference, output): its
    # faithfulness output is that pair's mean log-probability, through the scorer's own batches
    items = [ScoreInput(hypothesis, source=reference) for reference, hypothesis in pairs]
    for precision in ("bf16", "fp32"):
        scorer = BartScore(model=str(folder), precision=precision, token_budget=args.token_budget)
        scorer.score_batch(items)  # warm-up
        sync(device)
        start = time.perf_counter()
        ours = [row["faithfulness"] for row in scorer.score_batch(items)]
        sync(device)
        seconds = time.perf_counter() - start
        rows.append(Row("bartscore", f"ours {precision} ({len(pairs)} pairs)", seconds, tokens,
                        flops, "today's scorer", base_tokens / today_s))
        log(f"bartscore ours {precision} vs today's: max |mean log p difference| "
            f"{max(abs(a - b) for a, b in zip(ours, today, strict=False)):.2e}")
    models._CACHE.clear()


def plain_loop(device, model, tokenizer, firsts: list[str], seconds: list[str] | None,
               forward, batch_size: int = 16) -> list:
    """The direct transformers loop a user writes: length-sorted batches of ``batch_size``
    rows, the tokenizer's padding, float32, each batch's values brought back at once."""
    import torch

    order = sorted(range(len(firsts)), key=lambda i: -len(firsts[i]) - len((seconds or firsts)[i]))
    out: list = [None] * len(firsts)
    for start in range(0, len(order), batch_size):
        chunk = order[start: start + batch_size]
        enc = tokenizer([firsts[i] for i in chunk],
                        None if seconds is None else [seconds[i] for i in chunk],
                        padding=True, truncation=True, max_length=512, return_tensors="pt")
        with torch.inference_mode():
            values = forward({k: v.to(device) for k, v in enc.items()}).tolist()
        for i, value in zip(chunk, values, strict=True):
            out[i] = value
    return out


def time_against(device, rows: list[Row], metric: str, base_what: str, base_work, ours_work,
                 tokens: list[int], flops: list[float], base_n: int, base_values: list,
                 compare) -> None:
    """Times ``base_work()`` (on the first ``base_n`` items) and ``ours_work(precision)`` (on
    all) after a warm-up each, adds the rows, and logs the largest difference of ours from the
    baseline's values (``compare(ours, base)`` per item)."""
    base_work()
    sync(device)
    start = time.perf_counter()
    base = base_work()
    sync(device)
    base_s = time.perf_counter() - start
    base_tokens = sum(tokens[:base_n])
    rows.append(Row(metric, f"{base_what} fp32 ({base_n})", base_s, base_tokens,
                    sum(flops[:base_n])))
    base_values.extend(base)
    for precision in ("bf16", "fp32"):
        ours_work(precision)
        sync(device)
        start = time.perf_counter()
        ours = ours_work(precision)
        sync(device)
        seconds = time.perf_counter() - start
        rows.append(Row(metric, f"ours {precision} ({len(tokens)})", seconds, sum(tokens),
                        sum(flops), base_what, base_tokens / base_s))
        log(f"{metric} ours {precision} vs {base_what}: max |difference| "
            f"{max(compare(a, b) for a, b in zip(ours, base, strict=False)):.2e}")


def classifier_model(device, shape, tokenizer, labels: int, folder: Path):
    """A BERT-architecture sequence classifier of ``shape`` (RoBERTa-large, RemBERT and
    XLM-R-large differ from it in vocabulary and embeddings only, not in body compute)."""
    import torch
    from transformers import BertConfig, BertForSequenceClassification

    layers, width, heads, mlp = shape
    config = BertConfig(num_hidden_layers=layers, hidden_size=width, num_attention_heads=heads,
                        intermediate_size=mlp, vocab_size=len(tokenizer), num_labels=labels,
                        max_position_embeddings=512,
                        id2label={0: "ENTAILMENT", 1: "NEUTRAL", 2: "CONTRADICTION"}
                        if labels == 3 else None)
    with torch.device(device):
        model = BertForSequenceClassification._from_config(config, attn_implementation="sdpa")
    model.eval().config.save_pretrained(folder)
    return model


def bench_classifiers(args, device, shapes, rows: list[Row]) -> None:
    """MENLI's NLI model (RoBERTa-large-shaped, 3 classes) through ``Menli.probabilities`` and
    BLEURT-20-shaped (RemBERT's 32 layers x 1152) through ``bleurt_scores_on_device``, on WMT21
    (reference, output) pairs, against a plain float32 transformers loop on the first
    ``--baseline-n`` pairs."""
    import torch
    from transformers import AutoTokenizer

    from blindspot import models
    from blindspot.scorers import _device
    from blindspot.scorers.bleurt_score import bleurt_scores_on_device
    from blindspot.scorers.menli import Menli

    folder = Path(tempfile.mkdtemp(prefix="nli-shaped-"))
    copy_tokenizer(args.bert_tokenizer or models.resolve_model("minilm"), folder)
    tokenizer = AutoTokenizer.from_pretrained(folder)
    hyps, refs = wmt_pairs(args.data, args.bart_pairs)
    pairs = [(r[0], h) for h, r in zip(hyps, refs, strict=True)]
    tokens = [len(e["input_ids"]) for e in _device.pair_encodings(tokenizer, pairs, 512)]
    base_n = min(args.baseline_n, len(pairs))
    firsts, seconds = [a for a, _ in pairs[:base_n]], [b for _, b in pairs[:base_n]]

    model = classifier_model(device, shapes["nli"], tokenizer, 3, folder)
    path = models.resolve_model(str(folder))
    models._CACHE[("sequence-classifier", path)] = model
    models._CACHE[("sequence-classifier-bfloat16", path)] = copy.deepcopy(model).to(
        torch.bfloat16)
    layers, width, _, mlp = shapes["nli"]
    flops = [body_flops(layers, width, mlp, [n], False) for n in tokens]

    def menli(precision: str) -> list:
        scorer = Menli(model=str(folder), label_order="e,n,c", precision=precision,
                       token_budget=args.bert_token_budget)
        probs = scorer.probabilities(pairs)
        return [[probs[p][c] for c in "enc"] for p in pairs]

    time_against(device, rows, "menli", "plain loop",
                 lambda: plain_loop(device, model, tokenizer, firsts, seconds,
                                    lambda enc: model(**enc).logits.float().softmax(-1)),
                 menli, tokens, flops, base_n, [],
                 lambda a, b: max(abs(x - y) for x, y in zip(a, b, strict=True)))
    models._CACHE.clear()

    model = classifier_model(device, shapes["bleurt"], tokenizer, 1, folder)
    half = copy.deepcopy(model).to(torch.bfloat16)
    layers, width, _, mlp = shapes["bleurt"]
    flops = [body_flops(layers, width, mlp, [n], False) for n in tokens]

    def bleurt(precision: str) -> list:
        return bleurt_scores_on_device(half if precision == "bf16" else model, tokenizer, pairs,
                                       max_length=512, budget=args.bert_token_budget,
                                       precision=precision)

    time_against(device, rows, "bleurt", "plain loop",
                 lambda: plain_loop(device, model, tokenizer, firsts, seconds,
                                    lambda enc: model(**enc).logits.float().reshape(-1)),
                 bleurt, tokens, flops, base_n, [], lambda a, b: abs(a - b))
    log(f"classifiers: {len(pairs):,} pairs, {sum(tokens):,} tokens; RoBERTa-large-shaped NLI "
        f"{shapes['nli']}, BLEURT-20-shaped {shapes['bleurt']} (layers, width, heads, mlp)")


def bench_unieval(args, device, shape, rows: list[Row]) -> None:
    """UniEval's Boolean answer on a T5-large-shaped model with SmolLM2's vocabulary, on the
    coherence question over WMT21 (output, reference) pairs, through
    ``UniEval.yes_probabilities``, against a plain float32 first-decoder-step loop."""
    import torch
    from transformers import AutoTokenizer, T5Config, T5ForConditionalGeneration

    from blindspot import models
    from blindspot.scorers import _lm_utils as lm
    from blindspot.scorers.unieval import UniEval, first_token_id, unieval_question

    folder = Path(tempfile.mkdtemp(prefix="t5-shaped-"))
    copy_tokenizer(args.gpt_tokenizer or models.resolve_model("smollm2"), folder)
    tokenizer = AutoTokenizer.from_pretrained(folder)
    if tokenizer.pad_token is None:  # as UniEval's own T5 tokenizer has one
        tokenizer.pad_token = tokenizer.eos_token
        tokenizer.save_pretrained(folder)
    layers, width, heads, mlp = shape
    pad = lm.pad_id(tokenizer)
    config = T5Config(vocab_size=len(tokenizer), d_model=width, d_kv=width // heads, d_ff=mlp,
                      num_layers=layers, num_heads=heads, pad_token_id=pad, eos_token_id=pad,
                      decoder_start_token_id=pad)
    with torch.device(device):
        model = T5ForConditionalGeneration._from_config(config)
    model.eval().config.save_pretrained(folder)
    path = models.resolve_model(str(folder))
    models._CACHE[("seq2seq-lm", path)] = model
    models._CACHE[("seq2seq-lm-bfloat16", path)] = copy.deepcopy(model).to(torch.bfloat16)
    hyps, refs = wmt_pairs(args.data, args.bart_pairs)
    prompts = [unieval_question("coherence", h, r[0]) for h, r in zip(hyps, refs, strict=True)]
    tokens = [len(ids) for ids in tokenizer(prompts, truncation=True, max_length=1024)["input_ids"]]
    flops = [body_flops(layers, width, mlp, [n], False) + 2 * width * len(tokenizer)
             for n in tokens]
    base_n = min(args.baseline_n, len(prompts))
    yes, no = first_token_id(tokenizer, "Yes"), first_token_id(tokenizer, "No")

    def step(enc):
        start = torch.full((enc["input_ids"].shape[0], 1), pad, device=device)
        logits = model(**enc, decoder_input_ids=start).logits[:, 0].float()
        return torch.sigmoid(logits[:, yes] - logits[:, no])

    def ours(precision: str) -> list:
        scorer = UniEval(model=str(folder), precision=precision,
                         token_budget=args.bert_token_budget)
        return scorer.yes_probabilities(prompts)

    time_against(device, rows, "unieval", "plain loop",
                 lambda: plain_loop(device, model, tokenizer, prompts[:base_n], None, step),
                 ours, tokens, flops, base_n, [], lambda a, b: abs(a - b))
    log(f"unieval: T5-large-shaped {shape}, {len(prompts):,} prompts, {sum(tokens):,} tokens")
    models._CACHE.clear()


def bench_mlm_ppl(args, device, shape, rows: list[Row]) -> None:
    """MLM-PPL (pseudo-perplexity: one masked copy per token) on a RoBERTa-large-shaped masked
    LM with MiniLM's vocabulary, over the first ``--mlm-texts`` WMT21 system outputs: ours
    through ``score_rows`` against today's scorer's computation (float32 ``masked_logprobs`` on
    the device, 64 copies a batch by length, as the rows path cuts them)."""
    import torch
    from transformers import AutoTokenizer, BertConfig, BertForMaskedLM

    from blindspot import models
    from blindspot.scorers import _lm_utils as lm
    from blindspot.scorers.mlm_ppl import MlmPpl, maskable_positions, masked_totals
    from blindspot.scoring.engine import score_rows

    folder = Path(tempfile.mkdtemp(prefix="mlm-shaped-"))
    copy_tokenizer(args.bert_tokenizer or models.resolve_model("minilm"), folder)
    tokenizer = AutoTokenizer.from_pretrained(folder)
    layers, width, heads, mlp = shape
    config = BertConfig(num_hidden_layers=layers, hidden_size=width, num_attention_heads=heads,
                        intermediate_size=mlp, vocab_size=len(tokenizer),
                        max_position_embeddings=512)
    with torch.device(device):
        model = BertForMaskedLM._from_config(config, attn_implementation="sdpa").eval()
    model.config.save_pretrained(folder)
    path = models.resolve_model(str(folder))
    models._CACHE[("masked-lm", path)] = model
    models._CACHE[("masked-lm-bfloat16", path)] = copy.deepcopy(model).to(torch.bfloat16)
    hyps, _ = wmt_pairs(args.data, args.mlm_texts)
    encoded = tokenizer(hyps, truncation=True, max_length=512)["input_ids"]
    jobs = [(row, pos) for row, ids in enumerate(encoded)
            for pos in maskable_positions(tokenizer, ids)]
    lengths = [len(encoded[row]) for row, _ in jobs]
    flops = [body_flops(layers, width, mlp, [n], False) + 2 * width * len(tokenizer)
             for n in lengths]
    fill = lm.pad_id(tokenizer)

    def today() -> list:
        totals, counts = masked_totals(model, tokenizer.mask_token_id, fill, encoded, jobs, 64)
        return [lm.negated_perplexity(lm.mean_or_nan(t, c)) for t, c in zip(totals, counts,
                                                                             strict=True)]

    def ours(precision: str) -> list:
        scorer = MlmPpl(model=str(folder), precision=precision, token_budget=args.bert_token_budget)
        return score_rows(scorer, hyps, cache=None)["mlm_ppl"]

    time_against(device, rows, "mlm_ppl", "today's scorer", today, ours, lengths, flops,
                 len(lengths), [], lambda a, b: abs(a - b) / abs(b))
    log(f"mlm_ppl: RoBERTa-large-shaped {shape}, {len(hyps):,} texts, {len(jobs):,} masked "
        f"copies, {sum(lengths):,} tokens")
    models._CACHE.clear()


def bench_mauve_features(args, device, shape, rows: list[Row]) -> None:
    """MAUVE's features (the last token's final hidden state) on a GPT-2-large-shaped model
    (MAUVE's default feature model is GPT-2 large) over the WikiText golds: ours
    (``Mauve._compute_features``, token batches) against today's loop (``last_token_states``,
    float32, 16 texts a batch by length)."""
    from transformers import AutoTokenizer

    from blindspot import models
    from blindspot.scorers import _lm_utils as lm
    from blindspot.scorers.mauve_score import Mauve, last_token_states, token_sequences

    folder = Path(tempfile.mkdtemp(prefix="mauve-shaped-"))
    copy_tokenizer(args.gpt_tokenizer or models.resolve_model("smollm2"), folder)
    tokenizer = AutoTokenizer.from_pretrained(folder)
    model = build_gpt(shape, len(tokenizer), device, folder)
    texts = wikitext_golds(args.data, args.n)
    sequences = token_sequences(tokenizer, texts, 1024)
    lengths = [len(s) for s in sequences]
    layers, width, _, mlp = shape
    flops = [body_flops(layers, width, mlp, [n], True) for n in lengths]

    def today() -> list:
        return last_token_states(model, sequences, lm.pad_id(tokenizer), 16, True)

    def ours(precision: str) -> list:
        scorer = Mauve(feature_model=str(folder), max_text_length=1024, precision=precision,
                       token_budget=args.token_budget, feature_cache=None)
        return scorer._compute_features(texts)

    time_against(device, rows, "mauve", "today's features", today, ours, lengths, flops,
                 len(lengths), [],
                 lambda a, b: float(abs(a - b).max() / (abs(b).max() or 1.0)))
    log(f"mauve features: GPT-2-large-shaped {shape}, {len(texts):,} texts, {sum(lengths):,} "
        f"tokens (the difference is relative to the largest feature value)")
    models._CACHE.clear()


def bench_moverscore(args, device, shape, rows: list[Row]) -> None:
    """MoverScore on a DistilBERT-shaped encoder (MoverScore's default model: 6 layers, 768
    wide) with MiniLM's vocabulary, on ``--pairs`` WMT21 outputs with their 2 references: the
    whole score (encoding on the device, the transport on the host) with ``precision=bf16``
    against the same scorer with no precision asked (float32, batches of 64 texts)."""

    from blindspot.scorers.moverscore import MoverScore
    from blindspot.scoring.engine import score_rows

    folder, tokenizer = bert_encoder_folder(args, device, shape, "distilbert-shaped-")
    layers, width, _, mlp = shape
    hyps, refs = wmt_pairs(args.data, args.pairs)
    texts = list(dict.fromkeys([*hyps, *(r for pair in refs for r in pair)]))
    lengths = [len(ids) for ids in tokenizer(texts, truncation=True, max_length=512)["input_ids"]]
    flops = body_flops(layers, width, mlp, lengths, False)
    corpus = [r for pair in refs for r in pair]

    def run(precision: str | None) -> tuple[float, list]:
        scorer = MoverScore(model_type=str(folder), num_layers=layers, idf_references=corpus,
                            precision=precision, token_budget=args.bert_token_budget,
                            device=str(device))
        score_rows(scorer, hyps[:8], [r for r in refs[:8]], cache=None)  # warm-up
        sync(device)
        start = time.perf_counter()
        out = score_rows(scorer, hyps, refs, cache=None)["moverscore"]
        sync(device)
        return time.perf_counter() - start, out

    base_s, base = run(None)
    rows.append(Row("moverscore", "no precision asked, fp32", base_s, sum(lengths), flops))
    for precision in ("bf16", "fp32"):
        seconds, ours = run(precision)
        rows.append(Row("moverscore", f"ours {precision}", seconds, sum(lengths), flops,
                        "no precision", sum(lengths) / base_s))
        log(f"moverscore ours {precision} vs no precision asked: max |difference| "
            f"{max(abs(a - b) for a, b in zip(ours, base, strict=True)):.2e}")
    log(f"moverscore: DistilBERT-shaped {shape}, {len(hyps):,} outputs x 2 references, "
        f"{len(texts):,} distinct texts, {sum(lengths):,} tokens; the time includes the "
        f"transport problems, solved on the host")


def wmt_triples(data: Path, n: int) -> list[dict[str, str]]:
    """``n`` COMET samples (source, system output, reference) from WMT21 de-en."""
    samples = []
    with open(data / "wmt21_de_en_translation.jsonl", encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            for output in row["systems"].values():
                samples.append({"src": row["source"], "mt": output, "ref": row["reference"]})
                if len(samples) == n:
                    return samples
    return samples


def bench_comet(args, device, shape, rows: list[Row]) -> None:
    """COMET (a ``RegressionMetric`` estimator, COMET's default mixing of all layers and mean
    pooling) on an XLM-R-large-shaped encoder built from a config, random weights, through
    ``comet_scores_on_device``, against COMET's ``model.predict`` (float32, batches of 16)."""
    import torch
    from transformers import AutoTokenizer, BertConfig

    from blindspot import models
    from blindspot.scorers.comet_score import comet_scores_on_device, import_comet, quiet_lightning

    folder = Path(tempfile.mkdtemp(prefix="comet-shaped-"))
    copy_tokenizer(args.bert_tokenizer or models.resolve_model("minilm"), folder)
    tokenizer = AutoTokenizer.from_pretrained(folder)
    layers, width, heads, mlp = shape
    BertConfig(num_hidden_layers=layers, hidden_size=width, num_attention_heads=heads,
               intermediate_size=mlp, vocab_size=len(tokenizer)).save_pretrained(folder)
    import_comet()
    from comet.models import RegressionMetric

    torch.manual_seed(0)
    model = RegressionMetric(encoder_model="BERT", pretrained_model=str(folder),
                             load_pretrained_weights=False).eval().to(device)
    half = models.comet_encoder_in(copy.deepcopy(model), "bfloat16")
    samples = wmt_triples(args.data, args.bart_pairs)
    limit = model.encoder.max_positions - 2
    segments = [tokenizer([s[k] for s in samples], truncation=True, max_length=limit)["input_ids"]
                for k in ("src", "mt", "ref")]
    lengths = [[len(column[i]) for column in segments] for i in range(len(samples))]
    tokens = [sum(n) for n in lengths]
    flops = [body_flops(layers, width, mlp, n, False) for n in lengths]
    base_n = min(args.baseline_n, len(samples))

    def predict() -> list[float]:
        with quiet_lightning():
            out = model.predict(samples[:base_n], batch_size=16, progress_bar=False,
                                gpus=1 if device.type == "cuda" else 0)
        return [float(x) for x in out.scores]

    def ours(precision: str) -> list[float]:
        return comet_scores_on_device(half if precision == "bf16" else model, samples,
                                      budget=args.bert_token_budget, precision=precision,
                                      metric="comet")

    time_against(device, rows, "comet", "COMET predict", predict, ours, tokens, flops, base_n,
                 [], lambda a, b: abs(a - b))
    log(f"comet: XLM-R-large-shaped encoder {shape} (layers, width, heads, mlp), "
        f"{len(samples):,} triples, {sum(tokens):,} tokens")
    models._CACHE.clear()


def main() -> None:
    import torch

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    parser.add_argument("--size", choices=sorted(SHAPES), default=None,
                        help="model shapes (default: paper on a GPU, tiny elsewhere)")
    parser.add_argument("--n", type=int, default=None, help="WikiText golds (default 1000/40)")
    parser.add_argument("--baseline-n", type=int, default=250)
    parser.add_argument("--pairs", type=int, default=None, help="WMT21 outputs (4000/40)")
    parser.add_argument("--token-budget", type=int, default=131_072)
    parser.add_argument("--cells", type=int, default=5,
                        help="GPT-PPL cells scored in turn, as a run scores a test's curve")
    parser.add_argument("--budgets", type=lambda v: [int(x) for x in v.split(",")], default=[],
                        help="more token budgets to time GPT-PPL bf16 at, e.g. 65536,262144")
    parser.add_argument("--bert-token-budget", type=int, default=65_536)
    parser.add_argument("--oom-headroom-gb", type=float, default=8.0)
    parser.add_argument("--gpt-tokenizer", default=None,
                        help="a tokenizer folder (default: the offline SmolLM2's)")
    parser.add_argument("--bert-tokenizer", default=None,
                        help="a tokenizer folder (default: the offline MiniLM's)")
    parser.add_argument("--bart-pairs", type=int, default=None, help="BARTScore pairs (2000/20)")
    parser.add_argument("--mlm-texts", type=int, default=None,
                        help="WMT21 outputs for MLM-PPL (200/10; one masked copy per token)")
    parser.add_argument("--only", choices=("gpt_ppl", "bertscore", "bartscore", "classifiers",
                                           "unieval", "mlm_ppl", "mauve", "moverscore",
                                           "comet"), default=None)
    parser.add_argument("--stop-after", type=float, default=0.0,
                        help="seconds after which no further section starts (0: no limit)")
    parser.add_argument("--skip", type=lambda v: v.split(","), default=[],
                        help="sections to leave out, e.g. bertscore,bartscore")
    args = parser.parse_args()
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    size = args.size or ("paper" if device.type == "cuda" else "tiny")
    args.n = args.n or (1000 if size == "paper" else 40)
    args.pairs = args.pairs or (4000 if size == "paper" else 40)
    args.baseline_n = min(args.baseline_n, args.n)
    args.bart_pairs = args.bart_pairs or (2000 if size == "paper" else 20)
    args.mlm_texts = args.mlm_texts or (200 if size == "paper" else 10)
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else "CPU"
    import transformers

    log(f"device: {name}; torch {torch.__version__}, transformers {transformers.__version__}; "
        f"shapes: {size}")
    rate = matmul_rate(device, 8192 if device.type == "cuda" else 512)
    log(f"measured bf16 matrix-multiply rate: {rate:.1f} TFLOP/s")
    rows: list[Row] = []
    shapes = SHAPES[size]
    sections = {"gpt_ppl": lambda: bench_gpt(args, device, shapes["gpt"], rows),
                "bertscore": lambda: bench_bertscore(args, device, shapes["bert"],
                                                     shapes["bert_layer"], rows),
                "bartscore": lambda: bench_bartscore(args, device, shapes["bart"], rows),
                "classifiers": lambda: bench_classifiers(args, device, shapes, rows),
                "unieval": lambda: bench_unieval(args, device, shapes["t5"], rows),
                "mlm_ppl": lambda: bench_mlm_ppl(args, device, shapes["mlm"], rows),
                "mauve": lambda: bench_mauve_features(args, device, shapes["gpt"], rows),
                "moverscore": lambda: bench_moverscore(args, device, shapes["distilbert"], rows),
                "comet": lambda: bench_comet(args, device, shapes["comet"], rows)}
    began = time.perf_counter()
    for section, work in sections.items():
        if args.only not in (None, section) or section in args.skip:
            continue
        if args.stop_after and time.perf_counter() - began > args.stop_after:
            log(f"[{section} skipped: past --stop-after {args.stop_after:.0f} s]")
            continue
        started = time.perf_counter()
        work()
        log(f"[{section} took {time.perf_counter() - started:.0f} s]")
        if device.type == "cuda":
            torch.cuda.empty_cache()
        log(f"\n{name}, bf16 rate {rate:.0f} TFLOP/s")  # the table so far, after each section
        for row in rows:
            log(row.line(rate))
    log("menli and bleurt: BERT-architecture classifiers of RoBERTa-large's and RemBERT's "
        "(BLEURT-20's) shapes, compared with a plain fp32 transformers loop (bleurt-pytorch is "
        "not installed on the GPU machine)")
    log("comet: a BERT-architecture encoder of XLM-R-large's shape under COMET's estimator, "
        "compared with COMET's own predict")


if __name__ == "__main__":
    main()
