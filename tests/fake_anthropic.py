"""A scripted stand-in for the Anthropic Messages API, for driving real Claude Code offline.

Point Claude Code at it with ``ANTHROPIC_BASE_URL=<fake.url>``. Each *main* request (a body
with ``tools``: the agent loop) takes the next scripted reply — text, or a ``tool_use`` of a
named tool; requests without ``tools`` are helper calls (titles, classifiers) and get a short
text without using up a step. When the script runs out, every main request gets a plain
``end_turn`` text. Every request is logged with its parsed body so a test can assert on what
Claude Code sent: the tool list, the tool results, the system prompt and the messages.

Streaming requests get Server-Sent Events (message_start, content_block_start/delta/stop,
message_delta with the stop reason, message_stop); others get the message as one JSON object.
``POST /v1/messages/count_tokens`` is answered; any other path gets a 404 error object.
Nothing a client sends makes the server raise: a handler failure becomes a 500 answer.
"""

from __future__ import annotations

import gzip
import itertools
import json
import os
import threading
import zlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

HELPER_TEXT = "OK"
DONE_TEXT = "Done."
MAX_BODY = 64 * 1024 * 1024


def text(message: str) -> dict[str, Any]:
    """A scripted reply: the model answers ``message`` and ends its turn."""
    return {"type": "text", "text": message}


def tool_use(name: str, arguments: dict[str, Any], *, say: str = "") -> dict[str, Any]:
    """A scripted reply: the model calls ``name`` with ``arguments`` (after saying ``say``)."""
    return {"type": "tool_use", "name": name, "input": arguments, "say": say}


