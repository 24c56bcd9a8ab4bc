"""The light MCP front (server/front.py) as Claude Code runs it: a stdio subprocess.

tests/test_stdio.py drives the same front through ``mama serve`` and the MCP Inspector; these
tests speak raw newline-delimited JSON-RPC to ``python -m mama_plugin.server.front``.
"""

from __future__ import annotations

import json
import os
import queue
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from conftest import JWT
from test_stdio import Wire

from mama_plugin.config import Config
from mama_plugin.jsonrpc import PROTOCOL_VERSIONS
from mama_plugin.server.catalogue import CONTEXT_TOOLS, CORE, INSTRUCTIONS, MORE_TOOLS, load
from mama_plugin.server.exposure import SEEDED
from mama_plugin.server.warm_up import DRAIN_S

FRONT = [sys.executable, "-m", "mama_plugin.server.front"]
LIST_CHANGED = "notifications/tools/list_changed"


def _front(mama_home: Path, project: Path) -> Wire:
    return Wire(mama_home, project, [*FRONT, "--project", str(project)])


def _initialize(wire: Wire, client: str, version: str = "2025-11-25") -> dict[str, Any]:
    answer = wire.request("initialize", {"protocolVersion": version, "capabilities": {},
                                         "clientInfo": {"name": client, "version": "1"}})  # fmt: skip
    wire.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    return answer


def _until(wire: Wire, ident: int | None) -> list[dict[str, Any]]:
    """Every message the server sent up to and including the answer to ``ident`` (None: any
    answer)."""
    seen, deadline = [], time.monotonic() + 30
    while (left := deadline - time.monotonic()) > 0:
        try:
            line = wire.received().get(timeout=left)
        except queue.Empty:
            break
        assert line, "the server exited"
        seen.append(json.loads(line))
        if seen[-1].get("id") == ident or (ident is None and "id" in seen[-1]):
            return seen
    raise AssertionError(f"no answer to {ident} within 30 s; saw {seen}")


def _call(wire: Wire, tool: str, arguments: Any) -> dict[str, Any]:
    answer = wire.request("tools/call", {"name": tool, "arguments": arguments})
    assert "result" in answer, answer
    return dict(answer["result"])


def _names(wire: Wire) -> list[str]:
    return [t["name"] for t in wire.request("tools/list")["result"]["tools"]]


def test_initialize_and_tools_list_come_from_the_catalogue(tmp_path: Path, mama_home: Path) -> None:
    catalogue = load()
    wire = _front(mama_home, tmp_path)
    try:
        init = _initialize(wire, "claude-code", version="2026-07-28")["result"]
        assert init["protocolVersion"] == PROTOCOL_VERSIONS[-1]  # a newer era falls back
        assert init["capabilities"] == {"tools": {"listChanged": True}}
        assert init["serverInfo"]["name"] == "mama" and init["instructions"] == INSTRUCTIONS
        tools = wire.request("tools/list")["result"]["tools"]
        # Claude Code gets the core set, in the table's order, each as the catalogue has it.
        assert [t["name"] for t in tools] == [n for n in catalogue.listed if n in CORE]
        assert tools == [catalogue.definition(t["name"]) for t in tools]
        assert wire.request("ping")["result"] == {}
    finally:
        assert wire.close() == ""
    wire = _front(mama_home, tmp_path)
    try:
        init = _initialize(wire, "inspector", version="2025-06-18")["result"]
        assert init["protocolVersion"] == "2025-06-18"
        # Any other client: every tool (and nothing to ask for more with).
        assert _names(wire) == [n for n in catalogue.listed if n != MORE_TOOLS]
    finally:
        wire.close()


def test_save_then_search_round_trip(tmp_path: Path, mama_home: Path) -> None:
    wire = _front(mama_home, tmp_path)
    try:
        _initialize(wire, "stdio-test")
        saved = _call(wire, "save_decision", JWT)
        assert saved["isError"] is False and saved["structuredContent"]["topic"] == JWT["topic"]
        found = _call(wire, "search_by_context", {"query": "API auth tokens"})
        assert found["structuredContent"]["primary_results"][0]["content"] == JWT["decision"]
        bad = _call(wire, "save_decision", {"topic": "db", "decision": "x"})
        assert (
            bad["isError"] is True and "reasoning.primary is required" in bad["content"][0]["text"]
        )
        unknown = _call(wire, "no_such_tool", {})
        assert unknown["isError"] is True and "save_decision" in unknown["content"][0]["text"]
        old = _call(wire, "recall_decision", {"topic": JWT["topic"]})
        assert old["content"][0]["text"].startswith("[deprecated: recall_decision is MAMA v1.0")
    finally:
        wire.close()
    wire = _front(mama_home, tmp_path)
    try:
        _initialize(wire, "claude-code")  # Claude Code gets the text alone
        found = _call(wire, "search_by_context", {"query": "API auth tokens"})
        assert "structuredContent" not in found and JWT["decision"] in found["content"][0]["text"]
    finally:
        wire.close()


