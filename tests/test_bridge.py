"""The bridge: what a fresh install's server answers while MAMA's environment is built.

Until the bootstrap (tests/test_bootstrap.py) has built the environment, ``bin/mama-server``
runs the standard-library bridge: it answers ``initialize`` and ``tools/list`` at once with
every tool, keeps the hooks silent, and answers each tool call with a clear error naming the
bootstrap's log. Spoken to here over stdio, by the MCP Inspector, and by real Claude Code.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from fake_anthropic import FakeAnthropic, claude_env, text, tool_use
from test_bootstrap import (  # noqa: F401 (fixtures)
    ROOT,
    SH,
    SYSTEM_PYTHON,
    TOOL_NAMES,
    _BridgeWire,
    _initialize,
    _log,
    _wait_until,
    data,
    env,
    held_lock,
    plugin,
)
from test_claude_code import CLAUDE, JWT, SAVE, SERVER, needs_claude, result_of, tool_names
from test_stdio import INSPECTOR, needs_inspector


def test_bridge_answers_at_once_and_keeps_hooks_silent_until_ready(
    plugin: Path, data: Path, env: dict[str, str], tmp_path: Path, mama_home: Path
) -> None:
    with held_lock(data):  # a bootstrap is "running": the environment stays not ready
        started = time.monotonic()
        wire = _BridgeWire(plugin, env, tmp_path)
        try:
            init = _initialize(wire, "claude-code")["result"]
            tools = wire.request("tools/list")["result"]["tools"]
            elapsed = time.monotonic() - started
            print(f"bridge: start → initialize → tools/list in {elapsed * 1000:.0f} ms")
            # A hang guard, not a speed target: `python -m benchmarks startup` times the
            # bridge (its "bridge (fresh install)" row) against the front and a bare Python.
            assert elapsed < 10.0
            assert init["protocolVersion"] == "2025-06-18"
            assert init["capabilities"] == {"tools": {"listChanged": True}}
            assert init["serverInfo"]["name"] == "mama" and "preparing" in init["instructions"]
            assert [t["name"] for t in tools] == TOOL_NAMES
            assert "save_decision" in TOOL_NAMES and "observe_prompt" not in TOOL_NAMES
            hook = wire.request(
                "tools/call", {"name": "observe_prompt", "arguments": {"prompt": "x"}}
            )
            assert hook["result"] == {"content": [{"type": "text", "text": "{}"}], "isError": False}
            save = wire.request(
                "tools/call", {"name": "save_decision", "arguments": {"topic": "x"}}
            )
            text = save["result"]["content"][0]["text"]
            assert save["result"]["isError"] is True
            assert "installing its Python environment" in text and "Nothing was saved" in text
            assert str(mama_home / "logs" / "bootstrap.log") in text
            wire.send("{this is not json")
            assert wire.wait_for(None)["error"]["code"] == -32700
            assert wire.request("server/discover")["error"]["code"] == -32601  # → initialize
            assert wire.request("ping")["result"] == {}
        finally:
            assert wire.close() == ""
        _wait_until(lambda: "holds the lock" in _log(mama_home), "the bridge's bootstrap")
    assert not (mama_home / "mama.db").exists()


def test_bridge_initialize_offers_the_newest_version_for_an_unknown_one(
    plugin: Path, data: Path, env: dict[str, str], tmp_path: Path, mama_home: Path
) -> None:
    with held_lock(data):
        wire = _BridgeWire(plugin, env, tmp_path)
        try:
            answer = wire.request("initialize", {"protocolVersion": "2026-07-28", "capabilities": {},
                                                 "clientInfo": {"name": "x", "version": "1"}})  # fmt: skip
            assert answer["result"]["protocolVersion"] == "2025-11-25"  # what `mama serve` says
        finally:
            wire.close()
        _wait_until(lambda: "holds the lock" in _log(mama_home), "the bridge's bootstrap")


@needs_inspector
def test_mcp_inspector_talks_to_the_bridge(
    plugin: Path, data: Path, env: dict[str, str], tmp_path: Path, mama_home: Path
) -> None:
    assert INSPECTOR.exists(), (
        "run scripts/setup.sh --dev: it installs the MCP Inspector into .tools/"
    )
    server = [SH, str(plugin / "bin" / "mama-server")]

    def inspector(*args: str) -> dict:
        out = subprocess.run([str(INSPECTOR), "--cli", *server, *args], capture_output=True,
                             text=True, env=env, cwd=tmp_path, timeout=120)  # fmt: skip
        assert out.returncode == 0, out.stderr + out.stdout
        return json.loads(out.stdout)

    with held_lock(data):
        assert [t["name"] for t in inspector("--method", "tools/list")["tools"]] == TOOL_NAMES
        called = inspector("--method", "tools/call", "--tool-name", "observe_prompt",
                           "--tool-arg", "prompt=hello")  # fmt: skip
        assert called["content"][0]["text"] == "{}"
        _wait_until(lambda: _log(mama_home).count("holds the lock") == 2, "the bridges' bootstraps")


@needs_claude
def test_claude_code_gets_every_tool_and_a_clear_error_before_the_environment_is_ready(
    plugin: Path, tmp_path: Path, mama_home: Path
) -> None:
    if not CLAUDE.exists():
        pytest.fail("run scripts/setup.sh --dev: it installs Claude Code into .tools/")
    for part in (".claude-plugin", "hooks"):  # the rest of the plugin, as installed
        shutil.copytree(ROOT / part, plugin / part)
    shutil.copy(ROOT / ".mcp.json", plugin / ".mcp.json")
    home, project = tmp_path / "home", tmp_path / "project"
    project.mkdir()
    data = home / ".claude" / "plugins" / "data" / "mama-inline"  # --plugin-dir's data dir
    with held_lock(data), FakeAnthropic([tool_use(SAVE, JWT), text("Later.")]) as fake:
        env = {**claude_env(fake, home), "MAMA_HOME": str(mama_home), "MAMA_PYTHON": SYSTEM_PYTHON,
               # A hook's bootstrap may start after the lock is released: let it fail fast.
               "MAMA_PIP_ARGS": "--no-index --find-links /nonexistent",
               "MAMA_BOOTSTRAP_LOCAL": "0"}  # fmt: skip
        command = [str(CLAUDE), "-p", "Record the auth decision", "--plugin-dir", str(plugin),
                   "--allowedTools", SERVER]  # fmt: skip
        run = subprocess.run(command, cwd=project, env=env, stdin=subprocess.DEVNULL,
                             capture_output=True, text=True, timeout=120)  # fmt: skip
        assert run.returncode == 0, run.stderr
        first, second = fake.main_requests[:2]
    assert sorted(n for n in tool_names(first) if n.startswith(SERVER)) == sorted(
        f"{SERVER}__{name}" for name in TOOL_NAMES
    )
    assert "preparing its Python environment" in json.dumps(first["messages"])
    refused = result_of(second, SAVE)
    assert refused["is_error"] and "Nothing was saved" in refused["text"], refused
    _wait_until(lambda: "holds the lock" in _log(mama_home), "the bridge's bootstrap")
