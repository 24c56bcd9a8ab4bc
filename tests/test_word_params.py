"""A relationship word a project uses more than 50 times with mean confidence above 0.75
becomes a parameter of the link tool: computed per project when the tools are listed, the
static list left valid, and a promotion told with ``tools/list_changed``."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import mcp_types as types
import pytest
from conftest import CLAUDE, DESKTOP, connect, text_result
from test_front import LIST_CHANGED, _front, _initialize, _until

from mama_plugin.config import Config
from mama_plugin.project import project_key
from mama_plugin.schema.links import LinkMemoriesInput
from mama_plugin.server.catalogue import MORE_TOOLS, load
from mama_plugin.server.state import State
from mama_plugin.server.word_params import LINK_TOOL, TOOL_FIELDS
from mama_plugin.storage import NewMemory, Store
from mama_plugin.storage.parameter_words import (
    PARAMETER_CONFIDENCE,
    PARAMETER_USES,
    parameter_words,
)

PROJECT = "/work/words"


def synthetic(store: Store, project: str, uses: dict[str, tuple[int, float]]) -> list[str]:
    """A decision hub and one memory a link: ``word`` used ``n`` times at ``confidence``."""
    hub = store.memories.insert(
        NewMemory(
            type="decision", project=project, content="hub", topic="hub", reasoning={"primary": "p"}
        )
    )[0].id
    ids = [hub]
    for word, (n, confidence) in uses.items():
        for i in range(n):
            m = store.memories.insert(
                NewMemory(type="insight", project=project, content=f"{word} {i}")
            )[0].id
            store.links.add(m, hub, word, f"{word} number {i}", confidence=confidence)
            ids.append(m)
    return ids


def test_the_rule_past_fifty_uses_and_above_three_quarters(store: Store) -> None:
    assert (PARAMETER_USES, PARAMETER_CONFIDENCE) == (50, 0.75)
    synthetic(
        store,
        PROJECT,
        {
            "inspired_by": (51, 0.9),  # promoted
            "based_on": (50, 0.9),  # not more than 50
            "motivated_by": (60, 0.75),  # not above 0.75
            "영감을_받은": (60, 0.9),  # no property name for it: stays a word
            "reason": (60, 0.9),  # the tool's own parameter
            "depends_on": (70, 0.8),  # promoted, and the most used
        },
    )
    synthetic(store, "/elsewhere", {"based_on": (5, 0.9)})  # another project's links
    found = parameter_words(store.conn, PROJECT, taken=TOOL_FIELDS)
    assert [(w.word, w.uses) for w in found] == [("depends_on", 70), ("inspired_by", 51)]
    assert found[1].mean_confidence == pytest.approx(0.9)
    assert parameter_words(store.conn, "/elsewhere") == []
    # The listing's own spelling of the tool's fields is the model's.
    assert set(LinkMemoriesInput.model_fields) == TOOL_FIELDS


def _link_schema(tools: list[types.Tool]) -> dict:
    return next(t for t in tools if t.name == LINK_TOOL).input_schema


@pytest.mark.anyio
async def test_the_listed_schema_takes_the_projects_words_and_a_promotion_is_told(
    tmp_path: Path, mama_home: Path
) -> None:
    db = tmp_path / "words.db"
    with Store.open(db, config=Config(mama_home)) as store:
        ids = synthetic(store, PROJECT, {"inspired_by": (51, 0.9), "based_on": (50, 0.9)})
    state = State(Config(mama_home), PROJECT, db)
    got = anyio.Event()

    async def on_message(msg: object) -> None:
        if isinstance(msg, types.ToolListChangedNotification):
            got.set()

    try:
        async with connect(state, CLAUDE, message_handler=on_message) as c:
            await c.list_tools()
            await c.call_tool(MORE_TOOLS, {})  # the link tool is listed on request
            with anyio.fail_after(2):
                await got.wait()
            got = anyio.Event()
            grown = state.exposure.changes
            schema = _link_schema((await c.list_tools()).tools)
            assert "inspired_by" in schema["properties"] and "based_on" not in schema["properties"]
            assert (
                "used 'inspired_by' 51 times" in schema["properties"]["inspired_by"]["description"]
            )
            assert schema["additionalProperties"] is False
            # The word's parameter links from_id to the memory named.
            done = await c.call_tool(
                LINK_TOOL, {"from_id": ids[2], "inspired_by": ids[3], "reason": "it read it"}
            )
            assert not done.is_error and "--inspired_by-->" in text_result(done)
            assert not got.is_set() and state.exposure.changes == grown  # nothing new promoted
            # A word that is not promoted here is no parameter: the answer says which are.
            refused = await c.call_tool(
                LINK_TOOL, {"from_id": ids[2], "based_on": ids[3], "reason": "r"}
            )
            assert refused.is_error and "unknown parameter based_on" in text_result(refused)
            assert "(inspired_by;" in text_result(refused)
            # The 51st use of based_on promotes it: the list changed, and the client is told.
            done = await c.call_tool(
                LINK_TOOL,
                {"from_id": ids[2], "to_id": ids[3], "relationship": "based on", "reason": "r"},
            )
            assert not done.is_error
            with anyio.fail_after(2):
                await got.wait()
            assert state.exposure.changes == grown + 1
            assert state.exposure.words == ("inspired_by", "based_on")  # 52 and 51 uses
            again = _link_schema((await c.list_tools()).tools)
            assert {"inspired_by", "based_on"} <= set(again["properties"])
            done = await c.call_tool(
                LINK_TOOL, {"from_id": ids[4], "based_on": ids[5], "reason": "now a parameter"}
            )
            assert not done.is_error
    finally:
        state.close()


@pytest.mark.anyio
async def test_the_static_list_stays_valid_for_every_project(
    tmp_path: Path, mama_home: Path
) -> None:
    static = load().definition(LINK_TOOL)
    assert set(static["inputSchema"]["properties"]) == TOOL_FIELDS - {"words"}
    db = tmp_path / "plain.db"
    with Store.open(db, config=Config(mama_home)) as store:
        ids = synthetic(store, PROJECT, {"relates_to": (3, 0.9)})
    state = State(Config(mama_home), PROJECT, db)
    try:
        async with connect(state, DESKTOP) as c:  # a client listed every tool, statically
            tools = (await c.list_tools()).tools
            listed = next(t for t in tools if t.name == LINK_TOOL)
            assert listed.input_schema == static["inputSchema"]
            done = await c.call_tool(
                LINK_TOOL,
                {"from_id": ids[1], "to_id": ids[2], "relationship": "refines", "reason": "r",
                 "tags": ["perf"]},
            )  # fmt: skip
            assert not done.is_error and "[tags: perf]" in text_result(done)
    finally:
        state.close()


def test_the_front_lists_the_words_before_the_store_opens(tmp_path: Path, mama_home: Path) -> None:
    with Store.open(config=Config(mama_home)) as store:
        ids = synthetic(
            store, project_key(tmp_path), {"inspired_by": (51, 0.9), "based_on": (50, 0.9)}
        )
    wire = _front(mama_home, tmp_path)
    try:
        _initialize(wire, "claude-code")
        wire.request("tools/list")
        more = {"name": MORE_TOOLS, "arguments": {}}  # the link tool is listed on request
        wire.send({"jsonrpc": "2.0", "id": 69, "method": "tools/call", "params": more})
        _until(wire, 69)
        tools = wire.request("tools/list")["result"]["tools"]
        schema = next(t for t in tools if t["name"] == LINK_TOOL)["inputSchema"]
        assert "inspired_by" in schema["properties"] and "based_on" not in schema["properties"]
        wire.send({"jsonrpc": "2.0", "id": 70, "method": "tools/call", "params": {
            "name": LINK_TOOL, "arguments": {"from_id": ids[1], "to_id": ids[2],
                                             "relationship": "based_on", "reason": "r"}}})  # fmt: skip
        seen = _until(wire, 70)
        assert seen[-1]["result"]["isError"] is False, json.dumps(seen[-1])
        assert {"jsonrpc": "2.0", "method": LIST_CHANGED} in seen
        tools = wire.request("tools/list")["result"]["tools"]
        schema = next(t for t in tools if t["name"] == LINK_TOOL)["inputSchema"]
        assert {"inspired_by", "based_on"} <= set(schema["properties"])
    finally:
        wire.close()


def test_words_that_are_not_an_object_get_a_clear_error() -> None:
    """The server fuzz found it: ``words`` as a list beside a word's own parameter was an
    unexpected TypeError inside MAMA; it is the field's own validation error now."""
    from pydantic import ValidationError

    with pytest.raises(ValidationError, match="words"):
        LinkMemoriesInput.model_validate(
            {"from_id": "dec_a", "reason": "r", "words": ["x"], "inspired_by": "dec_b"}
        )
