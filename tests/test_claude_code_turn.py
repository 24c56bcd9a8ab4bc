"""Real Claude Code, fake model: a turn that ends with a failing command comes back next time.

The user trial's case: the turn's last tool call fails (``exit 7``) and Claude closes with an
explicit next step. Claude Code has not written those entries when Stop fires; the checkpoint
must wait for them, and the next session's start must carry the failure under "Unresolved"
and the explicit step as "Next step" (once, without its "Next:" cue). Runs
``MAMA_TURN_TEST_COUNT`` such turns (default 1; `mama bench turns` runs 200).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from pathlib import Path
from typing import Any

import pytest
from fake_anthropic import FakeAnthropic, claude_env, text, tool_use
from test_claude_code import CLAUDE, ROOT, SERVER, needs_claude
from test_claude_code_hooks import injected

pytestmark = needs_claude
COUNT = int(os.environ.get("MAMA_TURN_TEST_COUNT", "1"))
RUN_TIMEOUT_S = 120


def claude(script: list[dict[str, Any]], prompt: str, work: Path) -> FakeAnthropic:
    """One ``claude -p`` with Bash and the plugin's tools allowed; the stopped fake's log."""
    if not CLAUDE.exists():
        pytest.fail("run scripts/setup.sh --dev: it installs Claude Code into .tools/")
    (work / "home").mkdir(exist_ok=True)
    (work / "project").mkdir(exist_ok=True)
    command = [str(CLAUDE), "-p", prompt, "--plugin-dir", str(ROOT),
               "--allowedTools", f"Bash,{SERVER}"]  # fmt: skip
    with FakeAnthropic(script) as fake:
        proc = subprocess.Popen(command, cwd=work / "project", env=claude_env(fake, work / "home"),
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, start_new_session=True)  # fmt: skip
        try:
            out, err = proc.communicate(timeout=RUN_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            out, err = proc.communicate()
            pytest.fail(f"claude -p ran over {RUN_TIMEOUT_S} s\nstdout: {out}\nstderr: {err}")
    if proc.returncode != 0:
        pytest.fail(f"claude -p exited {proc.returncode}\nstdout: {out}\nstderr: {err}")
    return fake


@pytest.mark.parametrize("n", range(1, COUNT + 1))
def test_a_failing_last_command_and_the_next_step_come_back(
    tmp_path: Path, mama_home: Path, n: int
) -> None:
    failing = f"sh -c 'echo boom-{n}; exit 7'"
    closing = f"The smoke test did not pass. Next: start the price service on port 876{n}."
    claude([tool_use("Bash", {"command": failing, "description": "Run the smoke test"}),
            text(closing)], "run the smoke test", tmp_path)  # fmt: skip
    fake = claude([text("Picking up.")], "hello", tmp_path)
    start = injected(fake.main_requests[0], "SessionStart")
    assert "Unresolved:" in start, start
    unresolved = start.split("Unresolved:", 1)[1]
    assert f"- `{failing}` failed (Run the smoke test): exit 7, boom-{n}" in unresolved, start
    assert f"Next step: start the price service on port 876{n} (HIGH)" in start, start
    assert "Next step: Next:" not in start
