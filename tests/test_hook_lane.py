"""The hook tools: declared beside their handlers (server/hook_tools.py), one table
(server/hook_table.py) and one runner (server/hook_lane.py).

The table names each hook tool once and reads its arguments without pydantic. The runner keeps
one long-lived worker per hook tool, so successive prompts run on one thread and reuse its store
connection, and a call stuck past its deadline holds up no later call.
"""

from __future__ import annotations

import io
import json
import queue
import threading
import time
from dataclasses import fields
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mama_plugin.config import Config
from mama_plugin.embeddings.errors import EmbeddingError
from mama_plugin.server import hook_tools, preload
from mama_plugin.server.base import Answer, Env, Reply
from mama_plugin.server.catalogue import TOOLS_JSON
from mama_plugin.server.hook_lane import Lane
from mama_plugin.server.hook_table import (
    HOOK_BUDGET_S,
    HOOK_DEADLINE_S,
    HOOKS,
    LIMITS,
    PROMPT_MAX,
    PromptArgs,
    TurnArgs,
    arguments,
)
from mama_plugin.server.state import State

ROOT = Path(__file__).resolve().parents[1]
WAIT_S = 30.0  # bounds a wait for what must happen; reached only when something is wrong
STUCK_S = 1.0  # the deadline of a call made to get stuck (a warm worker takes it at once)


# -- the table ---------------------------------------------------------------------------


def test_one_table_names_the_hook_tools() -> None:
    """hooks/hooks.json calls the table's tools with the table's fields, within its budget;
    the shipped catalogue names them; each handler is found; the tool table has none."""
    from mama_plugin.server.tool_table import BY_NAME

    hooks = json.loads((ROOT / "hooks" / "hooks.json").read_text(encoding="utf-8"))["hooks"]
    called = {
        hook["tool"]: (event, set(hook["input"]), float(hook["timeout"]))
        for event, groups in hooks.items()
        for group in groups
        for hook in group["hooks"]
        if hook["type"] == "mcp_tool"
    }
    assert {name: event for name, (event, _, _) in called.items()} == {
        name: tool.event for name, tool in HOOKS.items()
    }
    for name, tool in HOOKS.items():
        _, forwarded, timeout_s = called[name]
        assert forwarded == {field.name for field in fields(tool.args)}
        assert HOOK_DEADLINE_S < HOOK_BUDGET_S < timeout_s  # answered before Claude Code quits
        assert tool.handler() is getattr(hook_tools, tool.handler().__name__)
    assert json.loads(TOOLS_JSON.read_text(encoding="utf-8"))["hook_tools"] == list(HOOKS)
    assert not set(HOOKS) & set(BY_NAME)


def test_a_hooks_text_is_clipped_and_its_extra_fields_ignored() -> None:
    given = {"prompt": "x" * 30_000, "session_id": "s" * 500, "extra": 1, "transcript_path": ""}
    read = HOOKS["observe_prompt"].read(given)
    assert read == PromptArgs(prompt="x" * 20_000, session_id="s" * 200)
    assert HOOKS["observe_prompt"].read(None) == PromptArgs()
    turn = HOOKS["checkpoint_turn"].read({"stop_hook_active": "true", "cwd": "p" * 5000})
    assert turn.continuing and turn == TurnArgs(stop_hook_active="true", cwd="p" * 4096)
    assert arguments(TurnArgs, {"stop_hook_active": True}).continuing
    assert not arguments(TurnArgs, {"stop_hook_active": "false"}).continuing
    assert not arguments(TurnArgs, {}).continuing


# Short text of any kind, and text around each limit.
_LENGTHS = sorted({n + d for n in LIMITS.values() for d in (-1, 0, 1)})
_TEXT = st.text(max_size=20) | st.sampled_from(_LENGTHS).map(lambda n: "y" * n)
_NAMES = st.sampled_from([*LIMITS, "stop_hook_active", "hook_event_name", "extra"])


@given(st.dictionaries(_NAMES, _TEXT))
def test_any_text_is_read_never_refused(given: dict[str, str]) -> None:
    for kind in (PromptArgs, TurnArgs):
        read = arguments(kind, given)
        for field in fields(kind):
            limit = LIMITS.get(field.name, PROMPT_MAX)
            expected = given[field.name][:limit] if field.name in given else field.default
            assert getattr(read, field.name) == expected


@pytest.mark.parametrize(
    ("kind", "given"),
    [
        (PromptArgs, {"prompt": 3}),
        (PromptArgs, {"session_id": None}),
        (TurnArgs, {"cwd": ["x"]}),
        (TurnArgs, {"stop_hook_active": 1}),
        (PromptArgs, ["prompt"]),
        (TurnArgs, "text"),
    ],
)
def test_a_wrong_type_is_refused(kind: type[PromptArgs] | type[TurnArgs], given: Any) -> None:
    with pytest.raises(ValueError):
        arguments(kind, given)


