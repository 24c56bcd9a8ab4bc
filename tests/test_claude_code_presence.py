"""Real Claude Code with its default settings: MAMA is there in every ``claude -p`` run.

Claude Code 2.1.197 in ``-p`` waits ~2 s for a plugin's MCP server; a slower server is missing
for the whole run (no MAMA tools for the model, the UserPromptSubmit and Stop ``mcp_tool``
hooks skipped). Unlike the other real-CLI suites, these runs leave
``MCP_CONNECTION_NONBLOCKING`` unset, as a user's ``claude -p`` does. Each run (in its own
HOME, one project whose store holds a decision the prompt is about) must show MAMA's tools on
the first model request, the UserPromptSubmit hook's recall of that decision, and the Stop
hook's rolling checkpoint in the store. ``MAMA_PRESENCE_RUNS`` sets how many (default 3; the
release check runs 20); ``python -m benchmarks presence`` runs the same with timings against
no plugin.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

import pytest
from test_claude_code import needs_claude

from benchmarks import presence
from mama_plugin.config import Config

RUNS = int(os.environ.get("MAMA_PRESENCE_RUNS", "3"))


@needs_claude
def test_mama_is_there_in_every_default_claude_p_run(
    tmp_path: Path, mama_home: Path, request: pytest.FixtureRequest
) -> None:
    if not presence.CLAUDE.exists():
        pytest.fail("run scripts/setup.sh --dev: it installs Claude Code into .tools/")
    # The embedding model built once for the session, rather than by the first server; with
    # no local extra, keyword recall finds the seeded decision too.
    with contextlib.suppress(pytest.skip.Exception):
        Config().set("embedding_model_path", str(request.getfixturevalue("built_model")))
    failed = []
    for i in range(RUNS):
        project = tmp_path / f"project-{i}"  # see presence_run: a project per run
        presence.seed(mama_home, project)
        run = presence.run_once(tmp_path / f"home-{i}", project, mama_home, plugin=True)
        print(f"run {i + 1}/{RUNS}: {run}")
        shown = (run.exit_code == 0, run.tools_on_first_request, run.prompt_hook_injected,
                 run.stop_checkpoint_written)  # fmt: skip
        if not all(shown):
            failed.append(f"run {i + 1}: {run}")
    assert not failed, "MAMA was missing from a default claude -p run:\n" + "\n".join(failed)
