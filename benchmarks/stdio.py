"""A real ``mama serve`` on a stdio pipe, spoken to in newline-delimited JSON-RPC (benchmarks)."""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
import time
from typing import Any

TIMEOUT_S = 60
SERVE = (sys.executable, "-m", "mama_plugin.cli", "serve")


class StdioServer:
    """Spawn ``mama serve`` (or ``command``) and complete the MCP handshake as Claude Code.

    A thread reads the server's lines as they come (a notification and an answer often arrive
    together), each with the ``time.perf_counter()`` it was read at.
    """

    def __init__(
        self,
        env: dict[str, str],
        *,
        project: str | None = None,
        cwd: str | None = None,
        command: tuple[str, ...] = SERVE,
    ) -> None:
        self.proc = subprocess.Popen(
            [*command, *(["--project", project] if project else [])],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
            cwd=cwd,
            text=True,
        )
        self._id = 0
        self.lines: queue.Queue[tuple[float, str]] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        self.answered_at: dict[str, float] = {}  # method -> when its first answer was read
        client = {"name": "claude-code", "version": "bench"}
        self.request(
            "initialize",
            {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": client},
        )
        self._send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in iter(self.proc.stdout.readline, ""):
            self.lines.put((time.perf_counter(), line))
        self.lines.put((time.perf_counter(), ""))

    def _send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message) + "\n")
        self.proc.stdin.flush()

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """Send one request and wait (at most ``TIMEOUT_S``) for its result."""
        self._id += 1
        self._send({"jsonrpc": "2.0", "id": self._id, "method": method, "params": params})
        deadline = time.monotonic() + TIMEOUT_S
        while (left := deadline - time.monotonic()) > 0:
            try:
                at, line = self.lines.get(timeout=left)
            except queue.Empty:
                break
            if not line:
                break
            reply = json.loads(line)
            if reply.get("id") == self._id:
                self.answered_at.setdefault(method, at)
                return dict(reply.get("result") or {})
        raise RuntimeError(f"mama serve did not answer {method} within {TIMEOUT_S} s")

    def call(self, tool: str, arguments: dict[str, Any]) -> tuple[float, dict[str, Any]]:
        """Call ``tool``; return the round trip in milliseconds and the result."""
        started = time.perf_counter()
        result = self.request("tools/call", {"name": tool, "arguments": arguments})
        return (time.perf_counter() - started) * 1000, result

    def close(self) -> None:
        """Close stdin (the server's cue to exit) and wait for it."""
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=30)
        self.proc.stdout.close()
