"""What a client sees, kept as reviewed snapshots: the tool lists and representative results.

Ids and times change on every run, so they are replaced before comparing: each memory id by
``<dec_1>``, ``<chk_1>``… in order of first appearance, every millisecond time by ``<ms>``,
every rendered date by ``<date>``. Regenerate after an intended change with
``MAMA_UPDATE_SNAPSHOTS=1 pytest tests/ -k snapshot`` and review the diff in git.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import mcp_types as types
import pytest
from conftest import CLAUDE, DESKTOP, connect

from mama_plugin.server.state import State

Snapshot = Callable[[str, Any], None]

_ID = re.compile(r"\b(dec|chk|ins|ctx)_[0-9a-z]{10,}\b")
_DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}(?: \d{2}:\d{2} UTC)?\b")
_TIMES = frozenset({"created_at", "updated_at", "last_used", "recorded_at", "decided_at"})


class Normaliser:
    """Replaces ids and times with stable placeholders, consistently across several results."""

    def __init__(self) -> None:
        self.ids: dict[str, str] = {}

    def _id(self, match: re.Match[str]) -> str:
        kind = match.group(1)
        if match.group(0) not in self.ids:
            count = sum(1 for v in self.ids.values() if v.startswith(f"<{kind}_"))
            self.ids[match.group(0)] = f"<{kind}_{count + 1}>"
        return self.ids[match.group(0)]

    def __call__(self, value: Any, key: str = "") -> Any:
        if isinstance(value, dict):
            return {k: self(v, k) for k, v in value.items()}
        if isinstance(value, list):
            return [self(v) for v in value]
        if isinstance(value, str):
            return _DATE.sub("<date>", _ID.sub(self._id, value))
        if key in _TIMES and isinstance(value, int):
            return "<ms>"
        return value


def _seen(result: types.CallToolResult | types.ListToolsResult) -> Any:
    """The result as it goes over the wire (``tools/call`` / ``tools/list`` JSON)."""
    return result.model_dump(by_alias=True, exclude_none=True, mode="json")


@pytest.mark.anyio
async def test_snapshot_of_the_static_tool_list(state: State, snapshot: Snapshot) -> None:
    async with connect(state, DESKTOP) as c:
        listed = await c.list_tools()
    snapshot("list_tools", _seen(listed))


@pytest.mark.anyio
async def test_snapshot_of_the_core_list_claude_code_starts_with(
    state: State, snapshot: Snapshot
) -> None:
    async with connect(state, CLAUDE) as c:
        listed = await c.list_tools()
    snapshot("list_tools_claude_code", [t.name for t in listed.tools])


JWT = {
    "topic": "auth_strategy",
    "decision": "Stateless JWT access tokens for the API",
    "reasoning": {
        "primary": "no session store to run at 10K req/s",
        "alternatives_considered": ["server-side sessions"],
    },
    "tension": {"risks": ["token refresh load is unknown"]},
}
WIRED = {
    "summary": "JWT issuing and refresh wired",
    "next_steps": [{"step": "load test refresh at 10K req/s", "priority": "HIGH"}],
}
FAILED = {
    "outcome": "FAILED",
    "details": "p99 307 ms at 10K req/s",
    "learned": ["every refresh hits the DB"],
}
SESSIONS = {
    "topic": "auth_strategy",
    "decision": "Server-side sessions in Redis",
    "reasoning": "refresh without a DB round trip: p99 41 ms at 10K req/s",
}


@pytest.mark.anyio
async def test_snapshot_of_the_jwt_story_results(state: State, snapshot: Snapshot) -> None:
    """JWT decided, wired, FAILED, superseded by sessions; then searched and resumed."""
    seen: dict[str, Any] = {}
    async with connect(state, DESKTOP) as c:
        saved = await c.call_tool("save_decision", JWT)
        seen["save_decision"] = _seen(saved)
        jwt = saved.structured_content["id"]  # type: ignore[index]
        await c.call_tool("save_checkpoint", {**WIRED, "implements": [jwt]})
        outcome = await c.call_tool("evolve_outcome", {**FAILED, "memory_id": jwt})
        seen["evolve_outcome"] = _seen(outcome)
        await c.call_tool("evolve_supersede", {**SESSIONS, "supersedes": jwt})
        found = await c.call_tool("search_by_context", {"query": "JWT auth for the API"})
        seen["search_by_context"] = _seen(found)
        seen["load_checkpoint"] = _seen(await c.call_tool("load_checkpoint", {}))
    normalise = Normaliser()  # one for the story: an id keeps its placeholder across results
    for name, result in seen.items():
        snapshot(name, normalise(result))
