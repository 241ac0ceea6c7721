"""A scripted local stand-in for the Anthropic Messages API, for end-to-end tests.

`FakeAPI` serves POST /v1/messages (streamed SSE, or one JSON message when the body does
not ask for a stream) and /v1/messages/count_tokens on 127.0.0.1, and logs every request
in order. Each main-conversation request (one whose body has a `tools` array) consumes the
next turn of the script; the others (titles, summaries) get a short plain answer. A turn is
a list of content blocks built with `text()` and `tool_use()`, or `HANG`, which blocks that
request until `release()` or `stop()`, or an `ApiError` (`overloaded()`: HTTP 529, with a
retry-after header when asked), answered with that status and the API's error body, or `DROP`,
which closes the connection without answering, or `CUT`, which starts a streamed answer (its
headers and `message_start`) and closes the connection in the middle of it. When the script runs
out, the answer is the text "(script exhausted)" with stop_reason end_turn, so a session always
ends. Every answer reports
the token usage `usage(entry)` gives (default 10 in, 10 out); `reported` lists what each answer
that reached the client reported, with its request's kind.
"""

from __future__ import annotations

import itertools
import json
import socket
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Union

from .messages_api import (
    Block,
    ToolResult,
    all_text_of,
    message,
    sse_events,
    text,
    tool_results,
    tool_use,
)

__all__ = [
    "ApiError",
    "CUT",
    "DROP",
    "FakeAPI",
    "HANG",
    "overloaded",
    "LoggedRequest",
    "ToolResult",
    "all_text_of",
    "text",
    "tool_results",
    "tool_use",
    "EXHAUSTED_TEXT",
    "RELEASED_TEXT",
    "SIDE_TEXT",
]

EXHAUSTED_TEXT = "(script exhausted)"
RELEASED_TEXT = "(released)"
SIDE_TEXT = "ok"


class _Hang:
    """Marker for a turn on which the server blocks instead of answering."""

    def __repr__(self) -> str:
        return "HANG"


HANG = _Hang()


class _Drop:
    """Marker for a turn on which the server closes the connection without answering."""

    def __repr__(self) -> str:
        return "DROP"


DROP = _Drop()


class _Cut:
    """Marker for a turn whose streamed answer stops in the middle: the connection closes after
    `message_start`, with no `message_stop`."""

    def __repr__(self) -> str:
        return "CUT"


CUT = _Cut()


@dataclass(frozen=True)
class ApiError:
    """A turn answered with an HTTP error, as the Messages API sends one (and `retry-after`)."""

    status: int
    kind: str
    message: str
    retry_after: float | None = None

    def body(self) -> bytes:
        return json.dumps({"type": "error", "error": {"type": self.kind, "message": self.message}}).encode()


def overloaded(retry_after: float | None = None) -> ApiError:
    """HTTP 529 overloaded_error, the API's answer when it is overloaded."""
    return ApiError(529, "overloaded_error", "Overloaded", retry_after)


Turn = Union[list[Block], _Hang, _Drop, _Cut, ApiError]
Script = Union[Sequence[Turn], Callable[[dict[str, Any]], Turn]]


@dataclass
class LoggedRequest:
    """One request received; `turn` is the script index a main request consumed; `headers` with
    lower-case names."""

    method: str
    path: str
    body: Any
    kind: str  # "main", "side", "count_tokens" or "other"
    turn: int | None = None
    headers: dict[str, str] = field(default_factory=dict)


