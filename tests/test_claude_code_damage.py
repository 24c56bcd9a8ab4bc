"""Real Claude Code, fake model, damaged database: the model is told what is wrong and what to do.

The store is built, checkpointed and then damaged (pages zeroed in the middle of the file, as
a disk or an interrupted copy leaves it). Claude Code starts the plugin's server, runs the
SessionStart hook and sends the model's ``save_decision`` call: the tool result must be an
error that names the damage and ``sh …/bin/mama doctor``, and the file must not change.
"""

from __future__ import annotations

from pathlib import Path

from conftest import MAMA, file_fingerprint
from fake_anthropic import text, tool_use
from test_claude_code import JWT, SAVE, needs_claude, result_of, run_claude
from test_damage import build, zero_middle


@needs_claude
def test_a_save_into_a_damaged_store_is_refused_with_the_fix(
    tmp_path: Path, mama_home: Path
) -> None:
    db = build(mama_home)
    zero_middle(db)
    before = file_fingerprint(db)
    fake = run_claude(
        [tool_use(SAVE, JWT), text("Told the user.")],
        "Record our API auth decision",
        tmp_path,
        "damaged",
    )
    answer = result_of(fake.main_requests[1], SAVE)
    assert answer["is_error"], answer["text"]
    assert f"the memory store {db} is damaged (" in answer["text"], answer["text"]
    assert "MAMA writes nothing into it" in answer["text"]
    assert f"`{MAMA} doctor`" in answer["text"] and "server.log" not in answer["text"]
    assert "Saved decision" not in answer["text"]
    assert file_fingerprint(db) == before
