"""The hook protocol's answer: the JSON that hands context to Claude Code, or nothing.

Standard library only: the cold hook runner and the MCP server's hook tools both answer with it.
"""

from __future__ import annotations

import json

SILENT = "{}"  # the answer that says nothing (an ``mcp_tool`` hook reads it as no output)


def envelope(event: str, context: str) -> str:
    """The JSON that hands ``context`` to Claude Code ("" when there is nothing to say)."""
    if not context.strip():
        return ""
    return json.dumps(
        {"hookSpecificOutput": {"hookEventName": event, "additionalContext": context}},
        ensure_ascii=False,
    )


def answer(event: str, context: str) -> str:
    """The hook protocol's answer; ``{}`` (not "") when there is nothing to say."""
    return envelope(event, context) or SILENT
