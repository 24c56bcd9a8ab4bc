"""``python -m benchmarks bodies`` reads what the model was shown from request bodies."""

from __future__ import annotations

from typing import Any

from benchmarks.bodies import T, _measure
from benchmarks.tables_quality import bodies

START = (
    "SessionStart hook additional context: MAMA — where this project's work stopped.\n"
    "<mama-memory>\nWhat I did: JWT saved\n</mama-memory>\n/mama-resume tells the rest.\n\n"
    "Available agent types for the Agent tool:\n- claude: anything\n\n"
    "# MCP Server Instructions\n\n## plugin:mama:mama\nMAMA is this project's memory.\n\n"
    "The following skills\n"
    "UserPromptSubmit hook additional context: <mama-memory>JWT failed</mama-memory>"
)
TOOL = {"name": T + "search_by_context", "description": "Ask memory.", "input_schema": {}}


def test_each_part_is_read_from_where_claude_code_puts_it() -> None:
    first: dict[str, Any] = {"tools": [TOOL, {"name": "Bash"}],
             "messages": [{"role": "user", "content": [{"type": "text", "text": START}]}]}  # fmt: skip
    call = {
        "role": "assistant",
        "content": [{"type": "tool_use", "id": "t1", "name": TOOL["name"]}],
    }
    back = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1",
                                         "content": "x" * 400, "is_error": True}]}  # fmt: skip
    second = {"tools": [TOOL], "messages": [*first["messages"], call, back]}
    s = _measure("ask", [first, second])
    assert s.requests == 2 and s.tools_first == s.tools_max > 0
    # The start from its header to the line after its fence; not the agents or the skills.
    assert 20 < s.session_start < 40
    assert s.instructions == round(len("MAMA is this project's memory.") / 4)
    assert s.prompt_memory == round(len(" <mama-memory>JWT failed</mama-memory>") / 4)
    assert (s.tool_results, s.errors) == (100, 1)
    data = {"sessions": [vars(s)], "totals": {"requests": 2, "session_start": s.session_start,
            "instructions": s.instructions, "prompt_memory": s.prompt_memory,
            "tool_results": 100, "errors": 1}, "tool_list_first_max": s.tools_first,
            "tool_list_max": s.tools_max}  # fmt: skip
    assert bodies(data).count("\n") == 4  # header, rule, the session, all
