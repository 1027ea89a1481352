"""The two ways a judge is asked: a chat model in this process, or an OpenAI-compatible server.

Both take the rendered messages of a batch and give one :class:`Reply` per row. The modes
(:data:`MODES`):

* ``weighted``: G-Eval's probability-weighted grade from the next-token distribution over the
  grade tokens (in-process: the model's own distribution; a server: its ``top_logprobs`` when it
  returns them, else the reply's parsed grade, and the reply says which);
* ``greedy``: the grade parsed from the greedy reply (temperature 0) -- the one a server that
  returns no log-probabilities gives too, so both backends give the same grades;
* ``sample``: the grade parsed from a sampled reply (``temperature``, ``top_p``, ``seed``): a
  judge whose grade changes from one sample to the next is flaky.

The server is called through the ``openai`` client (``stream=True``: some servers, such as
``transformers serve``, only stream), with its retries and back-off on 429, 5xx, time-outs and
lost connections, at most ``concurrency`` calls at once. A server that is still down after the
retries stops the run (:class:`~blindspot.faults.ScorerUnavailable`); the key is read from
an environment variable when the client is made and is never stored, logged or reported.
"""

from __future__ import annotations

import copy
import hashlib
import math
import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from blindspot.errors import BlindspotInputError
from blindspot.faults import ScorerUnavailable
from blindspot.judges.grades import (
    grade_probabilities,
    parse_grade,
    require_grade,
    weighted_grade,
)

MODES = ("weighted", "greedy", "sample")
#: how many alternatives per position a ``weighted`` call asks a server for (OpenAI's maximum)
TOP_LOGPROBS = 20


@dataclass(frozen=True)
class Sampling:
    """How the judge answers: part of the score cache key."""

    mode: str = "weighted"
    temperature: float = 1.0  # used by ``sample`` only
    top_p: float = 1.0  # used by ``sample`` only
    seed: int = 0  # used by ``sample`` only
    max_tokens: int = 8  # reply length for ``greedy`` and ``sample``

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise BlindspotInputError(f"llm_judge mode {self.mode!r} is not one of "
                                      f"{', '.join(MODES)}", field="mode")

    def row_seed(self, messages: Sequence[dict[str, str]]) -> int:
        """A sampled row's seed: from the run's seed and the row's prompt, so a row draws the
        same sample whatever batch it is in."""
        text = f"{self.seed}\x1f" + "\x1f".join(m["content"] for m in messages)
        return int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:4], "big")


@dataclass(frozen=True)
class Reply:
    """One row's judgement and what it cost."""

    score: float
    grade: int
    prompt_tokens: float  # NaN where the server does not report it
    completion_tokens: float


# -- in-process ---------------------------------------------------------------------------------

def grade_token_ids(tokenizer: Any, grades: Sequence[int]) -> list[int]:
    """The token id of each grade's digit; a tokenizer that splits a digit cannot be weighted."""
    ids = []
    for grade in grades:
        pieces = tokenizer.encode(str(grade), add_special_tokens=False)
        if len(pieces) != 1:
            raise ValueError(f"the judge's tokenizer splits the grade {grade} into {len(pieces)} "
                             "tokens; use mode=greedy")
        ids.append(int(pieces[0]))
    return ids


def prompt_ids(tokenizer: Any, messages: Sequence[dict[str, str]]) -> list[int]:
    """The chat template's token ids for ``messages``, ending where the judge's reply starts."""
    return list(tokenizer.apply_chat_template(list(messages), add_generation_prompt=True,
                                              tokenize=True))


def local_replies(tokenizer: Any, model: Any, batch: Sequence[Sequence[dict[str, str]]],
                  grades: Sequence[int], sampling: Sampling, hypotheses: Sequence[str]
                  ) -> list[Reply]:
    """Each row's reply from a causal chat model in this process."""
    prompts = [prompt_ids(tokenizer, messages) for messages in batch]
    if sampling.mode == "weighted":
        return _weighted_local(tokenizer, model, prompts, grades)
    return [_generated_local(tokenizer, model, ids, messages, grades, sampling, hypothesis)
            for ids, messages, hypothesis in zip(prompts, batch, hypotheses, strict=True)]


def _weighted_local(tokenizer: Any, model: Any, prompts: list[list[int]],
                    grades: Sequence[int]) -> list[Reply]:
    import torch

    from blindspot.scorers import _lm_utils as lm

    ids_of = grade_token_ids(tokenizer, grades)
    ids, mask = lm.right_pad(prompts, lm.pad_id(tokenizer))
    device = lm.model_device(model)
    with torch.inference_mode():
        logits = model(input_ids=ids.to(device), attention_mask=mask.to(device),
                       use_cache=False).logits
    replies = []
    for row, prompt in enumerate(prompts):
        probs = torch.softmax(logits[row, len(prompt) - 1].float(), dim=-1)
        weighted = weighted_grade({g: float(probs[i]) for g, i in zip(grades, ids_of,
                                                                      strict=True)})
        if weighted is None:
            raise ValueError("the judge gave every grade token probability 0")
        replies.append(Reply(weighted.score, weighted.grade, float(len(prompt)), 1.0))
    return replies


