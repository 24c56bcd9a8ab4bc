"""Real Claude Code, fake model: the hooks, the slash commands and dynamic tools, end to end.

Each scenario runs several `claude -p` sessions in one project (one HOME, one MAMA_HOME), the
way a user would, and asserts on the request bodies Claude Code sent the model: what the
SessionStart and UserPromptSubmit hooks injected, what the tools answered, which tools were
listed. See tests/test_claude_code.py for the harness and tests/fake_anthropic.py for the model.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

from conftest import FAILED
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

from mama_plugin.config import Config
from mama_plugin.embeddings.cards import CARDS
from mama_plugin.project import project_key
from mama_plugin.server.catalogue import CORE
from mama_plugin.storage import Store

pytestmark = needs_claude
T = f"{SERVER}__"
SESSIONS = {"topic": "auth_strategy", "decision": "Server-side sessions in Redis for API auth",
            "reasoning": "refresh without a DB round trip: p99 41 ms at 10K req/s",
            "tension": {"risks": ["Redis is a single point of failure until HA"]},
            "next_steps": [{"step": "Set up Redis Sentinel", "priority": "HIGH"}]}  # fmt: skip


def sent(request: dict[str, Any]) -> str:
    """Everything the model was shown in one request, as one string."""
    return json.dumps([request.get("system"), request["messages"]], ensure_ascii=False)


def injected(request: dict[str, Any], event: str) -> str:
    """The additional context a hook of ``event`` put into the request ("" if none)."""
    for message in request["messages"]:
        content = message.get("content")
        blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
        for block in blocks:
            body = block.get("text", "") if isinstance(block, dict) else ""
            if f"{event} hook additional context" in body:
                return str(body)
    return ""


def saved_id(request: dict[str, Any], tool: str) -> str:
    answer = result_of(request, tool)
    assert not answer["is_error"], answer["text"]
    return answer["text"].split()[2]  # "Saved decision dec_… on '…'."


def static_tools() -> None:
    Config().set("dynamic_tools", "force_static")


def test_decision_failure_and_supersession_come_back_as_the_cliffhanger(
    tmp_path: Path, mama_home: Path
) -> None:
    static_tools()
    fake = run_claude([tool_use(T + "save_decision", JWT), text("Saved.")],
                      "Record our API auth decision: JWT", tmp_path, "save")  # fmt: skip
    jwt = saved_id(fake.main_requests[1], T + "save_decision")
    fake = run_claude([
        tool_use(T + "evolve_outcome", {"memory_id": jwt, **FAILED}),
        tool_use(T + "evolve_supersede", {**SESSIONS, "supersedes": jwt}),
        text("JWT failed at 10K req/s; replaced by Redis sessions. Next: set up Sentinel.")],
        "JWT failed the load test, switch to sessions", tmp_path, "fail+supersede")  # fmt: skip
    assert not result_of(fake.main_requests[1], T + "evolve_outcome")["is_error"]
    sessions = saved_id(fake.main_requests[2], T + "evolve_supersede")
    # A new session: SessionStart carries the cliffhanger and the evolution.
    fake = run_claude([text("Picking up.")], "hello", tmp_path, "next session")
    story = injected(fake.main_requests[0], "SessionStart")
    assert "What I did" in story and "switch to sessions" in story  # the Stop checkpoint
    assert f"{sessions} [auth_strategy]: Server-side sessions in Redis" in story
    assert f"({jwt}) (" in story and "FAILED: token refresh hit the DB" in story
    with Store.open(config=Config(mama_home)) as store:
        [cp] = [m for m in store.memories.recent(type="checkpoint") if m.metadata.get("auto")][:1]
        assert cp.project == project_key(tmp_path / "project")


def test_related_prompts_get_memory_and_unrelated_prompts_nothing(tmp_path: Path) -> None:
    static_tools()
    fake = run_claude([tool_use(T + "save_decision", JWT), text("Saved.")],
                      "Record our API auth decision", tmp_path, "save")  # fmt: skip
    jwt = saved_id(fake.main_requests[1], T + "save_decision")
    fake = run_claude([text("Let me check.")], "Should the new API use JWT tokens for auth?",
                      tmp_path, "related")  # fmt: skip
    # The session start already told the decision: the related prompt does not repeat it
    # (tests/test_claude_code_recall.py shows a related prompt recalling what the start left out).
    assert jwt in injected(fake.main_requests[0], "SessionStart")
    assert jwt not in injected(fake.main_requests[0], "UserPromptSubmit")
    assert sent(fake.main_requests[0]).count(jwt) >= 1
    fake = run_claude([text("Fixed.")], "fix the typo in the README", tmp_path, "unrelated")
    assert injected(fake.main_requests[0], "UserPromptSubmit") == ""
    # The only fenced memory is the session start's.
    assert sent(fake.main_requests[0]).count("<mama-memory>") == 1
    assert "<mama-memory>" in injected(fake.main_requests[0], "SessionStart")


def test_the_stop_checkpoint_comes_back_through_mama_resume_typed_verbatim(
    tmp_path: Path,
) -> None:
    run_claude([text("Moved refresh to Redis sessions. Next: set up Sentinel for HA.")],
               "Move token refresh to Redis sessions", tmp_path, "work")  # fmt: skip
    home = tmp_path / "home"
    assert (home / ".claude" / "commands" / "mama-resume.md").exists()  # written at start
    fake = run_claude([tool_use("Skill", {"skill": "mama:resume"}),
                       tool_use(T + "load_checkpoint", {}), text("Here is where we were.")],
                      "/mama-resume", tmp_path, "resume")  # fmt: skip
    first = sent(fake.main_requests[0])
    assert "Skill" in tool_names(fake.main_requests[0]) and "mama:resume" in first
    assert "Launching skill: mama:resume" in result_of(fake.main_requests[1], "Skill")["text"]
    assert "load_checkpoint" in sent(fake.main_requests[1])  # the plugin command's body
    loaded = result_of(fake.main_requests[2], T + "load_checkpoint")
    assert not loaded["is_error"], loaded["text"]
    # The session start told the checkpoint; load_checkpoint adds only what it left out.
    start = injected(fake.main_requests[0], "SessionStart")
    assert "Move token refresh to Redis sessions" in start and "set up Sentinel for HA" in start
    assert loaded["text"].startswith("The session start told all of chk_"), loaded["text"]


def test_mama_save_and_mama_configure_work_verbatim(tmp_path: Path, mama_home: Path) -> None:
    run_claude([text("Hi.")], "hello", tmp_path, "install aliases")
    fake = run_claude([tool_use("Skill", {"skill": "mama:save", "args": "the auth decision"}),
                       tool_use(T + "save_decision", JWT), text("Saved.")],
                      "/mama-save the auth decision", tmp_path, "save")  # fmt: skip
    assert "Launching skill: mama:save" in result_of(fake.main_requests[1], "Skill")["text"]
    assert "reasoning.primary" in sent(fake.main_requests[1])  # save.md's instructions
    saved_id(fake.main_requests[2], T + "save_decision")
    command = f'sh "{ROOT}/bin/mama" config set relevance_bar 0.6'
    fake = run_claude([tool_use("Skill", {"skill": "mama:configure", "args": "relevance_bar 0.6"}),
                       tool_use("Bash", {"command": command, "description": "Set the bar"}),
                       text("Done.")], "/mama-configure relevance_bar 0.6", tmp_path, "configure")  # fmt: skip
    # What the model reads of each embedding model is its card's (embeddings/cards.py).
    shown = " ".join(sent(fake.main_requests[1]).replace("\\n", " ").split())
    assert all(" ".join(card.configure.split()) in shown for card in CARDS), shown[:2000]
    ran = result_of(fake.main_requests[2], "Bash")
    assert not ran["is_error"], ran["text"]  # allowed by the alias's frontmatter alone
    assert "relevance_bar = 0.6" in ran["text"]
    assert Config(mama_home).get("relevance_bar") == 0.6
    with Store.open(config=Config(mama_home)) as store:
        assert [m.content for m in store.memories.by_topic("auth_strategy")] == [JWT["decision"]]


def test_dynamic_exposure_grows_the_tool_list_once_and_it_is_counted(tmp_path: Path) -> None:
    # A new project lists the core; its first decision makes the search and link tools
    # possible: the list grows once, to every tool, seen from the next request (the save is
    # answered after Claude Code has listed the tools again).
    search = tool_use(T + "search_by_context", {"query": "auth outcome"})
    fake = run_claude([tool_use(T + "save_decision", JWT), search, search, text("Recorded.")],
                      "Record our API auth decision: JWT, and check what we know about auth",
                      tmp_path, "dynamic")  # fmt: skip
    lists = [sorted(n for n in tool_names(r) if n.startswith(SERVER)) for r in fake.main_requests]
    changes = sum(1 for a, b in itertools.pairwise(lists) if a != b)
    print(f"tool lists over {len(lists)} requests: {changes} change(s): {lists[0]} → {lists[-1]}")
    assert lists[0] == sorted(T + n for n in CORE)
    assert T + "evolve_supersede" in lists[-1] and set(lists[0]) < set(lists[-1])  # expand-only
    assert changes == 1 and lists[1] == lists[-1]  # the save's next request has the new list


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError, IndexError):
                stat = (entry / "stat").read_text()
                if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                    found.append(int(entry.name))
    return found


def _server_pid(claude_pid: int) -> int:
    for child in _children(claude_pid):
        with contextlib.suppress(OSError):
            if b"serve" in (Path("/proc") / str(child) / "cmdline").read_bytes():
                return child
    raise AssertionError("no MCP server process under Claude Code")


def test_a_killed_server_never_stalls_a_prompt(tmp_path: Path) -> None:
    static_tools()
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    project.mkdir()
    command = [str(CLAUDE), "-p", "--input-format", "stream-json", "--output-format",
               "stream-json", "--verbose", "--plugin-dir", str(ROOT), "--allowedTools", SERVER]  # fmt: skip
    with FakeAnthropic(
        [tool_use(T + "save_decision", JWT), text("Saved."), text("Still here.")]
    ) as fake:
        proc = subprocess.Popen(command, cwd=project, env=claude_env(fake, home), text=True,
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, start_new_session=True)  # fmt: skip
        assert proc.stdin is not None and proc.stdout is not None

        def prompt(words: str) -> float:
            started = time.monotonic()
            line = {"type": "user", "message": {"role": "user", "content": words}}
            proc.stdin.write(json.dumps(line) + "\n")  # type: ignore[union-attr]
            proc.stdin.flush()  # type: ignore[union-attr]
            for out in proc.stdout:  # type: ignore[union-attr]
                if json.loads(out).get("type") == "result":
                    return time.monotonic() - started
            raise AssertionError("Claude Code ended without a result")

        try:
            prompt("Record our API auth decision")
            os.kill(_server_pid(proc.pid), signal.SIGKILL)
            elapsed = prompt("Should the new API use JWT tokens for auth?")
            proc.stdin.close()
            proc.wait(timeout=60)
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)
            for pipe in (proc.stdin, proc.stdout, proc.stderr):
                with contextlib.suppress(OSError):
                    pipe.close()  # type: ignore[union-attr]
    print(f"second prompt with the server dead: {elapsed:.2f} s")
    last = fake.main_requests[-1]
    assert "Should the new API use JWT tokens for auth?" in sent(last)  # the prompt went through
    assert injected(last, "UserPromptSubmit") == ""  # the hook failed open
    assert elapsed < 30  # far from the hooks' 5 s + 10 s timeouts stacking up


def test_installed_from_the_marketplace_the_hooks_run(tmp_path: Path, mama_home: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    project.mkdir()
    plain = {"HOME": str(home), "PATH": os.environ.get("PATH", ""), "DISABLE_AUTOUPDATER": "1",
             "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_TELEMETRY": "1"}  # fmt: skip
    for step in (["marketplace", "add", str(ROOT)], ["install", "mama@mama"], ["list"]):
        done = subprocess.run([str(CLAUDE), "plugin", *step], capture_output=True, text=True,
                              env=plain, timeout=120)  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr
    assert "mama@mama" in done.stdout and "enabled" in done.stdout
    with Store.open(config=Config(mama_home)) as store:
        from mama_plugin.services.saving.memories import save_decision

        save_decision(store, project_key(project), JWT)
    with FakeAnthropic([text("Hello.")]) as fake:
        proc = subprocess.run([str(CLAUDE), "-p", "hello"], cwd=project, env=claude_env(fake, home),
                              capture_output=True, text=True, timeout=120)  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    story = injected(fake.main_requests[0], "SessionStart")
    assert "Use stateless JWT access tokens for API auth" in story  # no --plugin-dir: installed
