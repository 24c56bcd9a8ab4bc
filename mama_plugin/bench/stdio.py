"""A real ``mama serve`` on a stdio pipe, spoken to in newline-delimited JSON-RPC (benchmarks)."""

from __future__ import annotations

import json
import select
import subprocess
import sys
import time
from typing import Any

TIMEOUT_S = 60


class StdioServer:
    """Spawn ``mama serve`` and complete the MCP handshake as Claude Code (``claude-code``)."""

    def __init__(
        self, env: dict[str, str], *, project: str | None = None, cwd: str | None = None
    ) -> None:
        command = [sys.executable, "-m", "mama_plugin.cli", "serve"]
        self.proc = subprocess.Popen(
            command + (["--project", project] if project else []),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
            cwd=cwd,
            text=True,
        )
        self._id = 0
        client = {"name": "claude-code", "version": "bench"}
        self.request(
            "initialize",
            {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": client},
        )
        self._send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def _send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message) + "\n")
        self.proc.stdin.flush()

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """Send one request and wait (at most ``TIMEOUT_S``) for its result."""
        self._id += 1
        self._send({"jsonrpc": "2.0", "id": self._id, "method": method, "params": params})
        assert self.proc.stdout is not None
        deadline = time.monotonic() + TIMEOUT_S
        while time.monotonic() < deadline:
            ready, _, _ = select.select([self.proc.stdout], [], [], 1.0)
            if ready:
                line = self.proc.stdout.readline()
                if not line:
                    break
                reply = json.loads(line)
                if reply.get("id") == self._id:
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