def test_hook_tools_answer_the_envelope_and_fail_open(tmp_path: Path, mama_home: Path) -> None:
    wire = _front(mama_home, tmp_path)
    try:
        _initialize(wire, "claude-code")
        _call(wire, "save_decision", JWT)
        found = _call(wire, "observe_prompt", {"prompt": "Should the API keep JWT auth tokens?",
                                               "session_id": "s1", "transcript_path": ""})  # fmt: skip
        envelope = json.loads(found["content"][0]["text"])
        context = envelope["hookSpecificOutput"]["additionalContext"]
        assert envelope["hookSpecificOutput"]["hookEventName"] == "UserPromptSubmit"
        assert "<mama-memory>" in context and JWT["decision"] in context
        for bad in ({"prompt": ["not", "text"]}, {}, None):
            answer = _call(wire, "observe_prompt", bad)
            assert answer["content"][0]["text"] == "{}" and answer["isError"] is False
        done = _call(wire, "checkpoint_turn", {"session_id": "s1", "transcript_path": "",
                     "last_assistant_message": "Kept JWT.", "stop_hook_active": "false"})  # fmt: skip
        assert done["content"][0]["text"] == "{}" and done["structuredContent"]["checkpoint"]
    finally:
        wire.close()


def test_a_prompt_that_can_recall_nothing_is_answered_before_the_store_opens(
    tmp_path: Path, mama_home: Path
) -> None:
    """ "hello" right after initialize (before the warm-up has opened the store) is answered {}
    at once; its notes are taken once the lanes are up, and the next prompt recalls as ever."""
    wire = _front(mama_home, tmp_path)
    try:
        _initialize(wire, "claude-code")
        hello = _call(wire, "observe_prompt", {"prompt": "hello", "session_id": "s1"})
        assert hello == {"content": [{"type": "text", "text": "{}"}], "isError": False}
        _call(wire, "save_decision", JWT)
        found = _call(wire, "observe_prompt", {"prompt": "Should the API keep JWT auth tokens?",
                                               "session_id": "s1"})  # fmt: skip
        assert JWT["decision"] in found["content"][0]["text"]
    finally:
        wire.close()
    log = (mama_home / "logs" / "server.log").read_text(encoding="utf-8")
    assert re.search(
        r"observe_prompt answered in \d+ ms \(0 ms waiting for the warm-up\): \{\} at once", log
    )
    assert log.count("observe_prompt answered in") == 3  # hello, its notes, the question


def test_calls_run_concurrently_and_answer_by_id(tmp_path: Path, mama_home: Path) -> None:
    wire = _front(mama_home, tmp_path)
    try:
        _initialize(wire, "stdio-test")
        # Sent together before the first is answered (and before the warm-up is over).
        for ident, (tool, arguments) in enumerate(
            [("save_decision", JWT), ("search_recent", {"n": 5})], start=100
        ):
            wire.send({"jsonrpc": "2.0", "id": ident, "method": "tools/call",
                       "params": {"name": tool, "arguments": arguments}})  # fmt: skip
        wire.send({"jsonrpc": "2.0", "id": 102, "method": "ping"})
        answers: dict[int, dict[str, Any]] = {}
        while not {100, 101, 102} <= set(answers):  # in whatever order they finish
            answers |= {m["id"]: m for m in _until(wire, None) if "id" in m}
        assert answers[100]["result"]["structuredContent"]["topic"] == JWT["topic"]
        assert answers[101]["result"]["isError"] is False
        assert 102 in answers  # a ping is not held up behind the calls
    finally:
        wire.close()


