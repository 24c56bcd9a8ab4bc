"""The project at a glance: description, key decisions, hubs, stale memories, tags, learning."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from conftest import DESKTOP, PROJECT, connect
from conftest import text_result as text

from mama_plugin.cli import main
from mama_plugin.config import Config
from mama_plugin.schema import OutcomeInput, parse
from mama_plugin.services.learning.hubs import HUB_MIN
from mama_plugin.services.saving.memories import save_decision, save_insight
from mama_plugin.services.saving.outcomes import record_outcome_event
from mama_plugin.services.saving.project_context import context_text, describe, project_context
from mama_plugin.storage import Store, now_ms

if TYPE_CHECKING:
    from mama_plugin.server.state import State

DAY = 86_400_000


def _fill(store: Store) -> tuple[str, str]:
    core = save_decision(store, PROJECT, {
        "topic": "db", "decision": "One SQLite file per user", "confidence": 0.6,
        "reasoning": {"primary": "no server to run"}, "tags": ["architecture", "storage"]},
    ).memory.id  # fmt: skip
    old = save_decision(store, PROJECT, {
        "topic": "perf", "decision": "p99 is 12 ms", "confidence": 0.9,
        "reasoning": {"primary": "measured"}, "tags": ["performance"]},
        created_at=now_ms() - 30 * DAY,
    ).memory.id  # fmt: skip
    for i in range(HUB_MIN):
        save_insight(store, PROJECT, {
            "topic": f"t{i}", "content": f"part {i} reads the file", "tags": ["storage"],
            "links": [{"to_id": core, "relationship": "depends_on", "reason": "the file"}]})  # fmt: skip
    save_decision(store, "/other", {"topic": "x", "decision": "X", "reasoning": {"primary": "y"}})
    return core, old


def test_the_context_tells_the_project(store: Store) -> None:
    core, old = _fill(store)
    record_outcome_event(store, parse(OutcomeInput, {
        "memory_id": core, "outcome": "SUCCESS", "details": "a year without a server"}))  # fmt: skip
    before = project_context(store, PROJECT)
    assert before.description is None
    assert [(m.id, n) for m, n in before.key_decisions] == [(core, HUB_MIN), (old, 0)]
    assert [h.memory.id for h in before.hubs] == [core]
    assert [s.memory.id for s in before.stale] == [old]
    assert before.tags[0] == ("storage", HUB_MIN + 1)
    assert before.counts == {"decision": 2, "insight": HUB_MIN}  # the outcome event is not one
    assert before.learned is not None and before.learned.outcomes == {"SUCCESS": 1}
    said = context_text(before)
    assert "No description yet" in said
    assert f"- {core} [db]: One SQLite file per user (0.68, SUCCESS, {HUB_MIN} references)" in said
    assert f"Hubs: {core} ({HUB_MIN})." in said
    assert f"Stale (verify before relying on them): {old} (expired)." in said
    # The decision and the five insights resting on it moved.
    assert "Learning: 1 outcome, success rate 100%, 6 confidence moves" in said
    first = describe(store, PROJECT, "A memory plugin for Claude Code.").memory
    second = describe(store, PROJECT, "MAMA: a memory of decisions for Claude Code.").memory
    after = project_context(store, PROJECT)
    assert after.description is not None and after.description.id == second.id
    assert first.id != second.id and store.memories.get(first.id) is not None  # kept
    assert "About it (" in context_text(after) and "MAMA: a memory of decisions" in context_text(
        after
    )
    assert "project" not in dict(after.tags)  # MAMA's own tag


def test_mama_context(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "cli.db"
    with Store.open(db, config=Config()) as store:
        core, _ = _fill(store)
    base = ["--db", str(db), "context", "--project", PROJECT]
    assert main([*base, "--describe", "The price service."]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Saved the project's description as ctx_")
    assert "The price service." in out and core in out
    assert main([*base, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["description"]["content"] == "The price service."
    assert data["key_decisions"][0]["id"] == core and data["hubs"][0]["id"] == core
    assert main([*base, "--describe", "  "]) == 1
    assert "--describe needs the text" in capsys.readouterr().err


@pytest.mark.anyio
async def test_the_project_context_tool(state: State) -> None:
    async with connect(state, DESKTOP) as c:
        empty = await c.call_tool("project_context", {})
        assert "No description yet" in text(empty)
        saved = await c.call_tool("project_context", {"description": "The price service."})
        assert text(saved).startswith("Saved the project's description as ctx_")
        assert saved.structured_content["description"]["content"] == "The price service."
        bad = await c.call_tool("project_context", {"description": ""})
        assert bad.is_error
