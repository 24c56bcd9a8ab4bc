"""Real Claude Code, fake model: every tool a turn needs is on that turn's first request.

Claude Code (2.1.197) builds a turn's first request before its prompt's hooks run, so a tool
listed in reaction to a turn's own prompt arrives too late for it; a tool call that grows the
list is answered after Claude Code has listed the tools again, so its next request has them.
These scenarios check the first request of each turn: a plugin command typed verbatim
(`/mama:outcome`), the user story of the trial ("the load test failed … move us to Redis
sessions"), a decision saved in a new project whose outcome is reported in the same session,
and a memory forgotten through ``more_tools`` in the very turn that asks.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import signal
import subprocess
from pathlib import Path
from typing import Any

from fake_anthropic import FakeAnthropic, claude_env, text, tool_use
from test_claude_code import (
    CLAUDE,
    JWT,
    ROOT,
    SERVER,
    needs_claude,
    result_of,
    run_claude,
    tool_names,
)
from test_claude_code_hooks import SESSIONS, saved_id, sent

from mama_plugin.config import Config
from mama_plugin.storage import Store

pytestmark = needs_claude
T = f"{SERVER}__"
OUTCOME, SAVE, MORE = T + "evolve_outcome", T + "save_decision", T + "more_tools"
FIRST_LIST_BUDGET = 4000  # tokens (4 characters each) of MAMA's tools in a first request
TURN_TIMEOUT_S = 120


def run_turns(
    script: list[dict[str, Any]], prompts: list[str], workdir: Path
) -> list[list[dict[str, Any]]]:
    """One Claude Code session of several turns (stream-json); each turn's model requests."""
    home, project = workdir / "home", workdir / "project"
    home.mkdir(exist_ok=True)
    project.mkdir(exist_ok=True)
    command = [str(CLAUDE), "-p", "--input-format", "stream-json", "--output-format",
               "stream-json", "--verbose", "--plugin-dir", str(ROOT), "--allowedTools", SERVER]  # fmt: skip
    starts: list[int] = []
    with FakeAnthropic(script) as fake:
        proc = subprocess.Popen(command, cwd=project, env=claude_env(fake, home), text=True,
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL, start_new_session=True)  # fmt: skip
        assert proc.stdin is not None and proc.stdout is not None
        try:
            for words in prompts:
                starts.append(len(fake.main_requests))
                line = {"type": "user", "message": {"role": "user", "content": words}}
                proc.stdin.write(json.dumps(line) + "\n")
                proc.stdin.flush()
                for out in proc.stdout:  # bounded by the fake's script and Claude Code's own end
                    if json.loads(out).get("type") == "result":
                        break
                else:
                    raise AssertionError("Claude Code ended without a result")
            proc.stdin.close()
            proc.wait(timeout=TURN_TIMEOUT_S)
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)
            for pipe in (proc.stdin, proc.stdout):
                with contextlib.suppress(OSError):
                    pipe.close()
        requests = fake.main_requests
    return [requests[a:b] for a, b in itertools.pairwise([*starts, len(requests)])]


def _listed(request: dict[str, Any]) -> set[str]:
    return {n for n in tool_names(request) if n.startswith(SERVER)}


def _tokens(request: dict[str, Any]) -> float:
    """MAMA's tools in one request body, in tokens of 4 characters: what the model reads."""
    return len(json.dumps([t for t in request["tools"] if t["name"].startswith(SERVER)])) / 4


