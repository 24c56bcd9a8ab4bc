"""`mama serve` as a real subprocess: raw JSON-RPC over stdio, and the MCP Inspector CLI."""

from __future__ import annotations

import json
import os
import queue
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from mama_plugin.server.catalogue import CORE

ROOT = Path(__file__).resolve().parents[1]
INSPECTOR = ROOT / ".tools" / "node_modules" / ".bin" / "mcp-inspector"
SERVE = [sys.executable, "-m", "mama_plugin.cli", "serve"]


def _env(mama_home: Path) -> dict[str, str]:
    return {**os.environ, "MAMA_HOME": str(mama_home)}


class Wire:
    """A `mama serve` process spoken to in newline-delimited JSON-RPC."""

    def __init__(self, mama_home: Path, cwd: Path, command: list[str] = SERVE) -> None:
        self.proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True, env=_env(mama_home), cwd=cwd)  # fmt: skip
        self.next_id = 0

    def received(self) -> queue.Queue[str]:
        """The server's lines, as a reading thread gets them (started on first use): a
        notification and an answer often arrive in one read."""
        if "lines" not in vars(self):
            self.lines: queue.Queue[str] = queue.Queue()
            threading.Thread(target=self._read, daemon=True).start()
        return self.lines

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in iter(self.proc.stdout.readline, ""):
            self.lines.put(line)
        self.lines.put("")

    def send(self, payload: dict | str) -> None:
        line = payload if isinstance(payload, str) else json.dumps(payload)
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def request(self, method: str, params: dict | None = None) -> dict:
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params or {}})
        return self.wait_for(self.next_id)

    def wait_for(self, ident: int) -> dict:
        deadline = time.monotonic() + 30
        while (left := deadline - time.monotonic()) > 0:
            try:
                line = self.received().get(timeout=left)
            except queue.Empty:
                break
            if not line:
                raise AssertionError(
                    f"server exited: {self.proc.stderr.read() if self.proc.stderr else ''}"
                )
            message = json.loads(line)  # stdout carries nothing but the protocol
            if message.get("id") == ident:
                return message
        raise AssertionError("no answer within 30 s")

    def close(self) -> str:
        """End the session (closing stdin ends the server) and collect its stderr."""
        assert self.proc.stdin is not None and self.proc.stdout and self.proc.stderr
        self.proc.stdin.close()
        self.proc.wait(timeout=30)
        errors = self.proc.stderr.read()
        self.proc.stdout.close()
        self.proc.stderr.close()
        return errors


def _initialize(wire: Wire, client: str = "stdio-test") -> dict:
    answer = wire.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                         "clientInfo": {"name": client, "version": "1"}})  # fmt: skip
    wire.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    return answer


def test_stdio_round_trip_and_malformed_json(tmp_path: Path, mama_home: Path) -> None:
    wire = Wire(mama_home, tmp_path)
    try:
        init = _initialize(wire)
        assert init["result"]["capabilities"]["tools"]["listChanged"] is True
        assert init["result"]["serverInfo"]["name"] == "mama"
        tools = wire.request("tools/list")["result"]["tools"]
        assert "save_decision" in [t["name"] for t in tools]
        wire.send("{this is not json")  # a broken line is dropped; the session goes on
        assert wire.request("tools/list")["result"]["tools"]
        saved = wire.request("tools/call", {"name": "save_decision", "arguments": {
            "topic": "db", "decision": "SQLite", "reasoning": "single node, zero ops"}})["result"]  # fmt: skip
        assert saved["isError"] is False and saved["structuredContent"]["topic"] == "db"
        bad = wire.request(
            "tools/call", {"name": "save_decision", "arguments": {"topic": "db", "decision": "x"}}
        )["result"]
        assert (
            bad["isError"] is True and "reasoning.primary is required" in bad["content"][0]["text"]
        )
        found = wire.request(
            "tools/call", {"name": "search_by_context", "arguments": {"query": "zero ops database"}}
        )
        assert found["result"]["structuredContent"]["primary_results"][0]["content"] == "SQLite"
    finally:
        wire.close()
    assert (mama_home / "mama.db").exists()