def test_garbage_gets_errors_and_the_session_goes_on(tmp_path: Path, mama_home: Path) -> None:
    wire = _front(mama_home, tmp_path)
    try:
        wire.send("{this is not json")
        wire.send("[1, 2]")
        wire.send("")
        wire.send({"jsonrpc": "2.0", "id": 7, "method": "server/discover"})
        wire.send({"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": {"arguments": 3}})
        wire.send({"jsonrpc": "2.0", "id": 9})
        wire.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {}})
        seen = _until(wire, 9)
        codes = [(m.get("id"), m["error"]["code"]) for m in seen]
        assert codes == [(None, -32700), (None, -32600), (7, -32601), (8, -32602), (9, -32600)]
        assert _initialize(wire, "stdio-test")["result"]["serverInfo"]["name"] == "mama"
        assert "save_decision" in _names(wire)
    finally:
        assert wire.close() == ""


def test_the_end_of_stdin_ends_the_server_promptly(tmp_path: Path, mama_home: Path) -> None:
    wire = _front(mama_home, tmp_path)
    _initialize(wire, "stdio-test")
    # A call still under way when stdin closes is answered before the server exits.
    wire.send({"jsonrpc": "2.0", "id": 50, "method": "tools/call",
               "params": {"name": "save_decision", "arguments": JWT}})  # fmt: skip
    assert wire.proc.stdin is not None
    wire.proc.stdin.close()
    try:
        assert wire.proc.wait(timeout=DRAIN_S + 30) == 0
        assert _until(wire, 50)[-1]["result"]["isError"] is False
    finally:
        assert wire.close() == ""


def test_a_tool_list_change_is_notified(tmp_path: Path, mama_home: Path) -> None:
    wire = _front(mama_home, tmp_path)
    try:
        _initialize(wire, "claude-code")
        # An empty project: the core. Its first decision makes the rest possible (an outcome,
        # a replacement, the search and link tools): the list grows, once, and says so.
        assert _names(wire) == [n for n in load().listed if n in CORE]
        wire.send({"jsonrpc": "2.0", "id": 60, "method": "tools/call", "params": {
            "name": "save_decision", "arguments": JWT}})  # fmt: skip
        seen = _until(wire, 60)
        assert {"jsonrpc": "2.0", "method": LIST_CHANGED} in seen
        assert set(CONTEXT_TOOLS["tracking"]) <= set(_names(wire))
        # A second save needs nothing new: no second notification.
        wire.send({"jsonrpc": "2.0", "id": 61, "method": "tools/call", "params": {
            "name": "save_decision", "arguments": {**JWT, "topic": "auth_other"}}})  # fmt: skip
        assert [m for m in _until(wire, 61) if m.get("method") == LIST_CHANGED] == []
    finally:
        wire.close()


def test_a_call_that_grew_the_list_is_answered_after_the_client_lists_again(
    tmp_path: Path, mama_home: Path
) -> None:
    # Claude Code builds its next request when the answer arrives: if it has listed the
    # tools again by then, that request carries the new list (seen with 2.1.197).
    wire = _front(mama_home, tmp_path)
    try:
        _initialize(wire, "claude-code")
        assert MORE_TOOLS in _names(wire)
        wire.send({"jsonrpc": "2.0", "id": 70, "method": "tools/call", "params": {
            "name": MORE_TOOLS, "arguments": {}}})  # fmt: skip
        first = json.loads(wire.received().get(timeout=30))
        assert first == {"jsonrpc": "2.0", "method": LIST_CHANGED}  # before the answer
        wire.send({"jsonrpc": "2.0", "id": 71, "method": "tools/list", "params": {}})
        seen = [m.get("id") for m in _until(wire, 70)]
        assert seen == [71, 70]  # the list first, then the answer that waited for it
        assert _names(wire) == list(load().listed)
        wire.send({"jsonrpc": "2.0", "id": 72, "method": "tools/call", "params": {
            "name": MORE_TOOLS, "arguments": {}}})  # fmt: skip
        again = _until(wire, 72)
        assert "listed already" in again[-1]["result"]["content"][0]["text"]
        assert len(again) == 1  # nothing changed: no notification
    finally:
        wire.close()


