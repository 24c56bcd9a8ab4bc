"""benchmarks/phases.py reads where a claude -p run's time went from Claude Code's debug log."""

from __future__ import annotations

from pathlib import Path

from benchmarks.phases import marks, phases

# Lines as Claude Code 2.1.197 writes them with --debug-file (trimmed), one continuation line.
LOG = """\
2026-11-23T17:38:52.540Z [DEBUG] MDM settings load completed in 0ms
2026-11-23T17:38:53.899Z [DEBUG] [STARTUP] MCP configs resolved in 438ms (awaited at +491ms)
2026-11-23T17:38:53.985Z [WARN] [3P telemetry] Event dropped: hook_execution_start
2026-11-23T17:38:54.154Z [DEBUG] MCP server "plugin:mama:mama": Starting connection with timeout of 30000ms
2026-11-23T17:38:54.472Z [DEBUG] MCP server "plugin:mama:mama": Successfully connected (transport: stdio) in 363ms
2026-11-23T17:38:54.946Z [DEBUG] Hook SessionStart:startup (SessionStart) success:
{"hookSpecificOutput": {"hookEventName": "SessionStart"}}
2026-11-23T17:38:55.340Z [DEBUG] Hooks: mcp_tool calling plugin:mama:mama/observe_prompt with 3 arg(s)
2026-11-23T17:38:56.391Z [DEBUG] Hook UserPromptSubmit (UserPromptSubmit) success:
2026-11-23T17:38:56.572Z [DEBUG] [API REQUEST] /v1/messages source=sdk
2026-11-23T17:38:56.722Z [DEBUG] Hooks: mcp_tool calling plugin:mama:mama/checkpoint_turn with 5 arg(s)
2026-11-23T17:38:56.838Z [DEBUG] Hook Stop (Stop) success:
2026-11-23T17:38:56.841Z [DEBUG] MCP server "plugin:mama:mama": Sending SIGINT to MCP server process
2026-11-23T17:38:57.079Z [DEBUG] MCP server "plugin:mama:mama": MCP server process exited cleanly
2026-11-23T17:38:57.097Z [DEBUG] File /tmp/home/.claude.json written atomically
"""


def test_phases_of_a_run_with_the_plugin(tmp_path: Path) -> None:
    log = tmp_path / "debug.txt"
    log.write_text(LOG, encoding="utf-8")
    assert phases(marks(log)) == {
        "start to MCP configs resolved": 1359.0,
        "SessionStart hook": 961.0,
        "server spawn to connected": 318.0,
        "UserPromptSubmit (observe_prompt)": 1051.0,
        "start to first model request": 4032.0,
        "Stop (checkpoint_turn)": 116.0,
        "exit (SIGINT to server gone)": 238.0,
        "start to last line": 4557.0,
    }


def test_a_run_without_the_plugin_has_the_shared_phases_only(tmp_path: Path) -> None:
    log = tmp_path / "debug.txt"
    log.write_text("".join(line + "\n" for line in LOG.splitlines()
                           if "mama" not in line and "hook" not in line.lower()))  # fmt: skip
    assert set(phases(marks(log))) == {
        "start to MCP configs resolved",
        "start to first model request",
        "start to last line",
    }
    assert phases(marks(tmp_path / "debug.txt"))["start to last line"] == 4557.0


def test_an_exit_claude_code_logs_as_a_closed_connection_counts(tmp_path: Path) -> None:
    """When the server ends before Claude Code reaps it, the end is logged as its closed
    connection instead: the exit phase still ends there."""
    log = tmp_path / "debug.txt"
    closed = LOG.replace(
        "MCP server process exited cleanly", "UNKNOWN connection closed after 0s (cleanly)"
    )
    log.write_text(closed, encoding="utf-8")
    assert phases(marks(log))["exit (SIGINT to server gone)"] == 238.0
