"""The MCP server in-process: tools, errors, v1.0 names, dynamic exposure in both protocol eras."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import anyio
import mcp_types as types
import pytest
from conftest import CLAUDE, DESKTOP, JWT, connect, tell_story
from conftest import text_result as text

from mama_plugin.config import Config
from mama_plugin.server.catalogue import CORE, MORE_TOOLS
from mama_plugin.server.state import State
from mama_plugin.server.tool_table import BY_NAME, TOOLS
from mama_plugin.server.tools import CLAUDE_PREFIX, NAME_PATTERN
from mama_plugin.storage import Store

# What a client whose list cannot grow is shown: every tool but the one that asks for more.
STATIC = [t.name for t in TOOLS if not t.hidden and t.name != MORE_TOOLS]


def names(result: types.ListToolsResult) -> list[str]:
    return [t.name for t in result.tools]


def test_tool_names_fit_the_api_even_with_claude_codes_prefix() -> None:
    for tool in TOOLS:
        assert re.match(NAME_PATTERN, tool.name), tool.name
        assert re.match(NAME_PATTERN, CLAUDE_PREFIX + tool.name), CLAUDE_PREFIX + tool.name


@pytest.mark.anyio
async def test_static_client_sees_every_tool_with_schemas(state: State) -> None:
    async with connect(state, DESKTOP) as c:
        listed = await c.list_tools()
        assert names(listed) == STATIC
        by_name = {t.name: t for t in listed.tools}
        assert by_name["search_by_context"].annotations.read_only_hint is True
        assert by_name["save_decision"].annotations.read_only_hint is False
        schema = by_name["save_decision"].input_schema
        assert "$defs" not in str(schema) and "$ref" not in str(schema)
        assert set(schema["required"]) == {"topic", "decision", "reasoning"}
        assert "WHY" in schema["properties"]["reasoning"]["properties"]["primary"]["description"]


@pytest.mark.anyio
async def test_the_jwt_story_through_the_tools(state: State) -> None:
    async with connect(state, DESKTOP) as c:
        saved = await c.call_tool("save_decision", {
            "topic": "auth_strategy", "decision": "JWT for the API", "reasoning": "stateless scaling",
            "tension": {"risks": ["refresh load unknown"]}})  # fmt: skip
        assert not saved.is_error and text(saved).startswith("Saved decision")
        jwt = saved.structured_content["id"]
        cp = await c.call_tool("save_checkpoint", {"summary": "JWT wired", "implements": [jwt],
                                                   "next_steps": [{"step": "load test", "priority": "HIGH"}]})  # fmt: skip
        assert not cp.is_error
        out = await c.call_tool("evolve_outcome", {"memory_id": jwt, "outcome": "FAILED",
                                                   "details": "p99 307 ms at 10K req/s",
                                                   "learned": ["refresh hits the DB"]})  # fmt: skip
        assert not out.is_error and out.structured_content["outcome"] == "FAILED"
        new = await c.call_tool("evolve_supersede", {"supersedes": jwt, "topic": "auth_strategy",
                                                     "decision": "Redis sessions", "reasoning": "JWT failed at 10K req/s"})  # fmt: skip
        assert new.structured_content["superseded"] == [jwt]
        found = await c.call_tool("search_by_context", {"query": "JWT auth for the API"})
        data = found.structured_content
        assert data["primary_results"][0]["id"] == new.structured_content["id"]
        assert "FAILED: p99 307 ms at 10K req/s" in text(found)
        topic = await c.call_tool("search_by_topic", {"topic": "auth_strategy"})
        assert f"superseded → {new.structured_content['id']}" in text(topic)
        loaded = await c.call_tool("load_checkpoint", {})
        # The checkpoint's decision as it stands now, over the one it replaced.
        new_id = new.structured_content["id"]
        assert "JWT wired" in text(loaded) and f"D1 {new_id} [auth_strategy]" in text(loaded)
        assert f"({jwt}) (" in text(loaded)
        context = await c.call_tool("load_context", {"memory_id": jwt})
        assert "supersedes" in text(context) and "outcome_of" in text(context)
        recent = await c.call_tool("search_recent", {"n": 3})
        assert len(recent.structured_content["memories"]) == 3


@pytest.mark.anyio
@pytest.mark.parametrize(("tool", "args", "message"), [
    ("save_decision", {"topic": "t", "decision": "d"}, "reasoning.primary is required"),
    ("save_decision", {"topic": "t", "decision": "d", "reasoning": "r",
                       "links": [{"to_id": "x", "relationship": "refines"}]}, "every link needs a reason"),
    ("save_decision", {"topic": "t", "decision": "d", "reasoning": "r", "supersedes": "nope"}, "unknown id 'nope'"),
    ("save_decision", {"topic": "t", "decision": "d", "reasoning": "r", "confidence": 4}, "between 0 and 1"),
    ("evolve_outcome", {"memory_id": "x", "outcome": "MAYBE", "details": "d"}, "must be one of"),
    ("save_insight", {"content": "x" * 9000}, "too long"),
    ("load_context", {"memory_id": "missing"}, "no memory has id"),
    ("no_such_tool", {}, "unknown tool 'no_such_tool'"),
])  # fmt: skip
async def test_bad_input_is_a_clear_tool_error_and_writes_nothing(
    state: State, tool, args, message
) -> None:
    async with connect(state, DESKTOP) as c:
        result = await c.call_tool(tool, args)  # type: ignore[arg-type]
        assert result.is_error and message in text(result)
    assert state.store.memories.counts()["memories"] == 0


@pytest.mark.anyio
async def test_v1_tools_are_served_unlisted_with_a_deprecation_notice(state: State) -> None:
    async with connect(state, DESKTOP) as c:
        assert not {
            "recall_decision",
            "suggest_decision",
            "list_decisions",
            "update_outcome",
        } & set(names(await c.list_tools()))
        saved = await c.call_tool(
            "save_decision", {"topic": "db", "decision": "PostgreSQL", "reasoning": "transactions"}
        )
        decision = saved.structured_content["id"]
        recall = await c.call_tool("recall_decision", {"topic": "db"})
        assert text(recall).startswith(
            "[deprecated: recall_decision is MAMA v1.0; use search_by_topic]"
        )
        suggest = await c.call_tool("suggest_decision", {"userQuestion": "which database?"})
        assert "use search_by_context" in suggest.structured_content["deprecated"]
        listed = await c.call_tool("list_decisions", {"limit": 5})
        assert listed.structured_content["memories"][0]["id"] == decision
        update = await c.call_tool("update_outcome", {"decisionId": decision, "outcome": "success"})
        assert (
            not update.is_error
            and state.store.memories.require(decision).outcome_status == "SUCCESS"
        )


@pytest.mark.anyio
async def test_legacy_names_listed_when_configured(
    tmp_path: Path, mama_home: Path, project: str
) -> None:
    Config(mama_home).set("legacy_tools_listed", "true")
    s = State(Config(mama_home), project, tmp_path / "x.db")
    async with connect(s, DESKTOP) as c:
        assert "recall_decision" in names(await c.list_tools())
    s.close()


@pytest.mark.anyio
async def test_claude_code_gets_a_core_set_that_grows_legacy_era(state: State) -> None:
    got = anyio.Event()

    async def on_message(msg: object) -> None:
        if isinstance(msg, types.ToolListChangedNotification):
            got.set()

    async with connect(state, CLAUDE, message_handler=on_message) as c:
        assert c.server_capabilities.tools.list_changed is True
        assert names(await c.list_tools()) == [t.name for t in TOOLS if t.name in CORE]
        observed = await c.call_tool("observe_prompt", {"prompt": "어제 작업 이어서 하자"})
        assert observed.structured_content["context"] == "resuming"
        # A new project has nothing to resume: the context changes nothing.
        assert observed.structured_content["tools_added"] == [] and state.exposure.changes == 0
        saved = await c.call_tool("save_decision", JWT)
        assert not saved.is_error
        with anyio.fail_after(2):
            await got.wait()
        # The project now has a decision: its outcome, its replacement, links — every tool.
        grown = names(await c.list_tools())
        assert grown == [t.name for t in TOOLS if not t.hidden]
        again = await c.call_tool(
            "observe_prompt", {"prompt": "the JWT rollout failed, move us to sessions"}
        )
        assert again.structured_content["tools_added"] == []  # expand-only, no second change
        assert (await c.call_tool("observe_prompt", {"prompt": "fix the typo"})).structured_content[
            "context"
        ] is None
        assert state.exposure.changes == 1
        hidden = await c.call_tool(
            "evolve_outcome", {"memory_id": "x", "outcome": "FAILED", "details": "d"}
        )
        assert hidden.is_error and "unknown memory_id" in text(hidden)


@pytest.mark.anyio
async def test_claude_code_gets_the_change_on_the_2026_protocol(state: State) -> None:
    async with connect(state, CLAUDE, mode="auto") as c:
        assert c.server_capabilities.tools.list_changed is True
        assert set(names(await c.list_tools())) == set(CORE)
        async with c.listen(tools_list_changed=True) as events:
            await c.call_tool("save_decision", JWT)
            with anyio.fail_after(2):
                await events.__aiter__().__anext__()
        assert {"search_by_topic", "evolve_supersede"} <= set(names(await c.list_tools()))


@pytest.mark.anyio
async def test_a_project_with_decisions_lists_their_tools_from_the_first_list(
    tmp_path: Path, mama_home: Path, project: str
) -> None:
    db = tmp_path / "known.db"
    with Store.open(db, config=Config(mama_home)) as store:
        tell_story(store, project)  # JWT FAILED, superseded by sessions
    s = State(Config(mama_home), project, db)
    try:
        async with connect(s, CLAUDE) as c:
            first = set(names(await c.list_tools()))
            assert {"evolve_outcome", "search_by_topic", "load_context", MORE_TOOLS} <= first
            assert "evolve_supersede" not in first  # save_decision(supersedes=) replaces
            await c.call_tool(
                "observe_prompt", {"prompt": "The load test failed. Move us to Redis"}
            )
            await c.call_tool(
                "evolve_outcome", {"memory_id": "x", "outcome": "FAILED", "details": "d"}
            )
        assert s.exposure.changes == 0  # seeded before the first list: nothing to change
    finally:
        s.close()


@pytest.mark.anyio
async def test_modes(tmp_path: Path, mama_home: Path, project: str) -> None:
    for mode, client, expected in (("force_static", CLAUDE, "all"), ("force_dynamic", DESKTOP, "core"),
                                   ("auto", DESKTOP, "all"), ("auto", CLAUDE, "core")):  # fmt: skip
        Config(mama_home).set("dynamic_tools", mode)
        s = State(Config(mama_home), project, tmp_path / f"{mode}.db")
        async with connect(s, client) as c:
            listed = set(names(await c.list_tools()))
        s.close()
        assert listed == (set(CORE) if expected == "core" else set(STATIC))


@pytest.mark.anyio
async def test_a_failed_notification_falls_back_to_every_tool(
    state: State, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mcp.server.subscriptions import InMemorySubscriptionBus

    async def broken(self, event):
        raise RuntimeError("bus down")

    monkeypatch.setattr(InMemorySubscriptionBus, "publish", broken)
    async with connect(state, CLAUDE) as c:
        assert set(names(await c.list_tools())) == set(CORE)
        await c.call_tool("save_decision", JWT)  # grows the list: the notification fails
        assert set(names(await c.list_tools())) == set(STATIC)
    assert state.exposure.failed


def test_server_module_stays_out_of_hooks() -> None:
    """Only `mama serve` imports the server: the CLI and storage must not pull in mcp."""
    code = "import sys, mama_plugin.cli, mama_plugin.storage; print('mcp' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
    assert "observe_prompt" not in BY_NAME  # a hook tool: server/hook_table.py's


def test_the_tool_list_is_known_without_pydantic_or_the_handlers() -> None:
    # A light front answers tools/list before the heavy imports: exposure and its catalogue
    # must stand on the standard library alone.
    code = (
        "import sys; from mama_plugin.server.exposure import Exposure; "
        "names = Exposure().listed('claude-code'); "
        "heavy = sorted(m for m in ('pydantic', 'mcp', 'mama_plugin.server.tools', 'jinja2') "
        "if m in sys.modules); print(names, heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[1])})  # fmt: skip
    assert out.stdout.strip().endswith("[]"), out.stdout
    assert "save_decision" in out.stdout
