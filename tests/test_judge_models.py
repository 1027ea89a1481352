"""The LLM judge on a real model: SmolLM2-135M-Instruct in this process. The weighted grade is
checked against the model's own next-token distribution. The same model behind real servers
(transformers serve, llama.cpp's) is tests/test_judge_servers.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from blindspot.judges.template import load_template
from blindspot.models import load_causal_lm
from blindspot.scorers.llm_judge import prompt_ids
from blindspot.scoring.engine import score_rows
from blindspot.scoring.scorer import get_scorer

DEMO = Path(__file__).resolve().parents[1] / "blindspot" / "demo" / "summarization.jsonl"
ROWS = [json.loads(line) for line in DEMO.read_text(encoding="utf-8").splitlines()][:2]
GOLDS = [row["gold"] for row in ROWS]


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