class FakeAPI:
    """The scripted server. Use as a context manager, or call `start()` and `stop()`.

    `script` may be replaced at any time before the requests it should answer arrive.
    """

    def __init__(self, script: Script = ()) -> None:
        self.script: Script = script
        self.log: list[LoggedRequest] = []
        self.hanging = threading.Event()  # set once a request blocks on a HANG turn
        self._release = threading.Event()
        self._lock = threading.Lock()
        self._turns_served = 0
        self._ids = itertools.count(1)
        self._message_ids = itertools.count(1)
        self._server: ThreadingHTTPServer | None = None
        self.usage: Callable[[LoggedRequest], dict[str, int]] | None = None
        self.reported: list[tuple[str, dict[str, int]]] = []  # (request kind, usage) of answers delivered

    def start(self) -> FakeAPI:
        """Listen on a free port of 127.0.0.1 and serve from a background thread."""
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True).start()
        return self

    def stop(self) -> None:
        """Release any hung request, stop serving and close the socket."""
        self._release.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> FakeAPI:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        """The URL to put in ANTHROPIC_BASE_URL."""
        assert self._server is not None, "FakeAPI is not started"
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def release(self) -> None:
        """From now on, HANG turns (blocked or later) answer "(released)" and end the turn."""
        self._release.set()

    def wait_until_hanging(self, timeout: float) -> bool:
        """Wait until a request blocks on a HANG turn; False if none did within `timeout`."""
        return self.hanging.wait(timeout)

    def requests(self) -> list[dict[str, Any]]:
        """Bodies of all POST /v1/messages requests (main and side), in order."""
        return [r.body for r in self.log if r.kind in ("main", "side")]

    def requests_main(self) -> list[dict[str, Any]]:
        """Bodies of the main-conversation requests (those with a `tools` array), in order."""
        return [r.body for r in self.log if r.kind == "main"]

    def main_entries(self) -> list[LoggedRequest]:
        """The main-conversation requests as logged (body and headers), in order."""
        return [r for r in self.log if r.kind == "main"]

    def answer(self, body: dict[str, Any], entry: LoggedRequest) -> list[Block] | _Drop | _Cut | ApiError:
        """What answers a /v1/messages request: its blocks, or an error or DROP turn as it is;
        blocks while its turn is HANG."""
        if entry.kind != "main":
            return [text(SIDE_TEXT)]
        entry.turn, turn = self._next_turn(body)
        if isinstance(turn, _Hang):
            self.hanging.set()
            self._release.wait()
            turn = [text(RELEASED_TEXT)]
        if isinstance(turn, (_Drop, _Cut, ApiError)):
            return turn
        return [self._with_id(block) for block in turn]

    def _next_turn(self, body: dict[str, Any]) -> tuple[int, Turn]:
        with self._lock:
            index = self._turns_served
            self._turns_served += 1
        if callable(self.script):
            return index, self.script(body)
        if index < len(self.script):
            return index, self.script[index]
        return index, [text(EXHAUSTED_TEXT)]

    def message_id(self) -> str:
        """A new message id for an answer (each answer its own, as the API gives)."""
        return f"msg_{next(self._message_ids):04d}"

    def _with_id(self, block: Block) -> Block:
        if block.get("type") == "tool_use" and "id" not in block:
            return dict(block, id=f"toolu_{next(self._ids):04d}")
        return block


def _handler_for(api: FakeAPI) -> type[BaseHTTPRequestHandler]:
    return type("Handler", (_Handler,), {"fake": api})


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    fake: FakeAPI

    def log_message(self, format: str, *args: Any) -> None:
        pass  # keep test output quiet

    def do_GET(self) -> None:
        self.fake.log.append(LoggedRequest("GET", self.path, None, "other"))
        self._send(404, "application/json", b'{"type":"error"}')

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("content-length") or 0))
        try:
            body: Any = json.loads(raw or b"null")
        except ValueError:
            body = raw.decode("utf-8", "replace")
        path = self.path.split("?", 1)[0]
        if path == "/v1/messages" and isinstance(body, dict):
            kind = "main" if body.get("tools") else "side"
        elif path == "/v1/messages/count_tokens":
            kind = "count_tokens"
        else:
            kind = "other"
        entry = LoggedRequest("POST", self.path, body, kind, headers={k.lower(): v for k, v in self.headers.items()})
        self.fake.log.append(entry)
        try:
            if kind == "count_tokens":
                tokens = json.dumps({"input_tokens": max(1, len(raw) // 4)})
                self._send(200, "application/json", tokens.encode())
            elif kind == "other":
                self._send(404, "application/json", b'{"type":"error"}')
            else:
                self._answer(body, entry)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client went away, e.g. a test killed the CLI

    def _answer(self, body: dict[str, Any], entry: LoggedRequest) -> None:
        answer = self.fake.answer(body, entry)
        if isinstance(answer, _Cut):
            self._cut(str(body.get("model", "claude-test")), self._usage(entry))
        elif isinstance(answer, _Drop):
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)
        elif isinstance(answer, ApiError):
            headers = {} if answer.retry_after is None else {"retry-after": f"{answer.retry_after:g}"}
            self._send(answer.status, "application/json", answer.body(), headers)
        elif body.get("stream"):
            model = str(body.get("model", "claude-test"))
            usage = self._usage(entry)
            self._send(200, "text/event-stream", sse_events(answer, model, usage, self.fake.message_id()))
            self.fake.reported.append((entry.kind, usage))
        else:
            usage = self._usage(entry)
            reply = message(answer, str(body.get("model")), usage, self.fake.message_id())
            self._send(200, "application/json", json.dumps(reply).encode())
            self.fake.reported.append((entry.kind, usage))

    def _cut(self, model: str, usage: dict[str, int]) -> None:
        """A 200 stream that ends after its first event, without a length: the client reads to the end."""
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("connection", "close")
        self.end_headers()
        first = sse_events([text("partial")], model, usage, self.fake.message_id()).split(b"\n\n", 1)[0] + b"\n\n"
        self.wfile.write(first)
        self.wfile.flush()
        self.close_connection = True
        self.connection.shutdown(socket.SHUT_RDWR)

    def _usage(self, entry: LoggedRequest) -> dict[str, int]:
        usage = self.fake.usage(entry) if self.fake.usage is not None else None
        return dict(usage or {"input_tokens": 10, "output_tokens": 10})

    def _send(
        self, status: int, content_type: str, payload: bytes, headers: dict[str, str] | None = None
    ) -> None:
        self.send_response(status)
        self.send_header("content-type", content_type)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("content-length", str(len(payload)))
        self.send_header("connection", "close")
        self.end_headers()
        self.wfile.write(payload)
        self.close_connection = True
