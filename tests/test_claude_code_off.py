"""Real Claude Code, fake model: a project switched off with `mama config disable` is off.

Off means: the hooks inject nothing (SessionStart, UserPromptSubmit), the tools save nothing
and say how to switch MAMA back on, and the server's instructions say MAMA is off there —
asserted on the request bodies Claude Code sent the model (see tests/test_claude_code.py).
"""

from __future__ import annotations

from pathlib import Path

from fake_anthropic import text, tool_use
from test_claude_code import JWT, SERVER, needs_claude, result_of, run_claude
from test_claude_code_hooks import injected, sent

from mama_plugin.config import Config
from mama_plugin.project import project_key
from mama_plugin.server.catalogue import OFF
from mama_plugin.storage import Store

SAVE = f"{SERVER}__save_decision"


@needs_claude
def test_a_switched_off_project_hears_nothing_and_saves_nothing(
    tmp_path: Path, mama_home: Path
) -> None:
    # Session 1 saves a decision while MAMA is on; then the user switches the project off.
    run_claude([tool_use(SAVE, JWT), text("Saved.")], "Record our API auth decision", tmp_path,
               "on")  # fmt: skip
    project = project_key(tmp_path / "project")
    Config(mama_home).set("disabled_projects", project)

    changed = {**JWT, "topic": "auth_cache", "decision": "Cache JWT public keys for an hour"}
    fake = run_claude([tool_use(SAVE, changed), text("Noted.")],
                      "Should the API keep JWT auth tokens? Save that we cache the keys.",
                      tmp_path, "off")  # fmt: skip
    first, second = fake.main_requests[:2]
    assert injected(first, "SessionStart") == ""  # no cliffhanger, though a decision exists
    assert injected(first, "UserPromptSubmit") == ""  # the related prompt recalls nothing
    assert JWT["decision"] not in sent(first)
    assert OFF in sent(first)  # the server's instructions say MAMA is off, and how to undo it
    refused = result_of(second, SAVE)
    assert refused["is_error"] and "MAMA is off for this project" in refused["text"]
    assert "/mama-configure" in refused["text"], refused["text"]
    with Store.open(config=Config(mama_home)) as store:
        assert store.memories.by_topic("auth_cache") == []  # nothing saved
        # The Stop hook wrote no rolling checkpoint for the switched-off session either.
        sessions = {m.session_id for m in store.memories.recent(project=project, limit=20)}
    assert len(sessions) == 1, sessions  # only the first (on) session's memories
