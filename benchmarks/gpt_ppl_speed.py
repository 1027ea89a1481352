"""Benchmark: GPT-PPL through the evaluate module vs. a direct transformers loop.

On the first N WikiText golds (default 200) with SmolLM2-135M, batch size 8, three processes,
each with its own peak memory (max RSS):

* baseline: a plain transformers loop (tokenizer padding, ``model(...).logits``, token cross
  entropy with pads masked out), batches in data order;
* cold: ``evaluate.load("metrics/gpt_ppl").compute`` on an empty score cache (the model is
  loaded before the clock starts, as for the baseline);
* warm: the same call in a new process on the now-filled cache (no model is loaded at all).

Tokens per second counts the scored tokens (every token of every text; the BOS is context).
The scores of the three runs are compared as well.

    python benchmarks/gpt_ppl_speed.py [--data ../shared/data] [--n 200] [--batch-size 8]

Measured on 2 CPU cores (load average 1.9; 48,802 scored tokens): baseline 98.2 s (497
tokens/s, peak RSS 2.77 GB), cold 98.5 s (495 tokens/s, 1.69 GB), warm 0.02 s (0.51 GB; the
3.5 s of setup is importing evaluate), scores equal to 7.7e-7 relative. On a busy machine both
cold runs slow down alike (load 3-4: 171 and 143 tokens/s).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import subprocess
import sys
import tempfile
import time
from itertools import islice
from pathlib import Path

MODEL = "smollm2"


def _golds(path: Path, n: int) -> list[str]:
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line)["gold"] for line in islice(fh, n)]


def _baseline(texts: list[str], batch_size: int) -> dict:
    """The loop a user would write with transformers alone."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from blindspot.models import resolve_model

    start = time.perf_counter()
    folder = resolve_model(MODEL)
    tokenizer = AutoTokenizer.from_pretrained(folder)
    tokenizer.pad_token = tokenizer.pad_token or tokenizer.eos_token
    tokenizer.padding_side = "right"
    model = AutoModelForCausalLM.from_pretrained(folder).eval()
    setup = time.perf_counter() - start
    start = time.perf_counter()
    scores, tokens = [], 0
    for i in range(0, len(texts), batch_size):
        enc = tokenizer(texts[i: i + batch_size], return_tensors="pt", padding=True)
        with torch.inference_mode():
            logits = model(**enc).logits
        labels = enc.input_ids[:, 1:].masked_fill(enc.attention_mask[:, 1:] == 0, -100)
        # (tokens, vocab) layout: torch's (batch, vocab, length) layout loses ~1e-4 in fp32
        nll = torch.nn.functional.cross_entropy(
            logits[:, :-1].reshape(-1, logits.shape[-1]), labels.reshape(-1),
            reduction="none").view(labels.shape)
        counts = (labels != -100).sum(dim=1)
        scores += [-math.exp(v) for v in (nll.sum(dim=1) / counts).tolist()]
        tokens += int(counts.sum())
    return {"setup_s": setup, "score_s": time.perf_counter() - start, "tokens": tokens,
            "scores": scores}


def _module(texts: list[str], preload: bool) -> dict:
    """The evaluate module; ``preload`` loads the model before the clock (cold run)."""
    start = time.perf_counter()
    import evaluate

    module = evaluate.load(str(Path(__file__).resolve().parents[1] / "metrics" / "gpt_ppl"))
    if preload:
        from blindspot.models import load_causal_lm

        load_causal_lm(MODEL)
    setup = time.perf_counter() - start
    start = time.perf_counter()
    out = module.compute(predictions=texts, model=MODEL, use_aggregator=False)
    return {"setup_s": setup, "score_s": time.perf_counter() - start,
            "scores": out["gpt_ppl"], "torch_imported": "torch" in sys.modules}


def _child(kind: str, data: Path, n: int, batch_size: int) -> None:
    texts = _golds(data, n)
    result = _baseline(texts, batch_size) if kind == "baseline" else _module(texts, kind == "cold")
    result["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps(result))


def _run_child(kind: str, args: argparse.Namespace, cache: str) -> dict:
    env = dict(os.environ, BLINDSPOT_CACHE=cache, HF_HUB_OFFLINE="1",
               TOKENIZERS_PARALLELISM="false")
    cmd = [sys.executable, __file__, "--child", kind, "--data", str(args.data), "--n",
           str(args.n), "--batch-size", str(args.batch_size)]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"{kind} run failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def _max_rel_diff(a: list[float], b: list[float]) -> float:
    return max(abs(x - y) / abs(y) for x, y in zip(a, b, strict=True))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default_data = Path(__file__).resolve().parents[2] / "shared" / "data"
    parser.add_argument("--data", type=Path, default=default_data / "wikitext103_open_ended.jsonl")
    parser.add_argument("--n", type=int, default=200)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--child", choices=["baseline", "cold", "warm"])
    args = parser.parse_args()
    if args.child:
        _child(args.child, args.data, args.n, args.batch_size)
        return 0
    if args.batch_size != 8:
        print("note: the module uses the scorer's default batch size (8)")
    load_before = os.getloadavg()[0]
    cache = tempfile.mkdtemp(prefix="bench-gpt-ppl-")
    runs = {kind: _run_child(kind, args, cache) for kind in ("baseline", "cold", "warm")}
    tokens = runs["baseline"]["tokens"]
    print(f"\n== GPT-PPL, {MODEL}, {args.n} WikiText golds, {tokens} scored tokens, "
          f"batch size {args.batch_size}, {os.cpu_count()} CPUs "
          f"(load average {load_before:.1f} before, {os.getloadavg()[0]:.1f} after)")
    for kind, label in (("baseline", "direct transformers loop"), ("cold", "module, cold cache"),
                        ("warm", "module, warm cache")):
        run = runs[kind]
        print(f"  {label:26s}: {run['score_s']:8.2f} s  {tokens / run['score_s']:10.0f} tokens/s"
              f"   setup {run['setup_s']:5.1f} s   peak RSS {run['peak_rss_mb']:6.0f} MB")
    base, cold, warm = (runs[k] for k in ("baseline", "cold", "warm"))
    print(f"  cold / baseline time      : {cold['score_s'] / base['score_s']:8.2f} x")
    print(f"  warm speed-up over cold   : {cold['score_s'] / warm['score_s']:8.0f} x"
          f"   (torch imported in the warm run: {warm['torch_imported']})")
    print(f"  max relative difference   : module vs baseline "
          f"{_max_rel_diff(cold['scores'], base['scores']):.2e}, warm vs cold "
          f"{_max_rel_diff(warm['scores'], cold['scores']):.2e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
