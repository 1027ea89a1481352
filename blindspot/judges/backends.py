"""How a judge answers: its sampling settings, and an OpenAI-compatible server as the judge.

The modes (:data:`MODES`):

* ``weighted``: G-Eval's probability-weighted grade from the next-token distribution over the
  grade tokens (in-process: the model's own distribution; a server: its ``top_logprobs``). A
  server that returns no log-probabilities is refused before any row is judged: a weighted
  grade is never quietly replaced by a parsed one;
* ``greedy``: the grade parsed from the greedy reply (temperature 0), the same from both
  backends;
* ``sample``: the grade parsed from a sampled reply (``temperature``, ``top_p``, ``seed``): a
  judge whose grade changes from one sample to the next is flaky;
* ``auto``: ``weighted`` where the log-probabilities are there, else ``greedy``; the mode that
  ran is the one the cache key and the result's signature show.

A server is first asked what it serves (:class:`ServerIdentity`: ``GET /models``, and one
one-token completion that shows its ``system_fingerprint`` and whether it returns
log-probabilities, before any row, so that a cold server loads its model on one call); that
identity and the endpoint are part of the judge's cache key and signature. Every call then has
one deadline (``timeout`` bounds the whole call, retries and back-off included, not each read);
429, 5xx and lost connections are retried with back-off. A reply is read streamed (server-sent
events) or whole (a plain JSON completion). What the server does wrong is a
:class:`JudgeServerError` naming it and its URL (the run stops with one line, its state kept); a
reply that holds no grade fails its row (:class:`~blindspot.judges.grades.NoGradeError`). The
key is read from the environment variable ``api_key_env`` when the judge is made and sent only
as the ``Authorization`` header, never when the variable is unset; it is never stored or logged.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import socket
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, urlsplit

import httpx

from blindspot.errors import BlindspotInputError
from blindspot.faults import RESUME, ScorerUnavailable
from blindspot.judges.grades import (
    grade_probabilities,
    no_grade,
    parse_grade,
    require_grade,
    weighted_grade,
)

MODES = ("weighted", "greedy", "sample", "auto")
#: how many alternatives per position a ``weighted`` call asks a server for (OpenAI's maximum)
TOP_LOGPROBS = 20
#: the identity probe's one message: any chat model answers it with one token
PROBE = ({"role": "user", "content": "Reply with the digit 1."},)
#: statuses a server gives while it is busy or still starting: retried with back-off
RETRIED = frozenset({408, 409, 425, 429, 500, 502, 503, 504})
#: the longest back-off between two tries, in seconds
MAX_BACKOFF = 8.0


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


class JudgeServerError(ScorerUnavailable):
    """The judge's server cannot give the run its grades: it is down, it refuses the key, it
    answers with something that is not a chat completion, it runs past the deadline, or it lacks
    the log-probabilities the mode needs. One line names the server and the fix; the run stops
    with its state kept."""


# -- where the server is ----------------------------------------------------------------------------

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


def endpoint_text(url: str) -> str:
    """The endpoint as a cache key and a signature carry it: scheme, host, port (always
    written) and path, never user info, a query or a fragment (:func:`check_url` refuses them)."""
    parts = urlsplit(check_url(url))
    host = parts.hostname or ""
    port = parts.port or (443 if parts.scheme == "https" else 80)
    return (f"{parts.scheme}://{f'[{host}]' if ':' in host else host}:{port}"
            f"{quote(parts.path.rstrip('/'), safe='/%-._~!$&()*+,;=:@')}")


@dataclass
class Endpoint:
    """Where a server judge is and how it is called (``timeout``: seconds for one whole call,
    its retries included)."""

    url: str
    api_key_env: str = "OPENAI_API_KEY"
    concurrency: int = 4
    retries: int = 4
    timeout: float = 120.0


@dataclass(frozen=True)
class ServerIdentity:
    """What a server says it serves: part of the judge's cache key and signature.

    ``served``: the id ``GET /models`` lists for the model asked for (that id; the only one
    listed; else ``-``). ``fingerprint``: the probe reply's ``system_fingerprint`` (None when the
    server gives none). ``logprobs``: whether the probe reply held log-probabilities (only asked
    for by ``weighted`` and ``auto``). ``mode``: the mode the judge runs in (``auto`` resolved)."""

    endpoint: str
    served: str
    fingerprint: str | None
    logprobs: bool
    mode: str

    def as_config(self) -> dict[str, str]:
        """The options a cache key and a signature add for the server."""
        found = {"server": self.endpoint, "served": self.served, "mode": self.mode}
        return found | ({"fingerprint": self.fingerprint} if self.fingerprint else {})


# -- one call and its reply ------------------------------------------------------------------------

@dataclass
class Completion:
    """What one chat completion said: its text, each position's top log-probabilities, its
    token counts, and what the server said of itself."""

    text: str = ""
    positions: list[dict[str, float]] = field(default_factory=list)
    prompt_tokens: float = math.nan
    completion_tokens: float = math.nan
    fingerprint: str | None = None
    choices: int = 0


class _Retry(Exception):
    """A try that may succeed later (429, 5xx, a lost connection): how long the server asks to
    wait (None: it does not say) and what happened."""

    def __init__(self, what: str, wait: float | None = None) -> None:
        super().__init__(what)
        self.what, self.wait = what, wait


class _LogprobsRefused(Exception):
    """A 400 or 422 to a request that asked for log-probabilities (``transformers serve``)."""


def _events(lines: Iterable[str]) -> Iterator[str]:
    """The data of each server-sent event (its ``data:`` lines joined), until ``[DONE]``;
    comments (keep-alives) and other fields are passed over."""
    data: list[str] = []
    for line in lines:
        if not line:
            if data:
                payload = "\n".join(data)
                if payload.strip() == "[DONE]":
                    return
                yield payload
                data = []
        elif line.startswith("data:"):
            data.append(line[5:].removeprefix(" "))
    if data and "\n".join(data).strip() != "[DONE]":
        yield "\n".join(data)


def _top_logprobs(logprobs: Any) -> list[dict[str, float]]:
    """Each position's alternatives (token -> log-probability) from a choice's ``logprobs``."""
    content = logprobs.get("content") if isinstance(logprobs, dict) else None
    positions = []
    for token in content or ():
        if not isinstance(token, dict):
            continue
        found = {str(alt["token"]): float(alt["logprob"]) for alt in token.get("top_logprobs") or ()
                 if isinstance(alt, dict) and "token" in alt and "logprob" in alt}
        if "token" in token and "logprob" in token:
            found[str(token["token"])] = float(token["logprob"])
        positions.append(found)
    return positions


class RemoteJudge:
    """An OpenAI-compatible chat server as a judge, called over HTTP (``httpx``)."""

    def __init__(self, endpoint: Endpoint, model: str, sampling: Sampling) -> None:
        self.endpoint, self.model, self.sampling = endpoint, model, sampling
        self.where = endpoint_text(endpoint.url)
        key = os.environ.get(endpoint.api_key_env)
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        self._client = httpx.Client(headers=headers, follow_redirects=False,
                                    limits=httpx.Limits(max_connections=max(1, endpoint.concurrency)))
        self._identity: ServerIdentity | None = None

    # -- what the server serves -------------------------------------------------------------------

    def identity(self) -> ServerIdentity:
        """What the server serves, asked once (``GET /models`` and the one-token probe)."""
        if self._identity is None:
            asks_logprobs = self.sampling.mode in ("weighted", "auto")
            served = self._served()
            probe = self._complete(list(PROBE), self._body(list(PROBE), max_tokens=1,
                                                           logprobs=asks_logprobs,
                                                           temperature=0.0),
                                   probe=True)
            logprobs = bool(probe.positions)
            if self.sampling.mode == "weighted" and not logprobs:
                raise JudgeServerError(
                    f"the judge server {self.where} returns no log-probabilities, which "
                    "mode=weighted (the probability-weighted grade) needs; nothing was judged. "
                    "Use --option llm_judge.mode=greedy (the grade parsed from the reply), or "
                    "mode=auto (weighted where the server gives log-probabilities, else greedy; "
                    "the signature says which ran)")
            mode = ("weighted" if logprobs else "greedy") if self.sampling.mode == "auto" \
                else self.sampling.mode
            self._identity = ServerIdentity(self.where, served, probe.fingerprint, logprobs,
                                            mode)
        return self._identity

    def _served(self) -> str:
        """The id ``GET /models`` lists for the model asked for, the only one it lists, else
        ``-`` (a server without the route, or one that lists other models)."""
        deadline = time.monotonic() + self.endpoint.timeout
        response = self._with_retries(lambda: self._get("/models", deadline), deadline)
        if response is None:
            return "-"
        listed = [str(m.get("id")) for m in response.get("data") or () if isinstance(m, dict)]
        if self.model in listed:
            return self.model
        return listed[0] if len(listed) == 1 else "-"

    def _get(self, path: str, deadline: float) -> dict[str, Any] | None:
        try:
            response = self._client.get(self.endpoint.url + path,
                                        timeout=max(deadline - time.monotonic(), 0.001))
        except httpx.TransportError as error:
            raise self._lost(error, deadline) from None
        self._check_status(response.status_code, response.headers, logprobs=False)
        if response.status_code >= 400:  # no such route: the server lists nothing
            return None
        try:
            found = response.json()
        except ValueError:
            return None
        return found if isinstance(found, dict) else None

    # -- grades -----------------------------------------------------------------------------------

    def replies(self, batch: Sequence[Sequence[dict[str, str]]], grades: Sequence[int],
                hypotheses: Sequence[str]) -> list[Reply]:
        """Each row's reply, at most ``concurrency`` calls at once, in row order."""
        self.identity()
        with ThreadPoolExecutor(max_workers=max(1, self.endpoint.concurrency)) as pool:
            return list(pool.map(lambda messages, hypothesis: self.reply(messages, hypothesis,
                                                                         grades),
                                 batch, hypotheses))

    def reply(self, messages: Sequence[dict[str, str]], hypothesis: str,
              grades: Sequence[int]) -> Reply:
        """One row's grade. ``weighted``: G-Eval's weighted grade, as in-process, from the
        top log-probabilities of the reply's first position whose alternatives hold a grade
        (the first token, when the judge considers a grade there), and the most probable grade;
        the reply's text need not hold one. Else the grade parsed from the reply's text."""
        mode = self.identity().mode
        completion = self._complete(messages, self._request(messages, mode))
        tokens = completion.prompt_tokens, completion.completion_tokens
        if mode != "weighted":
            grade = require_grade(completion.text, grades, hypothesis)
            return Reply(float(grade), grade, *tokens)
        for alternatives in completion.positions:
            if any(parse_grade(token.strip(), grades) is not None for token in alternatives):
                weighted = weighted_grade(grade_probabilities(alternatives, grades))
                if weighted is not None:
                    return Reply(weighted.score, weighted.grade, *tokens)
        raise no_grade(completion.text, grades, hypothesis,
                       f" among the top {TOP_LOGPROBS} log-probabilities of any of its tokens")

    def _request(self, messages: Sequence[dict[str, str]], mode: str) -> dict[str, Any]:
        if mode == "sample":
            return self._body(messages, self.sampling.max_tokens, logprobs=False,
                              temperature=self.sampling.temperature, top_p=self.sampling.top_p,
                              seed=self.sampling.row_seed(messages))
        return self._body(messages, self.sampling.max_tokens, logprobs=mode == "weighted",
                          temperature=0.0)

    def _body(self, messages: Sequence[dict[str, str]], max_tokens: int, logprobs: bool,
              **settings: Any) -> dict[str, Any]:
        body = {"model": self.model, "messages": list(messages), "stream": True,
                "max_tokens": max_tokens, "stream_options": {"include_usage": True}, **settings}
        if logprobs:
            body.update(logprobs=True, top_logprobs=TOP_LOGPROBS)
        return body

    # -- the call ---------------------------------------------------------------------------------

    def _complete(self, messages: Sequence[dict[str, str]], body: dict[str, Any],
                  probe: bool = False) -> Completion:
        """One chat completion within one deadline, retried with back-off."""
        deadline = time.monotonic() + self.endpoint.timeout
        try:
            return self._with_retries(lambda: self._post(body, deadline), deadline)
        except _LogprobsRefused:
            if not probe:
                raise self._fault("refused a request for log-probabilities it took before") \
                    from None
            plain = {k: v for k, v in body.items() if k not in ("logprobs", "top_logprobs")}
            return self._with_retries(lambda: self._post(plain, deadline), deadline)

    def _with_retries(self, call: Any, deadline: float) -> Any:
        tries = 0
        while True:
            try:
                return call()
            except _Retry as error:
                tries += 1
                wait = min(MAX_BACKOFF, 0.5 * 2 ** (tries - 1)) if error.wait is None \
                    else min(error.wait, MAX_BACKOFF)
                if tries > self.endpoint.retries:
                    raise JudgeServerError(
                        f"the judge server {self.where} failed after {tries} tries "
                        f"({error.what}); the run's state is kept: {RESUME}") from None
                if time.monotonic() + wait >= deadline:
                    raise self._late() from None
                time.sleep(wait)

    def _late(self) -> JudgeServerError:
        return JudgeServerError(
            f"the judge server {self.where} did not finish a reply within "
            f"{self.endpoint.timeout:g} s (the timeout of one call, retries included); the "
            f"run's state is kept: raise --option llm_judge.timeout=SECONDS, or {RESUME}")

    def _lost(self, error: httpx.TransportError, deadline: float) -> Exception:
        """A time-out, or a connection lost or refused: late when the deadline has passed (the
        watchdog shut the socket), else worth another try."""
        if isinstance(error, httpx.TimeoutException) or time.monotonic() >= deadline:
            return self._late()
        return _Retry(f"no connection: {type(error).__name__}")

    def _fault(self, what: str) -> JudgeServerError:
        return JudgeServerError(
            f"the judge server {self.where} {what}: a fault of the server, not a reply "
            f"without a grade; the run's state is kept: {RESUME} once the server is mended")

    def _check_status(self, status: int, headers: Any, logprobs: bool) -> None:
        if status in (401, 403):
            raise JudgeServerError(
                f"the judge server {self.where} refused the request (HTTP {status}): set "
                f"${self.endpoint.api_key_env} to the server's key (--option "
                f"llm_judge.api_key_env=NAME names another variable)"
                + ("" if os.environ.get(self.endpoint.api_key_env) else
                   f"; ${self.endpoint.api_key_env} is not set, so no key was sent"))
        if status in RETRIED:
            after = headers.get("retry-after")
            try:
                wait = float(after) if after is not None else None
            except ValueError:
                wait = None
            raise _Retry(f"HTTP {status}", wait)
        if status in (400, 422) and logprobs:
            raise _LogprobsRefused()

    def _post(self, body: dict[str, Any], deadline: float) -> Completion:
        """One try: the request, then its reply read streamed or whole, cut off at the
        deadline (a watchdog shuts the socket, so a server that sends keep-alives and never a
        token is cut off too)."""
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise self._late()
        url = self.endpoint.url + "/chat/completions"
        try:
            with self._client.stream("POST", url, json=body, timeout=remaining) as response:
                self._check_status(response.status_code, response.headers,
                                   logprobs=bool(body.get("logprobs")))
                if response.status_code >= 400:
                    response.read()
                    raise self._fault(f"answered HTTP {response.status_code}"
                                      f"{_said(response.text)}")
                kind = response.headers.get("content-type", "").split(";")[0].strip().lower()
                with _Watchdog(response, deadline) as watchdog:
                    if kind == "text/event-stream":
                        found = self._streamed(_events(watchdog.lines()))
                    elif kind == "application/json":
                        found = self._whole(watchdog.body())
                    else:
                        raise self._fault(f"answered with Content-Type {kind or 'none'!r}, "
                                          "not a chat completion")
        except httpx.TransportError as error:
            raise self._lost(error, deadline) from None
        if found.choices == 0:
            raise self._fault("answered a chat completion with no choices")
        return found

    def _streamed(self, events: Iterable[str]) -> Completion:
        found = Completion()
        for payload in events:
            try:
                chunk = json.loads(payload)
            except ValueError:
                raise self._fault(f"sent a malformed chunk {payload[:80]!r}") from None
            self._read(chunk, found, "delta")
        return found

    def _whole(self, text: str) -> Completion:
        try:
            reply = json.loads(text)
        except ValueError:
            raise self._fault(f"answered with JSON that does not parse: {text[:80]!r}") from None
        found = Completion()
        self._read(reply, found, "message")
        return found

    def _read(self, reply: Any, found: Completion, part: str) -> None:
        """One streamed chunk (``part`` ``delta``) or a whole completion (``message``) into
        ``found``; anything else is the server's fault."""
        if not isinstance(reply, dict) or "error" in reply:
            error = reply.get("error") if isinstance(reply, dict) else None
            raise self._fault("answered with an error" + _said(json.dumps(error))
                              if error is not None else
                              f"answered {json.dumps(reply)[:80]}, not a chat completion")
        choices = reply.get("choices")
        if not isinstance(choices, list):
            raise self._fault(f"answered {json.dumps(reply)[:80]}, not a chat completion")
        usage = reply.get("usage")
        if isinstance(usage, dict):
            found.prompt_tokens = _count(usage.get("prompt_tokens"))
            found.completion_tokens = _count(usage.get("completion_tokens"))
        if isinstance(reply.get("system_fingerprint"), str) and reply["system_fingerprint"]:
            found.fingerprint = reply["system_fingerprint"]
        for choice in choices:
            if not isinstance(choice, dict) or choice.get("index", 0) != 0:
                continue
            found.choices += 1
            said = choice.get(part)
            content = said.get("content") if isinstance(said, dict) else None
            if isinstance(content, str):
                found.text += content
            found.positions += _top_logprobs(choice.get("logprobs"))


