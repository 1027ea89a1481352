"""A small OpenAI-compatible chat server of our own, on 127.0.0.1, for the judge's fault tests.

It is a real HTTP server (the ``openai`` client talks to it over a socket, as to any server) that
streams server-sent events like ``transformers serve`` or vLLM, and can be told to answer 429, to
reply without a grade, or to stop answering, which a real model server cannot be made to do on
cue. Its grade is a function of the prompt (so runs are reproducible), and it returns
``top_logprobs`` when asked, with known probabilities, so the weighted grade can be checked by
hand. It records every request's headers and body.
"""

from __future__ import annotations

import json
import math
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

#: the probabilities the server gives the grade it picks and the one above it (weighted grade
#: = g * 0.75 + (g + 1) * 0.25 for g < 5)
TOP, NEXT = 0.75, 0.25


def grade_for(messages: list[dict[str, Any]]) -> int:
    """The server's grade of a prompt: 1-5 from the length of its last message."""
    return len(messages[-1]["content"]) % 5 + 1


@dataclass
class Behaviour:
    """What the server does: the first ``fail_first`` requests get ``status``; replies hold no
    grade when ``no_grade``; only ``answer_at_most`` requests are answered in all (then the
    server closes). ``grader`` (the request's body -> its grade) replaces :func:`grade_for`:
    a pairwise judge with a known bias, or one whose grade follows the request's seed."""

    grader: Callable[[dict[str, Any]], int] | None = None
    fail_first: int = 0
    status: int = 429
    no_grade: bool = False
    answer_at_most: int | None = None
    requests: list[dict[str, Any]] = field(default_factory=list)
    answered: int = 0


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, *args: Any) -> None:  # quiet
        return None

    def do_POST(self) -> None:  # noqa: N802  (http.server's name)
        behaviour = self.server.behaviour
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        behaviour.requests.append({"headers": {k.lower(): v for k, v in self.headers.items()},
                                   "body": body})
        if len(behaviour.requests) <= behaviour.fail_first:
            self._error(behaviour.status)
            return
        if behaviour.answer_at_most is not None and behaviour.answered >= behaviour.answer_at_most:
            self.close_connection = True
            self.connection.close()
            threading.Thread(target=self.server.stop, daemon=True).start()
            return
        behaviour.answered += 1
        grade = behaviour.grader(body) if behaviour.grader else grade_for(body["messages"])
        text = "I would rather not say." if behaviour.no_grade else f"{grade}"
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        choice: dict[str, Any] = {"index": 0, "delta": {"role": "assistant", "content": text},
                                  "finish_reason": None}
        if body.get("logprobs"):
            alternatives = [{"token": str(grade), "logprob": math.log(TOP), "bytes": None}]
            if grade < 5:
                alternatives.append({"token": str(grade + 1), "logprob": math.log(NEXT),
                                     "bytes": None})
            choice["logprobs"] = {"content": [{"token": str(grade), "logprob": math.log(TOP),
                                               "bytes": None, "top_logprobs": alternatives}]}
        self._event({"choices": [choice]})
        self._event({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
        if (body.get("stream_options") or {}).get("include_usage"):
            self._event({"choices": [], "usage": {"prompt_tokens": 100, "completion_tokens": 1,
                                                  "total_tokens": 101}})
        self.wfile.write(b"data: [DONE]\n\n")

    def _event(self, payload: dict[str, Any]) -> None:
        chunk = {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "m",
                 **payload}
        self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
        self.wfile.flush()

    def _error(self, status: int) -> None:
        payload = json.dumps({"error": {"message": "slow down", "type": "rate_limit"}}).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Retry-After", "0")
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