@dataclass
class Logged:
    """One request as the server received it."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any  # parsed JSON; the raw text when it was not JSON; None when empty
    main: bool = False
    reply: dict[str, Any] = field(default_factory=dict)


class FakeAnthropic:
    """The server; ``with FakeAnthropic([...]) as fake:`` runs it on 127.0.0.1:<ephemeral>."""

    def __init__(self, script: Iterable[dict[str, Any]] = ()) -> None:
        self.script = list(script)
        self.log: list[Logged] = []
        self._step = 0
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ---------------------------------------------------------------------------

    def start(self) -> FakeAnthropic:
        handler = type("Handler", (_Handler,), {"fake": self})
        httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        httpd.daemon_threads = False  # server_close() joins every request thread
        httpd.block_on_close = True
        self._httpd = httpd
        self._thread = threading.Thread(
            target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, name="fake-anthropic"
        )
        self._thread.start()
        return self

    def close(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            if self._thread is not None:
                self._thread.join(timeout=10)
            self._httpd.server_close()
            self._httpd = None
            self._thread = None

    def __enter__(self) -> FakeAnthropic:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def url(self) -> str:
        assert self._httpd is not None, "the server is not running"
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    # -- what was sent -----------------------------------------------------------------------

    @property
    def requests(self) -> list[Logged]:
        with self._lock:
            return list(self.log)

    @property
    def main_requests(self) -> list[dict[str, Any]]:
        """Bodies of the agent-loop requests (those with ``tools``), in order."""
        return [r.body for r in self.requests if r.main]

    @property
    def steps_used(self) -> int:
        with self._lock:
            return self._step

    # -- answering ---------------------------------------------------------------------------

    def _next_reply(self, body: Any) -> tuple[bool, dict[str, Any]]:
        main = isinstance(body, dict) and bool(body.get("tools"))
        with self._lock:
            if not main:
                return False, text(HELPER_TEXT)
            if self._step < len(self.script):
                reply = self.script[self._step]
                self._step += 1
                return True, reply
            return True, text(DONE_TEXT)

    def _new_id(self, prefix: str) -> str:
        return f"{prefix}_fake{next(self._ids):06d}"


class _Handler(BaseHTTPRequestHandler):
    fake: FakeAnthropic
    protocol_version = "HTTP/1.1"
    timeout = 30  # a silent client cannot hold a thread (and close()) forever

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def handle_one_request(self) -> None:
        try:
            super().handle_one_request()
        except Exception:  # never let a client's oddity become an unhandled thread exception
            self.close_connection = True

    def do_POST(self) -> None:
        self._answer()

    do_GET = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = do_POST

    # -- plumbing ----------------------------------------------------------------------------

    def _read_body(self) -> bytes:
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            chunks = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline().strip():  # trailers
                        pass
                    break
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
            raw = b"".join(chunks)
        else:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(min(max(length, 0), MAX_BODY))
        encoding = self.headers.get("Content-Encoding", "").lower()
        if encoding == "gzip":
            raw = gzip.decompress(raw)
        elif encoding == "deflate":
            raw = zlib.decompress(raw)
        return raw

    @staticmethod
    def _parse(raw: bytes) -> Any:
        if not raw:
            return None
        decoded = raw.decode("utf-8", errors="replace")
        try:
            return json.loads(decoded)
        except ValueError:
            return decoded

    def _send(self, status: int, content_type: str, payload: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(payload)))
        self.send_header("Connection", "close")
        self.send_header("request-id", self.fake._new_id("req"))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(payload)
            self.wfile.flush()
        self.close_connection = True

    def _json(self, status: int, data: Any) -> None:
        self._send(status, "application/json", json.dumps(data).encode())

    def _answer(self) -> None:
        try:
            path = urlsplit(self.path).path.rstrip("/")
            body = self._parse(self._read_body())
            entry = Logged(self.command, self.path, dict(self.headers.items()), body)
            with self.fake._lock:
                self.fake.log.append(entry)
            if self.command == "POST" and path.endswith("/v1/messages/count_tokens"):
                self._json(200, {"input_tokens": _estimate_tokens(body)})
            elif self.command == "POST" and path.endswith("/v1/messages"):
                entry.main, entry.reply = self.fake._next_reply(body)
                self._message(body, entry.reply)
            else:
                error = {"type": "not_found_error", "message": f"no route {self.command} {path}"}
                self._json(404, {"type": "error", "error": error})
        except (BrokenPipeError, ConnectionError, TimeoutError):
            self.close_connection = True
        except Exception as exc:
            try:
                error = {"type": "api_error", "message": f"fake server: {exc!r}"}
                self._json(500, {"type": "error", "error": error})
            except Exception:
                self.close_connection = True

    # -- the Messages API --------------------------------------------------------------------

    def _blocks(self, reply: dict[str, Any]) -> tuple[list[dict[str, Any]], str]:
        """The reply's content blocks (complete) and its stop reason."""
        if reply.get("type") == "tool_use":
            blocks = [{"type": "text", "text": reply["say"]}] if reply.get("say") else []
            blocks.append(
                {
                    "type": "tool_use",
                    "id": self.fake._new_id("toolu"),
                    "name": reply["name"],
                    "input": reply.get("input") or {},
                }
            )
            return blocks, "tool_use"
        return [{"type": "text", "text": str(reply.get("text", DONE_TEXT))}], "end_turn"

    def _message(self, body: Any, reply: dict[str, Any]) -> None:
        request = body if isinstance(body, dict) else {}
        blocks, stop_reason = self._blocks(reply)
        usage = {
            "input_tokens": _estimate_tokens(request),
            "output_tokens": max(1, len(json.dumps(blocks)) // 4),
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
        }
        message = {
            "id": self.fake._new_id("msg"),
            "type": "message",
            "role": "assistant",
            "model": str(request.get("model") or "claude-fake"),
            "content": blocks,
            "stop_reason": stop_reason,
            "stop_sequence": None,
            "usage": usage,
        }
        if not request.get("stream"):
            self._json(200, message)
            return
        events: list[tuple[str, dict[str, Any]]] = [
            (
                "message_start",
                {
                    "type": "message_start",
                    "message": {
                        **message,
                        "content": [],
                        "stop_reason": None,
                        "usage": {**usage, "output_tokens": 1},
                    },
                },
            )
        ]
        for index, block in enumerate(blocks):
            if block["type"] == "tool_use":
                start = {**block, "input": {}}
                delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
            else:
                start = {"type": "text", "text": ""}
                delta = {"type": "text_delta", "text": block["text"]}
            events += [
                ("content_block_start", {"type": "content_block_start", "index": index,
                                         "content_block": start}),
                ("content_block_delta", {"type": "content_block_delta", "index": index,
                                         "delta": delta}),
                ("content_block_stop", {"type": "content_block_stop", "index": index}),
            ]  # fmt: skip
        events += [
            ("message_delta", {"type": "message_delta",
                               "delta": {"stop_reason": stop_reason, "stop_sequence": None},
                               "usage": {"output_tokens": usage["output_tokens"]}}),
            ("message_stop", {"type": "message_stop"}),
        ]  # fmt: skip
        stream = "".join(f"event: {name}\ndata: {json.dumps(data)}\n\n" for name, data in events)
        self._send(200, "text/event-stream; charset=utf-8", stream.encode())


def _estimate_tokens(body: Any) -> int:
    """A rough token count (4 characters a token): enough for a client's bookkeeping."""
    try:
        return max(1, len(json.dumps(body)) // 4)
    except (TypeError, ValueError):
        return 1


def claude_env(fake: FakeAnthropic, home: Path, **extra: str) -> dict[str, str]:
    """Claude Code's environment against ``fake``: no real Claude or API setting survives."""
    inherited = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("ANTHROPIC_", "CLAUDE", "MCP_", "OTEL_"))
    }
    return {
        **inherited,
        "HOME": str(home),
        "ANTHROPIC_BASE_URL": fake.url,
        "ANTHROPIC_API_KEY": "test-key",
        "DISABLE_AUTOUPDATER": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_TELEMETRY": "1",
        "ENABLE_TOOL_SEARCH": "false",  # every tool in the first request, none deferred
        "MCP_CONNECTION_NONBLOCKING": "false",  # -p waits for the server before the model
        **extra,
    }
