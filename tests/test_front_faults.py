"""The front's own faults: a request whose answer fails is told so, and the session goes on.

A fault raised while the reading thread answered (a list, an initialize) used to end the
process, and Claude Code told the model "MCP error -32000: Connection closed" for every call
under way; a fault in a call's thread left the call unanswered. Driven in-process on the
reading side (:meth:`Front.handle`), with nothing loaded.
"""

from __future__ import annotations

import io
import json
import signal
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from test_stdio import Wire

from mama_plugin.config import Config
from mama_plugin.jsonrpc import INTERNAL_ERROR
from mama_plugin.server.front import Front


def _front(mama_home: Path) -> tuple[Front, io.BytesIO]:
    out = io.BytesIO()
    return Front(io.BytesIO(), out, Config(mama_home), "/tmp/project", None), out


def _sent(out: io.BytesIO) -> list[dict[str, Any]]:
    return [json.loads(line) for line in out.getvalue().splitlines()]


def _line(ident: int, method: str, params: dict[str, Any] | None = None) -> bytes:
    return json.dumps(
        {"jsonrpc": "2.0", "id": ident, "method": method, "params": params or {}}
    ).encode()


def test_a_list_that_fails_is_an_error_and_the_next_request_is_answered(
    mama_home: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    front, out = _front(mama_home)

    def broken() -> list[dict[str, Any]]:
        raise KeyError("save_decision")

    monkeypatch.setattr(front, "tool_list", broken)
    front.handle(_line(1, "tools/list"))  # raised out of the reading loop before
    front.handle(_line(2, "ping"))
    first, second = _sent(out)
    assert first["id"] == 1 and first["error"]["code"] == INTERNAL_ERROR
    assert "tools/list" in first["error"]["message"] and "server.log" in first["error"]["message"]
    assert second == {"jsonrpc": "2.0", "id": 2, "result": {}}
    assert "KeyError: 'save_decision'" in caplog.text  # the traceback, in server.log


def test_a_call_that_fails_is_answered_as_a_failed_tool(
    mama_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    front, out = _front(mama_home)

    def broken(name: str, arguments: Any, call_id: str) -> dict[str, Any]:
        raise RuntimeError("the portal is gone")

    monkeypatch.setattr(front, "_answer", broken)
    monkeypatch.setattr(front, "_start_warm_up", lambda: None)  # nothing to load here
    front.handle(_line(3, "tools/call", {"name": "search_by_context", "arguments": {}}))
    deadline = time.monotonic() + 10
    while not out.getvalue() and time.monotonic() < deadline:  # the call runs in a thread
        time.sleep(0.01)
    (answer,) = _sent(out)
    assert answer["id"] == 3 and answer["result"]["isError"] is True
    assert "search_by_context failed" in answer["result"]["content"][0]["text"]


def test_an_answer_json_cannot_carry_is_an_error_not_a_crash(mama_home: Path) -> None:
    front, out = _front(mama_home)
    front.reply(4, {"when": object()})
    (answer,) = _sent(out)
    assert answer["id"] == 4 and answer["error"]["code"] == INTERNAL_ERROR


def test_a_fatal_signal_leaves_every_threads_stack_in_the_log(
    tmp_path: Path, mama_home: Path
) -> None:
    """A native crash (llama.cpp, sqlite) kills the process: its stacks say where it was."""
    wire = Wire(mama_home, tmp_path, [sys.executable, "-m", "mama_plugin.server.front"])
    assert wire.request("ping") == {"jsonrpc": "2.0", "id": 1, "result": {}}
    wire.proc.send_signal(signal.SIGABRT)
    try:  # the dump of every thread is best effort: it can fault itself (SIGSEGV, 1 run in ~9)
        assert wire.proc.wait(timeout=30) in (-signal.SIGABRT, -signal.SIGSEGV)
    finally:
        wire.close()  # its pipes, closed whatever happened: left open, the next test saw them
    log = (mama_home / "logs" / "server.log").read_text()
    assert "Fatal Python error: Aborted" in log and 'File "' in log
