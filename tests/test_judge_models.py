"""The LLM judge on a real model: SmolLM2-135M-Instruct in this process, and the same model behind
`transformers serve` started on 127.0.0.1 by this module (one server for the module). The
weighted grade is checked against the model's own next-token distribution, and the greedy grades
through the server against the in-process ones, row for row."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from blindspot.judges.backends import prompt_ids
from blindspot.judges.template import load_template
from blindspot.models import load_causal_lm
from blindspot.scoring.engine import score_rows
from blindspot.scoring.scorer import get_scorer

DEMO = Path(__file__).resolve().parents[1] / "blindspot" / "demo" / "summarization.jsonl"
ROWS = [json.loads(line) for line in DEMO.read_text(encoding="utf-8").splitlines()][:2]
GOLDS = [row["gold"] for row in ROWS]
#: how long the server may take to start on two busy cores (it starts in ~25 s on idle ones)
START_S = 240


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="module")
def served() -> Iterator[str]:
    """The base URL of `transformers serve` on a free loopback port, stopped after the module."""
    port = _free_port()
    command = [str(Path(sys.executable).with_name("transformers")), "serve", "--host",
               "127.0.0.1", "--port", str(port)]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
           "OMP_NUM_THREADS": "2"}
    server = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True)
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + START_S
        while True:
            if server.poll() is not None:
                pytest.fail(f"transformers serve exited: {server.stderr.read()[-2000:]}")
            try:
                with urllib.request.urlopen(f"{url}/models", timeout=2):
                    break
            except OSError:
                if time.monotonic() > deadline:
                    pytest.fail(f"transformers serve did not start in {START_S} s")
                time.sleep(1)
        yield url
    finally:
        server.terminate()
        server.wait(timeout=30)


@pytest.mark.slow
def test_the_weighted_grade_is_the_mean_of_the_grade_tokens_next_token_probabilities() -> None:
    import torch

    scorer = get_scorer("llm_judge", model="smollm2", template="fluency")
    out = score_rows(scorer, GOLDS, cache=None)
    tokenizer, model = load_causal_lm("smollm2")
    template = load_template("fluency")
    for gold, score, grade in zip(GOLDS, out["score"], out["grade"], strict=True):
        ids = prompt_ids(tokenizer, template.render(gold))
        with torch.inference_mode():
            logits = model(input_ids=torch.tensor([ids])).logits[0, -1]
        probs = torch.softmax(logits.float(), dim=-1)
        digits = {g: float(probs[tokenizer.encode(str(g), add_special_tokens=False)[0]])
                  for g in (1, 2, 3)}
        assert score == pytest.approx(sum(g * p for g, p in digits.items()) / sum(digits.values()),
                                      rel=1e-4)
        assert grade == max(digits, key=digits.__getitem__)
        assert 1.0 <= score <= 3.0


@pytest.mark.slow
def test_greedy_grades_through_transformers_serve_equal_the_in_process_ones(served: str) -> None:
    # SmolLM2 answers the coherence prompt with "Coherence: <digit>..." (the fluency one it
    # mostly echoes, which is a reply with no grade)
    options = {"model": "smollm2", "template": "coherence", "mode": "greedy"}
    sources = [row["source"] for row in ROWS]
    local = score_rows(get_scorer("llm_judge", **options), GOLDS, sources=sources, cache=None)
    remote = score_rows(get_scorer("llm_judge", backend="openai", url=served, concurrency=1,
                                   **options), GOLDS, sources=sources, cache=None)
    assert remote["grade"] == local["grade"]
    assert remote["score"] == local["score"]
    assert all(1.0 <= g <= 5.0 for g in local["grade"])
