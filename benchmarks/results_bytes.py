"""The round-1 CLI examples, run on real data with lexical metrics; prints each output's sha256.

Issue 17 (one orchestration layer) must leave ``results.json`` byte-identical for the same inputs.
Run this on the commit before a change and after it, and compare the printed lines:

    python benchmarks/results_bytes.py --out /tmp/before     # on the old checkout
    python benchmarks/results_bytes.py --out /tmp/after      # on the new one
    diff <(cut -f1,2 /tmp/before/hashes.tsv) <(cut -f1,2 /tmp/after/hashes.tsv)

Each example runs as ``python -m blindspot.cli ...`` in a fresh process, with a fresh cache.
``--ignore-key anchors`` adds a third column: the hash of results.json with that key removed
everywhere and the file written again as the tool writes it (a change that adds a key on purpose,
like issue 21's sanity anchors, can then be shown to leave every other byte alone).
``--compare BEFORE/hashes.tsv`` checks it: each example's results (without that key) must hash as
the run before the change did, else the script says which differ and exits 1. Issue 29 added
each metric's ``signature``; on the commit before it, then on this one:

    python benchmarks/results_bytes.py --out /tmp/before
    python benchmarks/results_bytes.py --out /tmp/after --ignore-key signature \
        --compare /tmp/before/hashes.tsv
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"

EXAMPLES: dict[str, tuple[list[str], str]] = {
    "rank-demo": (["run", "--data", "demo", "--task", "translation", "--metrics", "rouge,chrf,bleu",
                   "--seeds", "1,2", "--out", "{out}"], "results.json"),
    "rank-cnndm": (["run", "--task", "summarization",
                    "--data", str(DATA / "cnndm_summeval100_summarization.jsonl"),
                    "--metrics", "rouge,chrf", "--tests", "fluency,consistency", "--seeds", "1",
                    "--out", "{out}"], "results.json"),
    "rank-cnndm-chunked": (["run", "--task", "summarization",
                            "--data", str(DATA / "cnndm_summeval100_summarization.jsonl"),
                            "--metrics", "rouge,chrf", "--tests", "fluency,consistency", "--seeds", "1",
                            "--chunk-size", "30", "--out", "{out}"], "results.json"),
    "rank-wmt-targeted": (["run", "--task", "translation",
                           "--data", str(DATA / "wmt21_de_en_translation.jsonl"),
                           "--metrics", "chrf,ter", "--tests", "targeted", "--seeds", "1,2",
                           "--out", "{out}"], "results.json"),
    "preference": (["run", "--protocol", "preference", "--data", str(DATA / "menli_wmt20_de_adversarial.csv"),
                    "--metrics", "bleu,chrf,rouge", "--protocol-option", "mode=ref-based", "--out", "{out}"],
                   "results.json"),
    "deviation": (["run", "--protocol", "deviation", "--task", "summarization", "--metrics", "rouge,chrf",
                   "--data", str(DATA / "cnndm_summeval100_summarization.jsonl"), "--out", "{out}"],
                  "results.json"),
    "correlation": (["run", "--protocol", "correlation", "--metrics", "rouge,chrf",
                     "--data", str(DATA / "summeval_expert_judgments.jsonl"), "--protocol-option",
                     f"references={DATA / 'cnndm_summeval100_summarization.jsonl'}", "--out", "{out}"],
                    "results.json"),
    "search": (["search", "--metric", "rouge", "--data", str(DATA / "wmt21_de_en_translation.jsonl"),
                "--task", "translation", "--limit", "5", "--noise-ratio", "0.1", "--max-calls", "400",
                "--panel", "chrf,bleu", "--out", "{out}"], "results.json"),
    "perturb": (["perturb", str(DATA / "wmt21_de_en_translation.jsonl"), "--column", "gold",
                 "--test", "truncation", "--level", "0.1", "--seed", "1", "-o", "{out}/out.jsonl"],
                "out.jsonl"),
}


def without_key(value: object, key: str) -> object:
    """``value`` with ``key`` removed from every JSON object in it."""
    if isinstance(value, dict):
        return {k: without_key(v, key) for k, v in value.items() if k != key}
    if isinstance(value, list):
        return [without_key(v, key) for v in value]
    return value


def digest_without(path: Path, key: str) -> str:
    """The sha256 of a results.json re-written, as the tool writes it, without ``key``."""
    if path.suffix != ".json":
        return hashlib.sha256(path.read_bytes()).hexdigest()
    data = without_key(json.loads(path.read_text(encoding="utf-8")), key)
    text = json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--only", default="", help="comma list of example names")
    parser.add_argument("--ignore-key", default="", help="also hash results.json without this key")
    parser.add_argument("--compare", type=Path, default=None,
                        help="hashes.tsv of the run before a change: fail unless every example "
                             "hashes the same (without --ignore-key's key)")
    args = parser.parse_args()
    before = read_hashes(args.compare) if args.compare else {}
    args.out.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
           "TOKENIZERS_PARALLELISM": "false", "BLINDSPOT_CACHE": str(args.out / "cache")}
    chosen = [n for n in args.only.split(",") if n] or list(EXAMPLES)
    lines, differ = [], []
    for name in chosen:
        argv, output = EXAMPLES[name]
        out = args.out / name
        argv = [a.replace("{out}", str(out)) for a in argv]
        start = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "blindspot.cli", *argv], env=env, cwd=ROOT,
                              capture_output=True, text=True)
        seconds = time.perf_counter() - start
        target = out / output
        digest = hashlib.sha256(target.read_bytes()).hexdigest() if target.exists() else "missing"
        line = f"{name}\t{digest}\trc={proc.returncode}\t{seconds:.1f}s"
        kept = digest
        if args.ignore_key and target.exists():
            kept = digest_without(target, args.ignore_key)
            line += f"\twithout {args.ignore_key}: {kept}"
        if args.compare is not None:
            same = before.get(name) == kept
            line += "\tas before" if same else f"\tDIFFERS from before ({before.get(name)})"
            if not same:
                differ.append(name)
        if proc.returncode not in (0, 2, 3):
            line += "\t" + (proc.stderr.strip().splitlines() or ["?"])[-1]
        print(line, flush=True)
        lines.append(line)
    (args.out / "hashes.tsv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    if args.compare is not None:
        apart = f" apart from the key {args.ignore_key!r}" if args.ignore_key else ""
        if differ:
            print(f"FAIL: {len(differ)} of {len(chosen)} results differ from {args.compare}"
                  f"{apart}: {', '.join(differ)}")
            sys.exit(1)
        print(f"PASS: all {len(chosen)} results are byte-identical to {args.compare}{apart}")


def read_hashes(path: Path) -> dict[str, str]:
    """Example name -> the sha256 of its output, from a hashes.tsv this script wrote."""
    rows = (line.split("\t") for line in path.read_text(encoding="utf-8").splitlines() if line)
    return {row[0]: row[1] for row in rows if len(row) > 1}


if __name__ == "__main__":
    main()