def test_outcome_command_and_the_trials_failure_report_find_their_tools(
    tmp_path: Path, mama_home: Path
) -> None:
    # Session 1: a decision is saved.
    fake = run_claude([tool_use(T + "save_decision", JWT), text("Saved.")],
                      "Record our API auth decision", tmp_path, "save")  # fmt: skip
    jwt = saved_id(fake.main_requests[1], T + "save_decision")

    # Session 2, the trial's turn: a failure reported and a move to the replacement.
    failed = {
        "memory_id": jwt,
        "outcome": "FAILED",
        "details": "JWT refresh fell over at 10K req/s",
    }
    fake = run_claude(
        [tool_use(OUTCOME, failed), tool_use(SAVE, {**SESSIONS, "supersedes": jwt}),
         text("Recorded, and auth moves to Redis sessions.")],
        "The load test failed: JWT refresh fell over at 10K req/s. Record that and move us to "
        "Redis sessions.", tmp_path, "fail and move")  # fmt: skip
    first = _listed(fake.main_requests[0])
    assert {OUTCOME, SAVE, T + "search_by_topic", MORE} <= first, sorted(first)
    assert _tokens(fake.main_requests[0]) <= FIRST_LIST_BUDGET
    assert not result_of(fake.main_requests[1], OUTCOME)["is_error"]
    sessions = saved_id(fake.main_requests[2], SAVE)

    # Session 3: the plugin command typed verbatim; its tool is on the first request.
    prompt = f"/mama:outcome {sessions} SUCCESS p99 41 ms at 10K req/s in production"
    succeeded = {"memory_id": sessions, "outcome": "SUCCESS", "details": "p99 41 ms at 10K req/s"}
    fake = run_claude(
        [tool_use(OUTCOME, succeeded), text("Recorded.")], prompt, tmp_path, "outcome"
    )
    assert "Record the outcome of a decision in MAMA" in sent(fake.main_requests[0])  # the command
    assert OUTCOME in _listed(fake.main_requests[0])
    answer = result_of(fake.main_requests[1], OUTCOME)
    assert not answer["is_error"], answer["text"]

    with Store.open(config=Config(mama_home)) as store:
        old, new = store.memories.require(jwt), store.memories.require(sessions)
    assert (old.status, old.outcome_status) == ("superseded", "FAILED")
    assert (new.status, new.outcome_status) == ("current", "SUCCESS")


def test_a_new_projects_first_decision_brings_its_tools_to_the_next_turn(
    tmp_path: Path, mama_home: Path
) -> None:
    script = [
        tool_use(T + "save_decision", JWT), text("Saved."),  # turn 1
        text("Recorded that; which replacement?"),  # turn 2 (its first request is checked)
    ]  # fmt: skip
    turns = run_turns(script, [
        "Should the API use JWT or sessions? Go with JWT and save it.",
        "The load test failed: JWT refresh fell over at 10K req/s. Move us to Redis sessions.",
    ], tmp_path)  # fmt: skip
    first, second = turns[0][0], turns[1][0]
    assert OUTCOME in _listed(first) and T + "search_by_topic" not in _listed(first)  # the core
    assert {OUTCOME, SAVE, T + "search_by_topic"} <= _listed(second)
    lists = [sorted(_listed(r)) for turn in turns for r in turn]
    assert sum(1 for a, b in itertools.pairwise(lists) if a != b) == 1  # one change


def test_a_tool_the_first_list_leaves_out_is_one_call_away_in_the_same_turn(
    tmp_path: Path, mama_home: Path
) -> None:
    fake = run_claude([tool_use(SAVE, JWT), text("Saved.")], "Record our API auth decision",
                      tmp_path, "save")  # fmt: skip
    jwt = saved_id(fake.main_requests[1], SAVE)
    forget = T + "forget_memory"
    fake = run_claude(
        [tool_use(MORE, {}), tool_use(forget, {"memory_id": jwt}), text("Forgotten.")],
        f"Forget {jwt}: that decision was never made.", tmp_path, "forget")  # fmt: skip
    first, second = fake.main_requests[:2]
    assert forget not in _listed(first) and MORE in _listed(first)
    assert _tokens(first) <= FIRST_LIST_BUDGET
    assert forget in _listed(second)  # more_tools answered after Claude Code listed again
    answer = result_of(fake.main_requests[2], forget)
    assert not answer["is_error"], answer["text"]
    with Store.open(config=Config(mama_home)) as store:
        assert store.memories.get(jwt) is None