def test_a_switched_off_project_saves_nothing(tmp_path: Path, mama_home: Path) -> None:
    wire = _front(mama_home, tmp_path)
    try:
        _initialize(wire, "stdio-test")
        Config().set("disabled_projects", str(tmp_path.resolve()))
        refused = _call(wire, "save_decision", JWT)
        text = refused["content"][0]["text"]
        assert refused["isError"] is True and "MAMA is off for this project" in text
        assert "/mama-configure" in text and "mama config enable" in text
        assert _call(wire, "search_recent", {})["isError"] is False  # reading still works
        prompt = {"prompt": "Should the API keep JWT auth tokens?"}
        assert _call(wire, "observe_prompt", prompt)["content"][0]["text"] == "{}"
        Config().set("disabled_projects", "")
        assert _call(wire, "save_decision", JWT)["isError"] is False
    finally:
        wire.close()


NOISY = """
import os, sys
from mama_plugin.server import front
handle = front.Front.handle
def noisy(self, line):
    print("noise from a library")
    os.write(1, b"noise from C\\n")
    return handle(self, line)
front.Front.handle = noisy
sys.exit(front.main(["--project", sys.argv[1]]))
"""


def test_stdout_carries_the_protocol_only(tmp_path: Path, mama_home: Path) -> None:
    """What the process prints once serving (Python or C, to fd 1) goes to stderr."""
    proc = subprocess.run([sys.executable, "-c", NOISY, str(tmp_path)],
                          input=b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n', capture_output=True,
                          env={**os.environ, "MAMA_HOME": str(mama_home)}, timeout=60)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert [json.loads(x) for x in proc.stdout.splitlines()] == [
        {"jsonrpc": "2.0", "id": 1, "result": {}}
    ]
    assert b"noise from a library" in proc.stderr and b"noise from C" in proc.stderr


def test_a_tools_call_before_initialize_still_answers(tmp_path: Path, mama_home: Path) -> None:
    wire = _front(mama_home, tmp_path)
    try:
        assert _call(wire, "search_recent", {})["isError"] is False
        assert _call(wire, "observe_prompt", {"prompt": "hello"})["content"][0]["text"] == "{}"
    finally:
        wire.close()


def _first_list(mama_home: Path, project: Path) -> tuple[list[str], set[str]]:
    """The front's first tools/list for ``project``, and the top-level modules imported
    before it was answered (``-X importtime`` and the protocol share one pipe, in order)."""
    hello = {"protocolVersion": "2025-11-25", "capabilities": {},
             "clientInfo": {"name": "claude-code", "version": "1"}}  # fmt: skip
    lines = [{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello},
             {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}]  # fmt: skip
    env = {**os.environ, "MAMA_HOME": str(mama_home)}
    proc = subprocess.run([sys.executable, "-X", "importtime", *FRONT[1:], "--project",
                           str(project)], input="".join(json.dumps(x) + "\n" for x in lines),
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
                          timeout=120, check=True)  # fmt: skip
    before: set[str] = set()
    for line in proc.stdout.splitlines():
        if line.startswith("import time:"):
            before.add(line.rpartition("|")[2].strip().split(".")[0])
        elif line.startswith("{") and json.loads(line).get("id") == 2:
            return [t["name"] for t in json.loads(line)["result"]["tools"]], before
    raise AssertionError(proc.stdout[-2000:])


def test_a_returning_users_first_list_is_seeded_before_the_store_opens(
    tmp_path: Path, mama_home: Path
) -> None:
    from mama_plugin.project import project_key
    from mama_plugin.services.saving.memories import save_decision
    from mama_plugin.storage import Store

    project = tmp_path / "project"
    project.mkdir()
    with Store.open(config=Config(mama_home)) as store:
        save_decision(store, project_key(project), {"topic": "auth", "decision": "Use JWT",
                                                    "reasoning": "no session store to run"})  # fmt: skip
    listed, before = _first_list(mama_home, project)
    # A project with decisions gets the resume and search tools on its first list...
    wanted = {n for c in SEEDED for n in CONTEXT_TOOLS[c]} | set(CORE)
    assert set(listed) == wanted, listed
    # ...read with the standard library's sqlite3: apsw and the store load in the warm-up.
    assert "sqlite3" in before and "apsw" not in before, sorted(before)
    # Another project of the same store starts from the core.
    other = tmp_path / "other"
    other.mkdir()
    assert _first_list(mama_home, other)[0] == [n for n in load().listed if n in CORE]


def test_an_unreadable_database_lists_every_tool(tmp_path: Path, mama_home: Path) -> None:
    mama_home.mkdir(parents=True)
    (mama_home / "mama.db").write_bytes(b"not a database" * 100)
    listed, _ = _first_list(mama_home, tmp_path)
    assert listed == list(load().listed)  # a damaged store must not take tools away
