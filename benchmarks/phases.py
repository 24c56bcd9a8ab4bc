"""Where a ``claude -p`` run's time goes, read from Claude Code's own debug log.

``claude --debug-file PATH`` (2.1.197) writes one timestamped line per event. The lines below
mark the phases MAMA can add to a run: the plugin's SessionStart command hook (Claude Code
waits for it before the prompt), the MCP server's spawn to its connection, each ``mcp_tool``
hook call as Claude Code sees it (UserPromptSubmit's ``observe_prompt``, Stop's
``checkpoint_turn``), and the exit (SIGINT to the server's end). A run without the plugin has
only the shared marks (the end of the MCP configs, the first model request, the last line).
"""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path

# A mark is the first line holding one of its texts. A silent SessionStart hook (no memory
# to tell) leaves no "Hook SessionStart" line, only Claude Code's note on its empty output
# (the plugin's only command hook).
MARKS: dict[str, str | tuple[str, ...]] = {
    "configs": "MCP configs resolved",
    "session_start_begins": "hook_execution_start",
    "server_spawned": "Starting connection with timeout",
    "server_connected": "Successfully connected",
    "session_start_ends": ("Hook SessionStart", "Hook output does not start with {"),
    "prompt_hook_called": "mcp_tool calling plugin:mama:mama/observe_prompt",
    "prompt_hook_answered": "Hook UserPromptSubmit",
    "first_request": "[API REQUEST]",
    "stop_hook_called": "mcp_tool calling plugin:mama:mama/checkpoint_turn",
    "stop_hook_answered": "Hook Stop",
    "sigint": "Sending SIGINT",
    # Which of the two Claude Code logs first depends on how the process ended.
    "server_exited": ("MCP server process exited", "connection closed after"),
}
# Each phase: (name, from mark, to mark), in milliseconds.
PHASES = (
    ("start to MCP configs resolved", "start", "configs"),
    ("SessionStart hook", "session_start_begins", "session_start_ends"),
    ("server spawn to connected", "server_spawned", "server_connected"),
    ("UserPromptSubmit (observe_prompt)", "prompt_hook_called", "prompt_hook_answered"),
    ("start to first model request", "start", "first_request"),
    ("Stop (checkpoint_turn)", "stop_hook_called", "stop_hook_answered"),
    ("exit (SIGINT to server gone)", "sigint", "server_exited"),
    ("start to last line", "start", "last"),
)
_STAMP = re.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3})Z ")


def marks(debug_log: Path) -> dict[str, float]:
    """Milliseconds from the log's first line to the first line of each mark (and ``last``)."""
    found: dict[str, float] = {}
    first: datetime | None = None
    when = first
    for line in debug_log.read_text(encoding="utf-8", errors="replace").splitlines():
        stamp = _STAMP.match(line)
        if stamp is None:
            continue  # a continuation of a multi-line entry
        when = datetime.fromisoformat(stamp[1])
        first = first or when
        for name, texts in MARKS.items():
            if name not in found and any(t in line for t in _texts(texts)):
                found[name] = (when - first).total_seconds() * 1000
    if first is not None and when is not None:
        found["start"], found["last"] = 0.0, (when - first).total_seconds() * 1000
    return found


def _texts(texts: str | tuple[str, ...]) -> tuple[str, ...]:
    return (texts,) if isinstance(texts, str) else texts


def phases(found: dict[str, float]) -> dict[str, float]:
    """The ``PHASES`` a run's marks allow, in milliseconds."""
    return {
        name: round(found[end] - found[begin], 1)
        for name, begin, end in PHASES
        if begin in found and end in found and found[end] >= found[begin]
    }
