"""A memory's open conflicts reach the model: ``load_context`` tells a teammate's version.

A conflict kept by ``mama share`` (a ``.mama/`` file changed by a teammate while this clone
changed the memory) and one kept by the team store (a teammate's push over the version this
developer saw) are each told with the memory, fenced, with the command that settles it.
"""

from __future__ import annotations

from typing import Any

import pytest

from mama_plugin.services.saving.memories import save_decision
from mama_plugin.storage.shared_files import SharedFiles
from mama_plugin.storage.team.conflicts import Conflict, raise_conflict

DECISION = {
    "topic": "queue",
    "decision": "Keep order events on RabbitMQ",
    "reasoning": "the team runs it already",
}


@pytest.mark.anyio
async def test_load_context_tells_both_kinds_of_conflict(state: Any, project: str) -> None:
    from conftest import DESKTOP, connect, text_result

    m = save_decision(state.store, project, DECISION).memory
    async with connect(state, DESKTOP) as c:
        quiet = await c.call_tool("load_context", {"memory_id": m.id})
        assert "Conflict:" not in text_result(quiet)
        SharedFiles(state.store).add_conflict(
            project, m.id, f".mama/decision/{m.id}.md",
            "---\nid: x\n---\n## Decision\nMove order events to Kafka", "h1", "mine",
        )  # fmt: skip
        raise_conflict(
            state.store,
            Conflict(0, project, m.id, 1, 3,
                     {"content": "Order events on SQS", "reasoning": {"primary": "no broker to run"}},
                     "bob", 0),
        )  # fmt: skip
        told = await c.call_tool("load_context", {"memory_id": m.id})
    text = text_result(told)
    fence = text.index("<mama-memory>")
    assert fence < text.index("Move order events to Kafka") < text.index("</mama-memory>")
    assert "Keep order events on RabbitMQ" in text  # this clone's version, the memory itself
    assert "in the repository's .mama/ differs" in text and "Move order events to Kafka" in text
    assert f"`mama share --resolve {m.id} --keep mine|theirs`" in text
    assert "on the team database differs" in text
    assert "bob: Order events on SQS — because no broker to run" in text
    assert f"`mama team resolve {m.id} --keep mine|theirs`" in text
    assert len(told.structured_content["conflicts"]) == 2  # type: ignore[index]
