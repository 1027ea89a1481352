"""Small evaluate modules written by the runner tests: a user's own metric, as a script file.

``picky`` scores word overlap with the reference, returns NaN when the hypothesis has more
negations than its reference and raises on a doubled word, so the tests see a metric that
fails on some tests' rows only. ``slow`` sleeps per call and logs each call, so a run can be
killed halfway and the resumed run's work counted.
"""

from __future__ import annotations

from pathlib import Path

PICKY = '''
import re
import datasets
import evaluate

NEGATION = re.compile(r"\\bnot\\b|n't\\b|\\bnever\\b", re.IGNORECASE)
DOUBLED = re.compile(r"\\b(\\w+) \\1\\b", re.IGNORECASE)


class Picky(evaluate.Metric):
    def _info(self):
        return evaluate.MetricInfo(
            description="word overlap that fails on doubled words", citation="",
            inputs_description="", features=datasets.Features({
                "predictions": datasets.Value("string"), "references": datasets.Value("string")}))

    def _compute(self, predictions, references, use_aggregator=True):
        scores = []
        for hyp, ref in zip(predictions, references):
            if DOUBLED.search(hyp) and not DOUBLED.search(ref):
                raise ValueError("cannot score a repeated word")
            if len(NEGATION.findall(hyp)) > len(NEGATION.findall(ref)):
                scores.append(float("nan"))
                continue
            h, r = set(hyp.lower().split()), set(ref.lower().split())
            scores.append(len(h & r) / max(len(r), 1))
        return {"overlap": scores if not use_aggregator else sum(scores) / len(scores)}
'''

SLOW = '''
import os
import time
import datasets
import evaluate


class Slow(evaluate.Metric):
    def _info(self):
        return evaluate.MetricInfo(
            description="length in words, slowly", citation="", inputs_description="",
            features=datasets.Features({"predictions": datasets.Value("string")}))

    def _compute(self, predictions, use_aggregator=True):
        with open(os.environ["SLOW_METRIC_LOG"], "a", encoding="utf-8") as log:
            log.write(f"{len(predictions)}\\n")
        time.sleep(float(os.environ.get("SLOW_METRIC_SLEEP", "0.3")))
        scores = [float(len(p.split())) for p in predictions]
        return {"length": scores if not use_aggregator else sum(scores) / len(scores)}
'''


def write_module(folder: Path, name: str) -> Path:
    """Write module ``name`` (picky or slow) as ``folder/name/name.py``; returns the script."""
    script = folder / name / f"{name}.py"
    script.parent.mkdir(parents=True, exist_ok=True)
    script.write_text({"picky": PICKY, "slow": SLOW}[name], encoding="utf-8")
    return script
