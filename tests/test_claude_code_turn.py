"""Real Claude Code, fake model: a turn that ends with a failing command comes back next time.

The user trial's case: the turn's last tool call fails (``exit 7``) and Claude closes with an
explicit next step. Claude Code has not written those entries when Stop fires; the checkpoint
must wait for them, and the next session's start must carry the failure under "Unresolved"
and the explicit step as "Next step" (once, without its "Next:" cue). Runs
``MAMA_TURN_TEST_COUNT`` such turns (default 1; `python -m benchmarks turns` runs 200).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from fake_anthropic import text, tool_use
from test_claude_code import needs_claude
from test_claude_code_stories import Story

pytestmark = needs_claude
COUNT = int(os.environ.get("MAMA_TURN_TEST_COUNT", "1"))


@pytest.mark.parametrize("n", range(1, COUNT + 1))
def test_a_failing_last_command_and_the_next_step_come_back(
    tmp_path: Path, mama_home: Path, n: int
) -> None:
    failing = f"sh -c 'echo boom-{n}; exit 7'"
    closing = f"The smoke test did not pass. Next: start the price service on port 876{n}."
    story = Story(tmp_path)
    story.run("run the smoke test", [
        tool_use("Bash", {"command": failing, "description": "Run the smoke test"}), text(closing)
    ])  # fmt: skip
    start = story.run("hello", [text("Picking up.")]).start
    assert "Unresolved:" in start, start
    unresolved = start.split("Unresolved:", 1)[1]
    assert f"- `{failing}` failed (Run the smoke test): exit 7, boom-{n}" in unresolved, start
    assert f"Next step: start the price service on port 876{n} (HIGH)" in start, start
    assert "Next step: Next:" not in start
