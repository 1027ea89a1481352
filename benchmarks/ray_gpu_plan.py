"""Device check: the Ray engine's one-scorer-actor-per-GPU plan (issue 28, item 6).

Builds a causal LM of GPT-2 base's shape (12 layers, 768 wide) with random weights from a config
and the offline tokenizer, writes ``--n`` WikiText golds to a JSONL file, and runs the rank
protocol's GPT-PPL (``precision=bf16``) twice: with the local engine and with ``engine="ray"``
(its default plan: one actor per GPU, ``num_gpus=1`` each). Prints the Ray cluster's CPUs and
GPUs, the plan the engine makes for the scorer, each run's time and signature (which names the
device the scores were computed on), and whether the two ``results.json`` are byte-identical.
Exit status 1 when they differ. On a machine without a GPU it runs the same at a tiny shape (the
actor then takes a CPU slot and the precision is the CPU's bf16).

    python benchmarks/ray_gpu_plan.py --data .gpucarry/data --tokenizer .gpucarry/tok/gpt

``--address HOST:PORT`` joins a running cluster instead of starting Ray in this process (the
test suite's smoke run joins its session's head).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from itertools import islice
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def build_model(folder: Path, tokenizer_from: str, gpu: bool) -> str:
    """A GPT-2-shaped causal LM with random weights, saved with the tokenizer in ``folder``."""
    import torch
    from transformers import AutoTokenizer, GPT2Config, GPT2LMHeadModel

    tokenizer = AutoTokenizer.from_pretrained(tokenizer_from)
    layers, width, heads = (12, 768, 12) if gpu else (2, 64, 2)
    torch.manual_seed(0)
    config = GPT2Config(n_layer=layers, n_embd=width, n_head=heads, vocab_size=len(tokenizer),
                        n_positions=1024)
    GPT2LMHeadModel(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return str(folder)


def main() -> int:
    import torch

    from blindspot.models import resolve_model
    from blindspot.protocols.rank import run_blindspot
    from blindspot.runner.ray_engine import RayEngine
    from blindspot.scoring.scorer import get_scorer

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    parser.add_argument("--tokenizer", default=None, help="tokenizer folder (default: SmolLM2's)")
    parser.add_argument("--n", type=int, default=300, help="WikiText golds")
    parser.add_argument("--address", default=None, help="a running cluster (default: start Ray)")
    args = parser.parse_args()

    gpu = torch.cuda.is_available()
    work = Path(tempfile.mkdtemp(prefix="ray-gpu-plan-"))
    model = build_model(work / "model", args.tokenizer or resolve_model("smollm2"), gpu)
    gold = work / "gold.jsonl"
    with open(args.data / "wikitext103_open_ended.jsonl", encoding="utf-8") as rows, \
            open(gold, "w", encoding="utf-8") as out:
        for line in islice(rows, args.n):
            row = json.loads(line)
            out.write(json.dumps({"id": row["id"], "gold": row["gold"]}) + "\n")
    options = {"gpt_ppl": {"model": model, "precision": "bf16"}}
    settings = dict(task="open_ended", tests="truncation,repetition", seeds=[1],
                    metric_options=options, progress=False)
    print(f"device: {torch.cuda.get_device_name() if gpu else 'CPU'}; {args.n} WikiText golds",
          flush=True)

    import ray

    # the runs' Ray engine joins it
    ray.init(address=args.address, include_dashboard=False, log_to_driver=False)
    resources = ray.cluster_resources()
    plan = RayEngine()._score_slots(get_scorer("gpt_ppl", **options["gpt_ppl"]))
    print(f"ray cluster: {resources.get('CPU', 0):.0f} CPUs, {resources.get('GPU', 0):.0f} GPUs; "
          f"scoring plan: {plan[0]} actor(s), {plan[1]} GPU(s) each", flush=True)
    results = {}
    for engine in ("local", "ray"):
        start = time.perf_counter()
        done = run_blindspot(str(gold), "gpt_ppl", out=work / engine, engine=engine,
                             state_dir=str(work / f"state-{engine}"), **settings)
        seconds = time.perf_counter() - start
        (entry,) = done["datasets"]["gold.jsonl"]["metrics"].values()
        print(f"{engine}: {seconds:.1f} s; signature {entry['signature']}", flush=True)
        results[engine] = (work / engine / "results.json").read_bytes()
    ray.shutdown()
    same = results["local"] == results["ray"]
    print(f"results.json local vs ray: {'byte-identical' if same else 'DIFFERENT'}", flush=True)
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
