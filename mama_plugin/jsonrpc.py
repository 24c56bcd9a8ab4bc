"""Newline-delimited JSON-RPC 2.0 over a byte stream (the MCP stdio transport), stdlib only.

What the two hand-written MCP servers (the front, ``server/front.py``, and the bootstrap's
bridge) read and write, kept apart from what they answer: the protocol constants, a client
line read as a request, the version answered to ``initialize``, a tool result, and (for the
front) one writer lock for every thread that answers and the reading of whole lines.
"""

from __future__ import annotations

import io
import json
import logging
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, BinaryIO

from . import __version__
from .intake import MAX_DEPTH, nesting

log = logging.getLogger("mama.server")
# What mcp 2.3.0 negotiates through initialize; any other offer gets the newest.
PROTOCOL_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS = -32700, -32600, -32601, -32602
INTERNAL_ERROR = -32603
READ_SIZE = 1 << 16
LIST_CHANGED = {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}


@dataclass(frozen=True)
class Request:
    """A client line that asks for an answer."""

    ident: Any
    method: str
    params: dict[str, Any]


@dataclass(frozen=True)
class Problem:
    """A client line that gets an error instead (``ident`` None when it has none)."""

    ident: Any
    code: int
    message: str


def request(line: bytes) -> Request | Problem | None:
    """Read one client line: a request, a problem to answer, or None (a notification, a
    response to nothing asked, a blank line): nothing to answer. Never raises: a line nested
    past :data:`MAX_DEPTH` is a problem too, answered to its id when its top level names one."""
    try:
        message = json.loads(line)
    except RecursionError:
        return Problem(_top_level_id(line), INVALID_REQUEST, _too_deep())
    except ValueError:
        if line.strip():
            return Problem(None, PARSE_ERROR, "Parse error: each line must be one JSON object")
        return None
    if not isinstance(message, dict):
        return Problem(None, INVALID_REQUEST, "Invalid request: expected a JSON object")
    if nesting(message) > MAX_DEPTH:
        ident = message.get("id")
        return Problem(ident if _plain_id(ident) else None, INVALID_REQUEST, _too_deep())
    if "id" not in message:
        return None
    ident, method = message["id"], message.get("method")
    if not isinstance(method, str):
        return Problem(ident, INVALID_REQUEST, "Invalid request: no method")
    params = message.get("params")
    return Request(ident, method, params if isinstance(params, dict) else {})


def _too_deep() -> str:
    return (
        f"Invalid request: arrays and objects nested more than {MAX_DEPTH} levels deep; MAMA "
        "reads no deeper (send flatter arguments)"
    )


def _plain_id(ident: Any) -> bool:
    return isinstance(ident, str | int) and not isinstance(ident, bool)


def _top_level_id(line: bytes) -> Any:
    """The ``id`` a line too deep to parse gives at its top level (a number or a string), so
    its client is answered rather than left waiting; None when there is none to find."""
    depth, i, text = 0, 0, line.decode("utf-8", "replace")
    while i < len(text):
        char = text[i]
        if char == '"':
            end = _string_end(text, i)
            if depth == 1 and text[i:end] == '"id"':
                rest = text[end:].lstrip()
                if rest.startswith(":"):
                    found = re.match(r'\s*(-?\d+|"(?:[^"\\]|\\.)*")', rest[1:])
                    return json.loads(found.group(1)) if found else None
            i = end
            continue
        depth += char in "[{"
        depth -= char in "]}"
        i += 1
    return None


def _string_end(text: str, start: int) -> int:
    """The index just past the JSON string that opens at ``start``."""
    i = start + 1
    while i < len(text) and text[i] != '"':
        i += 2 if text[i] == "\\" else 1
    return i + 1


def protocol_version(offered: Any) -> str:
    """The version answered to ``initialize``: the offered one if known, else the newest."""
    return offered if offered in PROTOCOL_VERSIONS else PROTOCOL_VERSIONS[-1]


def initialize_result(offered: Any, instructions: str) -> dict[str, Any]:
    """MAMA's answer to ``initialize``: the version (:func:`protocol_version`), its tools that
    may change (``listChanged``), its name and ``instructions``."""
    return {
        "protocolVersion": protocol_version(offered),
        "capabilities": {"tools": {"listChanged": True}},
        "serverInfo": {"name": "mama", "version": __version__},
        "instructions": instructions,
    }


def tool_result(text: str, *, error: bool) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}], "isError": error}


class LineSession:
    """One client on ``stdin``/``stdout``: whole lines in, one JSON message per line out."""

    stdin: io.BufferedIOBase
    stdout: BinaryIO
    write_lock: threading.Lock

    # -- output ---------------------------------------------------------------------------

    def send(self, message: dict[str, Any]) -> None:
        """Write one protocol message (any thread); raises OSError when the client is gone."""
        line = json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"
        with self.write_lock:
            self.stdout.write(line)
            self.stdout.flush()

    def reply(self, ident: Any, result: dict[str, Any]) -> None:
        self._send_quietly({"jsonrpc": "2.0", "id": ident, "result": result})

    def fail(self, ident: Any, code: int, message: str) -> None:
        error = {"code": code, "message": message}
        self._send_quietly({"jsonrpc": "2.0", "id": ident, "error": error})

    def _send_quietly(self, message: dict[str, Any]) -> None:
        try:
            self.send(message)
        except TypeError as exc:  # an answer JSON cannot carry: a bug, told as an error
            log.error("an answer could not be written as JSON: %s", exc)
            if "id" in message and "error" not in message:
                self.fail(message["id"], INTERNAL_ERROR, f"the answer could not be sent: {exc}")
        except (OSError, ValueError) as exc:  # the client went away; stdin's end follows
            log.warning("could not answer the client: %s", exc)

    def _lines(self) -> Iterator[tuple[bytes, bool]]:
        """Each line from stdin, with whether another complete line is already waiting."""
        buffer = b""
        while chunk := self.stdin.read1(READ_SIZE):
            buffer += chunk
            while b"\n" in buffer:
                line, _, buffer = buffer.partition(b"\n")
                yield line, b"\n" in buffer
        if buffer.strip():
            yield buffer, False
