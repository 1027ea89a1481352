"""A small OpenAI-compatible chat server of our own, on 127.0.0.1, for the judge's fault tests.

It is a real HTTP server (the judge's client talks to it over a socket, as to any server) that
streams server-sent events like ``transformers serve`` or vLLM, and can be told on cue what no
real model server does when asked: answer 429 or 5xx, refuse a key, reply without a grade or with
a grade out of range, send a keep-alive every second and never a token, answer something that is
not a chat completion, a completion with no choices, a malformed chunk, or a plain JSON
completion, return no log-probabilities, or stop answering. Its grade is a function of the
prompt (so runs are reproducible), and it returns ``top_logprobs`` when asked, with known
probabilities, so the weighted grade can be checked by hand. It lists its model at ``GET
/v1/models`` and records every chat request's headers and body.

The agreement with real servers (``transformers serve``, llama.cpp's) is proved against the real
ones (tests/test_judge_models.py, tests/test_judge_servers.py).
"""

from __future__ import annotations

import json
import math
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from blindspot.judges.backends import PROBE

#: the probabilities the server gives the grade it picks and the one above it (weighted grade
#: = g * 0.75 + (g + 1) * 0.25 for g < 5)
TOP, NEXT = 0.75, 0.25
#: how a reply can go wrong (``Behaviour.reply``)
REPLIES = ("sse", "json", "trickle", "not_chat", "no_choices", "malformed", "html", "empty")
#: the longest a trickling reply keeps sending keep-alives (a bounded loop)
TRICKLE_S = 120


def grade_for(messages: list[dict[str, Any]]) -> int:
    """The server's grade of a prompt: 1-5 from the length of its last message."""
    return len(messages[-1]["content"]) % 5 + 1


def is_probe(body: dict[str, Any]) -> bool:
    """Whether a request is the judge's identity probe (its one fixed message), not a row."""
    return body.get("messages") == [dict(m) for m in PROBE]