# -- a lane ------------------------------------------------------------------------------


def _here() -> Answer:
    """An answer saying which thread gave it."""
    return Answer("ok", {"thread": threading.current_thread()})


def _ran_on(lane: Lane) -> threading.Thread:
    """The thread that runs a quick call on ``lane`` now."""
    thread: threading.Thread = lane.run(_here, time.monotonic() + WAIT_S).data["thread"]
    return thread


def _boom() -> Answer:
    raise RuntimeError("boom")


class _Stuck:
    """Work that outlives its deadline: it notes its thread, then runs until released."""

    def __init__(self) -> None:
        self.started, self.release = threading.Event(), threading.Event()
        self.thread: threading.Thread | None = None

    def __call__(self) -> Answer:
        self.thread = threading.current_thread()
        self.started.set()
        self.release.wait(WAIT_S)
        return _here()


def test_successive_calls_run_on_one_long_lived_worker() -> None:
    lane = Lane("t")
    try:
        first = _ran_on(lane)
        assert [_ran_on(lane) for _ in range(3)] == [first] * 3 and lane.workers() == 1
        with pytest.raises(RuntimeError, match="boom"):  # a failure reaches the caller...
            lane.run(_boom, time.monotonic() + WAIT_S)
        assert _ran_on(lane) is first  # ...and the worker goes on
    finally:
        lane.close()
    first.join(WAIT_S)
    assert not first.is_alive()  # closed: the worker exits
    with pytest.raises(RuntimeError):
        lane.run(_here, time.monotonic() + WAIT_S)


def test_a_call_stuck_past_its_deadline_holds_up_no_later_call() -> None:
    lane, stuck = Lane("t"), _Stuck()
    try:
        first = _ran_on(lane)
        with pytest.raises(TimeoutError):
            lane.run(stuck, time.monotonic() + STUCK_S)
        assert stuck.thread is first and first.is_alive()  # it runs on, left to finish
        fresh = _ran_on(lane)  # the next call: a new worker, while the stuck one still runs
        assert fresh is not first and not stuck.release.is_set()
        assert _ran_on(lane) is fresh and lane.workers() == 2
        stuck.release.set()
        first.join(WAIT_S)
        assert not first.is_alive() and lane.workers() == 1  # it exited once its call was done
        assert _ran_on(lane) is fresh
    finally:
        stuck.release.set()
        lane.close()


def test_a_call_queued_behind_a_stuck_one_is_answered_by_the_next_worker() -> None:
    lane, stuck = Lane("t"), _Stuck()
    outcome: queue.Queue[Any] = queue.Queue()

    def ask() -> None:
        try:
            outcome.put(lane.run(stuck, time.monotonic() + STUCK_S))
        except Exception as exc:
            outcome.put(exc)

    asking = threading.Thread(target=ask)
    try:
        first = _ran_on(lane)
        asking.start()
        assert stuck.started.wait(WAIT_S)
        behind = _ran_on(lane)  # queued while the stuck call runs: waits for its deadline only
        assert isinstance(outcome.get(timeout=WAIT_S), TimeoutError)
        assert behind is not first and not stuck.release.is_set()
    finally:
        stuck.release.set()
        asking.join(WAIT_S)
        lane.close()


def test_a_lane_keeps_at_most_its_workers_and_is_taken_back_when_one_finishes() -> None:
    lane, calls = Lane("t", max_workers=2), [_Stuck(), _Stuck()]
    try:
        for stuck in calls:
            with pytest.raises(TimeoutError):
                lane.run(stuck, time.monotonic() + STUCK_S)
        first, second = (stuck.thread for stuck in calls)
        assert first is not None and second is not None and first is not second
        assert lane.workers() == 2
        dropped = _Stuck()
        with pytest.raises(TimeoutError):  # no worker free: it waits, dropped at its deadline
            lane.run(dropped, time.monotonic() + 0.2)
        calls[0].release.set()
        assert _ran_on(lane) is first  # the first worker to finish takes the lane back
        assert dropped.thread is None  # the dropped call never ran
        calls[1].release.set()
        second.join(WAIT_S)
        assert not second.is_alive() and lane.workers() == 1
    finally:
        for stuck in calls:
            stuck.release.set()
        lane.close()


# -- the runner, on a server's State -----------------------------------------------------