def _generated_local(tokenizer: Any, model: Any, prompt: list[int],
                     messages: Sequence[dict[str, str]], grades: Sequence[int],
                     sampling: Sampling, hypothesis: str) -> Reply:
    """One row's generated reply: greedy or sampled, as a server's ``generate`` would make it
    (the model's own generation config, with the request's settings on top)."""
    import torch

    from blindspot.scorers import _lm_utils as lm

    config = copy.deepcopy(model.generation_config)
    config.max_new_tokens = sampling.max_tokens
    config.do_sample = sampling.mode == "sample"
    if config.do_sample:
        config.temperature, config.top_p = sampling.temperature, sampling.top_p
        torch.manual_seed(sampling.row_seed(messages))
    device = lm.model_device(model)
    ids = torch.tensor([prompt], dtype=torch.long, device=device)
    with torch.inference_mode():
        out = model.generate(input_ids=ids, attention_mask=torch.ones_like(ids),
                             generation_config=config, pad_token_id=lm.pad_id(tokenizer))
    new = out[0, len(prompt):].tolist()
    reply = tokenizer.decode(new, skip_special_tokens=True)
    grade = require_grade(reply, grades, hypothesis)
    return Reply(float(grade), grade, float(len(prompt)), float(len(new)))


# -- an OpenAI-compatible server ------------------------------------------------------------------

def check_url(url: str) -> str:
    """An http(s) base URL without credentials or a query: a key travels only in the header."""
    parts = urlsplit(url)
    if parts.username or parts.password or parts.query or parts.fragment:
        raise BlindspotInputError("the judge URL holds credentials or a query",
                                  fix="Give the key through the environment variable "
                                      "that --option llm_judge.api_key_env names, never in the URL",
                                  field="judge_url")
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise BlindspotInputError(f"the judge URL is not an http(s) URL (scheme "
                                  f"{parts.scheme or 'none'!r})",
                                  fix="Give the server's base URL, e.g. http://127.0.0.1:8000/v1",
                                  field="judge_url")
    return url.rstrip("/")


@dataclass
class Endpoint:
    """Where a server judge is and how it is called (none of it is in the cache key)."""

    url: str
    api_key_env: str = "OPENAI_API_KEY"
    concurrency: int = 4
    retries: int = 4
    timeout: float = 120.0


class RemoteJudge:
    """An OpenAI-compatible chat server as a judge. ``logprobs`` starts True for ``weighted``
    and turns False for the rest of the run at the first refusal of the field."""

    def __init__(self, endpoint: Endpoint, model: str, sampling: Sampling) -> None:
        from openai import OpenAI  # the client library: only a server judge needs it

        self.endpoint, self.model, self.sampling = endpoint, model, sampling
        key = os.environ.get(endpoint.api_key_env) or "not-needed"
        self._client = OpenAI(base_url=endpoint.url, api_key=key, max_retries=endpoint.retries,
                              timeout=endpoint.timeout)
        self.logprobs = sampling.mode == "weighted"

    def replies(self, batch: Sequence[Sequence[dict[str, str]]], grades: Sequence[int],
                hypotheses: Sequence[str]) -> list[Reply]:
        """Each row's reply, at most ``concurrency`` calls at once, in row order."""
        with ThreadPoolExecutor(max_workers=max(1, self.endpoint.concurrency)) as pool:
            return list(pool.map(lambda messages, hypothesis: self.reply(messages, hypothesis,
                                                                         grades),
                                 batch, hypotheses))

    def reply(self, messages: Sequence[dict[str, str]], hypothesis: str,
              grades: Sequence[int]) -> Reply:
        import openai

        try:
            try:
                return self._call(messages, hypothesis, grades)
            except (openai.BadRequestError, openai.UnprocessableEntityError):
                if not self.logprobs:
                    raise
                self.logprobs = False  # the server refuses logprobs: parse the grade instead
                return self._call(messages, hypothesis, grades)
        except (openai.APIConnectionError, openai.RateLimitError, openai.InternalServerError,
                openai.APIStatusError) as error:
            raise ScorerUnavailable(self._failure(error)) from None

    def _failure(self, error: Exception) -> str:
        status = getattr(error, "status_code", None)
        what = f"HTTP {status}" if status is not None else type(error).__name__
        return (f"the judge server {self.endpoint.url} failed after "
                f"{self.endpoint.retries + 1} tries ({what}); the run's state is kept: run "
                "the same command again to resume")

    def _request(self, messages: Sequence[dict[str, str]]) -> dict[str, Any]:
        mode = self.sampling.mode
        request: dict[str, Any] = {"model": self.model, "messages": list(messages),
                                   "stream": True, "max_tokens": self.sampling.max_tokens}
        if mode == "sample":
            request.update(temperature=self.sampling.temperature, top_p=self.sampling.top_p,
                           seed=self.sampling.row_seed(messages))
        else:
            request["temperature"] = 0.0
        if self.logprobs:
            request.update(logprobs=True, top_logprobs=TOP_LOGPROBS,
                           stream_options={"include_usage": True})
        return request

    def _call(self, messages: Sequence[dict[str, str]], hypothesis: str,
              grades: Sequence[int]) -> Reply:
        text: list[str] = []
        positions: list[dict[str, float]] = []
        usage = None
        for chunk in self._client.chat.completions.create(**self._request(messages)):
            usage = getattr(chunk, "usage", None) or usage
            for choice in chunk.choices or ():
                if choice.delta is not None and choice.delta.content:
                    text.append(choice.delta.content)
                content = getattr(choice.logprobs, "content", None) if choice.logprobs else None
                for token in content or ():
                    positions.append({alt.token: alt.logprob for alt in token.top_logprobs or ()}
                                     | {token.token: token.logprob})
        reply = "".join(text)
        prompt_tokens = float(usage.prompt_tokens) if usage is not None else math.nan
        completion = float(usage.completion_tokens) if usage is not None else math.nan
        grade = require_grade(reply, grades, hypothesis)
        score = float(grade)
        for alternatives in positions:  # the first position whose top alternatives hold a grade
            if any(parse_grade(token.strip(), grades) is not None for token in alternatives):
                weighted = weighted_grade(grade_probabilities(alternatives, grades))
                if weighted is not None:
                    score = weighted.score
                break
        return Reply(score, grade, prompt_tokens, completion)