@dataclass
class Behaviour:
    """What the server does.

    * ``grader`` (the request's body -> its grade) replaces :func:`grade_for`: a pairwise judge
      with a known bias, one whose grade follows the request's seed, a constant one;
    * the first ``fail_first`` chat requests get ``status`` (429, 503...), with the header
      ``Retry-After: retry_after`` (None: no such header);
    * ``reply``: how every chat request from the ``fault_from``-th on is answered (0: the
      identity probe on; 1: the probe answered well, then every row), one of :data:`REPLIES`;
    * ``no_grade``: replies hold no grade; ``logprobs``: False gives none even when asked;
      ``top``: the probability of the grade picked (the one above it gets the rest: 0.5 is a
      tie between them);
    * ``key``: a request without ``Bearer <key>`` gets 401;
    * ``models``: what ``GET /v1/models`` lists (None: 404); ``fingerprint``: each reply's
      ``system_fingerprint`` (None: none);
    * only ``answer_at_most`` chat requests are answered in all (then the server closes).
    """

    grader: Callable[[dict[str, Any]], int] | None = None
    fail_first: int = 0
    status: int = 429
    retry_after: str | None = "0"
    reply: str = "sse"
    fault_from: int = 0
    no_grade: bool = False
    logprobs: bool = True
    top: float = TOP
    key: str | None = None
    models: list[str] | None = field(default_factory=lambda: ["judge-model"])
    fingerprint: str | None = None
    answer_at_most: int | None = None
    requests: list[dict[str, Any]] = field(default_factory=list)
    answered: int = 0
    #: how long each chat request was served, from its arrival to the last byte written or
    #: the client hanging up (a trickle: how long the judge listened)
    served_s: list[float] = field(default_factory=list)

    def served(self, wait_s: float = 5.0) -> list[float]:
        """:attr:`served_s` once every chat request's handler has ended (a trickle notices the
        judge hung up at its next keep-alive), waiting at most ``wait_s``."""
        deadline = time.monotonic() + wait_s
        while len(self.served_s) < len(self.requests) and time.monotonic() < deadline:
            time.sleep(0.1)
        return list(self.served_s)

    def graded(self) -> list[dict[str, Any]]:
        """The chat requests that graded a row (the identity probe left out)."""
        return [r for r in self.requests if not is_probe(r["body"])]


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, *args: Any) -> None:  # quiet
        return None

    def _refused(self) -> bool:
        key = self.server.behaviour.key
        if key is not None and self.headers.get("Authorization") != f"Bearer {key}":
            self._error(401, "invalid api key")
            return True
        return False

    def do_GET(self) -> None:  # noqa: N802  (http.server's name)
        models = self.server.behaviour.models
        if self._refused():
            return
        if not self.path.endswith("/models") or models is None:
            self._error(404, "not found")
            return
        self._json({"object": "list", "data": [{"id": m, "object": "model", "owned_by": "me"}
                                               for m in models]})

    def do_POST(self) -> None:  # noqa: N802  (http.server's name)
        start = time.monotonic()
        try:
            self._post()
        finally:
            self.server.behaviour.served_s.append(time.monotonic() - start)

    def _post(self) -> None:
        behaviour = self.server.behaviour
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        behaviour.requests.append({"headers": {k.lower(): v for k, v in self.headers.items()},
                                   "body": body})
        if self._refused():
            return
        if len(behaviour.requests) <= behaviour.fail_first:
            self._error(behaviour.status, "slow down")
            return
        if behaviour.answer_at_most is not None and behaviour.answered >= behaviour.answer_at_most:
            self.close_connection = True
            self.connection.close()
            threading.Thread(target=self.server.stop, daemon=True).start()
            return
        behaviour.answered += 1
        kind = behaviour.reply if len(behaviour.requests) > behaviour.fault_from else "sse"
        if is_probe(body):  # the judge's identity probe: any chat model answers it with "1"
            grade, text = 1, "1"
        else:
            grade = behaviour.grader(body) if behaviour.grader else grade_for(body["messages"])
            text = "I would rather not say." if behaviour.no_grade else f"{grade}"
        if kind == "json" or (kind != "sse" and not body.get("stream")):
            self._json(self._completion(body, text, grade, "message"))
        elif kind == "sse":
            self._stream(body, text, grade)
        else:
            getattr(self, f"_{kind}")()

    # -- good replies ---------------------------------------------------------------------------

    def _completion(self, body: dict[str, Any], text: str, grade: int, part: str
                    ) -> dict[str, Any]:
        choice: dict[str, Any] = {"index": 0, part: {"role": "assistant", "content": text},
                                  "finish_reason": "stop" if part == "message" else None}
        if body.get("logprobs") and self.server.behaviour.logprobs:
            top = self.server.behaviour.top
            choice["logprobs"] = {"content": [{"token": text[:1], "logprob": math.log(top),
                                               "bytes": None,
                                               "top_logprobs": self._alternatives(grade)}]}
        reply: dict[str, Any] = {
            "id": "c", "object": "chat.completion" + ("" if part == "message" else ".chunk"),
            "created": 0, "model": "m", "choices": [choice]}
        if self.server.behaviour.fingerprint:
            reply["system_fingerprint"] = self.server.behaviour.fingerprint
        if part == "message":
            reply["usage"] = {"prompt_tokens": 100, "completion_tokens": 1, "total_tokens": 101}
        return reply

    def _alternatives(self, grade: int) -> list[dict[str, Any]]:
        top = self.server.behaviour.top
        alternatives = [{"token": str(grade), "logprob": math.log(top), "bytes": None}]
        if grade < 5:
            alternatives.append({"token": str(grade + 1), "logprob": math.log(1 - top),
                                 "bytes": None})
        return alternatives

    def _stream(self, body: dict[str, Any], text: str, grade: int) -> None:
        self._sse_headers()
        self._event(self._completion(body, text, grade, "delta"))
        self._event({"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "m",
                     "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
        if (body.get("stream_options") or {}).get("include_usage"):
            self._event({"id": "c", "object": "chat.completion.chunk", "created": 0,
                         "model": "m", "choices": [],
                         "usage": {"prompt_tokens": 100, "completion_tokens": 1,
                                   "total_tokens": 101}})
        self.wfile.write(b"data: [DONE]\n\n")

    # -- faults ---------------------------------------------------------------------------------

    def _trickle(self) -> None:
        """A keep-alive every second and never a token (for at most ``TRICKLE_S`` seconds)."""
        self._sse_headers()
        for _ in range(TRICKLE_S):
            try:
                self.wfile.write(b": keep-alive\n\n")
                self.wfile.flush()
            except OSError:  # the client hung up: the server is done with it
                return
            time.sleep(1)

    def _not_chat(self) -> None:
        self._json({"status": "ok", "message": "the service is up"})

    def _no_choices(self) -> None:
        self._json({"id": "c", "object": "chat.completion", "created": 0, "model": "m",
                    "choices": []})

    def _malformed(self) -> None:
        self._sse_headers()
        self.wfile.write(b'data: {"id": "c", "choices": [{"delta": \n\n')
        self.wfile.write(b"data: [DONE]\n\n")

    def _html(self) -> None:
        page = b"<html><body>Welcome to nginx!</body></html>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(page)))
        self.end_headers()
        self.wfile.write(page)

    def _empty(self) -> None:
        self._stream({"stream_options": {"include_usage": True}}, "", 1)

    # -- the wire -------------------------------------------------------------------------------

    def _sse_headers(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()

    def _event(self, payload: dict[str, Any]) -> None:
        self.wfile.write(f"data: {json.dumps(payload)}\n\n".encode())
        self.wfile.flush()

    def _json(self, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _error(self, status: int, message: str) -> None:
        payload = json.dumps({"error": {"message": message, "type": "error"}}).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        if self.server.behaviour.retry_after is not None:
            self.send_header("Retry-After", self.server.behaviour.retry_after)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, port: int, behaviour: Behaviour) -> None:
        super().__init__(("127.0.0.1", port), _Handler)
        self.behaviour = behaviour

    def stop(self) -> None:
        """Stop serving and close the port: later connections are refused."""
        self.shutdown()
        self.server_close()


@contextmanager
def chat_server(behaviour: Behaviour | None = None, port: int = 0
                ) -> Iterator[tuple[str, Behaviour]]:
    """(base URL, behaviour) of a running server; it stops when the block ends."""
    chosen = behaviour or Behaviour()
    server = _Server(port, chosen)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1", chosen
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def rows_file(folder: Path, rows: Sequence[dict[str, Any]]) -> Path:
    """``rows`` as a JSON-lines data file in ``folder`` (what ``blindspot run --data`` reads)."""
    path = folder / "rows.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path