class _Watchdog:
    """Shuts a response's socket at the deadline, so that no read outlives it; ``lines`` and
    ``body`` then say the call ran late."""

    def __init__(self, response: httpx.Response, deadline: float) -> None:
        self.response, self.deadline, self.fired = response, deadline, False
        stream = response.extensions.get("network_stream")
        self._socket = stream.get_extra_info("socket") if stream is not None else None
        self._timer = threading.Timer(max(deadline - time.monotonic(), 0.0), self._fire)
        self._timer.daemon = True

    def __enter__(self) -> _Watchdog:
        self._timer.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._timer.cancel()

    def _fire(self) -> None:
        self.fired = True
        if self._socket is not None:
            try:
                self._socket.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass  # already closed: the read has ended

    def _late(self) -> httpx.TimeoutException:
        return httpx.ReadTimeout("the call ran past its deadline")

    def lines(self) -> Iterator[str]:
        for line in self.response.iter_lines():
            if self.fired or time.monotonic() > self.deadline:
                raise self._late()
            yield line
        if self.fired:
            raise self._late()

    def body(self) -> str:
        text = self.response.read().decode("utf-8", errors="replace")
        if self.fired:
            raise self._late()
        return text


def _said(text: str) -> str:
    """``: <the start of what the server said>`` (nothing when it said nothing)."""
    text = " ".join(text.split())
    return f": {text[:120]}" if text else ""


def _count(value: Any) -> float:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) \
        else math.nan


__all__ = ["MODES", "TOP_LOGPROBS", "Endpoint", "JudgeServerError", "RemoteJudge", "Reply",
           "Sampling", "ServerIdentity", "check_url", "endpoint_text"]