def test_the_runner_answers_and_fails_open(state: State, monkeypatch: pytest.MonkeyPatch) -> None:
    runner = state.hooks
    told = runner.call("observe_prompt", {"prompt": "which auth?", "session_id": "s1"})
    assert told.text == "{}" and told.structured is not None  # nothing to recall: silent
    assert state.session.id == "s1"
    assert runner.call("observe_prompt", {"prompt": ["not", "text"]}) == Reply("{}", None)
    assert runner.call("no_such_hook", {}) == Reply("{}", None)

    def broken(env: Env, args: TurnArgs) -> Answer:
        raise RuntimeError("the checkpoint broke")

    monkeypatch.setattr(hook_tools, "do_checkpoint_turn", broken)
    assert runner.call("checkpoint_turn", {"session_id": "s1"}) == Reply("{}", None)


def test_a_stuck_prompt_answers_at_its_deadline_and_the_next_prompt_is_answered(
    state: State, monkeypatch: pytest.MonkeyPatch
) -> None:
    stuck, real = _Stuck(), hook_tools.do_observe_prompt

    def first_stuck(env: Env, args: PromptArgs) -> Answer:
        if stuck.thread is None:
            stuck()
        return real(env, args)

    monkeypatch.setattr(hook_tools, "do_observe_prompt", first_stuck)
    runner = state.hooks
    runner.deadline_s = STUCK_S
    try:
        assert runner.call("observe_prompt", {"prompt": "one"}) == Reply("{}", None)
        answered = runner.call("observe_prompt", {"prompt": "two"})
        assert answered.structured is not None and not stuck.release.is_set()
    finally:
        stuck.release.set()
    assert stuck.thread is not None
    stuck.thread.join(WAIT_S)
    assert not stuck.thread.is_alive()


# -- through the front -------------------------------------------------------------------


class _Client:
    """The front's stdout: every message it writes, in order."""

    def __init__(self) -> None:
        self.messages: queue.Queue[dict[str, Any]] = queue.Queue()

    def write(self, line: bytes) -> int:
        self.messages.put(json.loads(line))
        return len(line)

    def flush(self) -> None:
        pass

    def answer(self, ident: int) -> dict[str, Any]:
        while (message := self.messages.get(timeout=WAIT_S)).get("id") != ident:
            continue
        return message


def _line(ident: int, method: str, params: dict[str, Any]) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": ident, "method": method, "params": params}).encode()


def test_successive_prompts_through_the_front_share_one_thread_and_connection(
    tmp_path: Path, mama_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each prompt once started a thread, and so opened a store connection, of its own."""
    from mama_plugin.server.front import Front

    def no_model(config: Config) -> Any:
        raise EmbeddingError("no embedding model in this test (keywords only)")

    seen: list[tuple[threading.Thread, Any]] = []
    real = hook_tools.do_observe_prompt

    def noting(env: Env, args: PromptArgs) -> Answer:
        seen.append((threading.current_thread(), env.store.conn))
        return real(env, args)

    monkeypatch.setattr(preload, "load_model", no_model)
    monkeypatch.setattr(hook_tools, "do_observe_prompt", noting)
    client = _Client()
    front = Front(io.BytesIO(), client, Config(mama_home), "/work/lane", tmp_path / "mama.db")
    hello = {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "claude-code", "version": "1"},
    }
    try:
        front.handle(_line(1, "initialize", hello))
        assert client.answer(1)["result"]["serverInfo"]["name"] == "mama"
        for ident, prompt in (
            (2, "which auth scheme for the tokens?"),
            (3, "and the cache eviction policy?"),
        ):
            call = {"name": "observe_prompt", "arguments": {"prompt": prompt, "session_id": "s"}}
            front.handle(_line(ident, "tools/call", call))
            assert client.answer(ident)["result"]["isError"] is False
    finally:
        assert front.finish(WAIT_S)
    (first, first_conn), (second, second_conn) = seen
    assert first is second and first.name.startswith("mama-hook-observe_prompt")
    assert first_conn is second_conn


def test_the_hook_lanes_start_without_pydantic_or_the_storys_services(
    mama_home: Path, tmp_path: Path
) -> None:
    import subprocess
    import sys

    # What the front's warm-up builds before the first hook call may wait on it.
    probe = (
        "import json, sys; from mama_plugin.config import Config; "
        "from mama_plugin.server.state import State; "
        f"s = State(Config(), {str(tmp_path)!r}, None); s.store; s.hooks; "
        "print(json.dumps(sorted(sys.modules))); s.close()"
    )
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    modules = set(json.loads(proc.stdout.splitlines()[-1]))
    assert not {m.split(".")[0] for m in modules} & {"pydantic", "mcp", "jinja2"}
    assert "mama_plugin.services.story.briefing" not in modules  # loaded on a session's use