def test_claude_code_client_gets_the_core_set_over_stdio(tmp_path: Path, mama_home: Path) -> None:
    wire = Wire(mama_home, tmp_path)
    try:
        _initialize(wire, client="claude-code")
        names = [t["name"] for t in wire.request("tools/list")["result"]["tools"]]
        assert sorted(names) == sorted(CORE)  # a new project: the core set
        wire.request(
            "tools/call",
            {
                "name": "save_decision",
                "arguments": {
                    "topic": "caching",
                    "decision": "Cache product pages in Redis",
                    "reasoning": "12 ms p50 render with it against 90 ms without",
                },
            },
        )
        names = [t["name"] for t in wire.request("tools/list")["result"]["tools"]]
        assert "search_by_topic" in names and "load_context" in names
    finally:
        wire.close()


needs_inspector = pytest.mark.skipif(
    not INSPECTOR.exists() and shutil.which("npm") is None,
    reason="no npm on this machine: scripts/setup.sh --dev installs the Inspector with it",
)


# What Claude Code runs (.mcp.json: the light front), and the same tools on the mcp SDK.
SERVERS = {"bin/mama-server": ["sh", str(ROOT / "bin" / "mama-server")],
           "serve --sdk": [*SERVE, "--sdk"]}  # fmt: skip


def _inspector(mama_home: Path, cwd: Path, *args: str, server: str = "bin/mama-server") -> dict:
    assert INSPECTOR.exists(), (
        "run scripts/setup.sh --dev: it installs the MCP Inspector into .tools/"
    )
    out = subprocess.run([str(INSPECTOR), "--cli", *SERVERS[server], *args], capture_output=True,
                         text=True, env=_env(mama_home), cwd=cwd, timeout=120)  # fmt: skip
    assert out.returncode == 0, out.stderr + out.stdout
    return json.loads(out.stdout)


@needs_inspector
@pytest.mark.parametrize("server", SERVERS)
def test_mcp_inspector_lists_and_calls_the_tools(
    tmp_path: Path, mama_home: Path, server: str
) -> None:
    listed = _inspector(mama_home, tmp_path, "--method", "tools/list", server=server)
    names = [t["name"] for t in listed["tools"]]
    assert {"save_decision", "search_by_context", "evolve_outcome", "load_context"} <= set(names)
    first = next(t for t in listed["tools"] if t["name"] == "save_decision")
    assert list(first["inputSchema"]["properties"])[:3] == ["topic", "decision", "reasoning"]
    saved = _inspector(mama_home, tmp_path, "--method", "tools/call", "--tool-name", "save_decision",
                       "--tool-arg", "topic=auth", "--tool-arg", "decision=Use sessions",
                       "--tool-arg", "reasoning=JWT refresh hit the DB at 10K req/s",
                       server=server)  # fmt: skip
    assert saved["isError"] is False and saved["structuredContent"]["topic"] == "auth"
    found = _inspector(mama_home, tmp_path, "--method", "tools/call", "--tool-name", "search_by_topic",
                       "--tool-arg", "topic=auth", server=server)  # fmt: skip
    assert "Use sessions" in found["content"][0]["text"]


def test_a_broken_config_does_not_stop_the_server(tmp_path: Path, mama_home: Path) -> None:
    mama_home.mkdir(parents=True, exist_ok=True)
    (mama_home / "config.json").write_text("{not json")
    wire = Wire(mama_home, tmp_path)
    try:
        _initialize(wire)
        assert wire.request("tools/list")["result"]["tools"]
    finally:
        wire.close()
    assert "is not valid JSON" in (mama_home / "logs" / "server.log").read_text()
