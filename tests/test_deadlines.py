"""Hook deadlines hold while another process holds the database's write lock (issue 14).

An import, a backup or another session's long transaction can hold SQLite's write lock for
seconds. The hooks must still answer inside Claude Code's hook timeouts (hooks/hooks.json):
a hook answered late is dropped, and the prompt waited for nothing. These tests hold the lock
for 20 s from another process and drive the real front over stdio (and the SessionStart
command hook through its launcher) meanwhile, with a write tool waiting for the lock beside
the hooks, as a model's save would.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from mama_plugin.config import Config
from mama_plugin.project import project_key
from mama_plugin.services.saving.memories import save_decision
from mama_plugin.storage import Store

ROOT = Path(__file__).resolve().parents[1]
HOLD_S = 20.0
HOOKS = json.loads((ROOT / "hooks" / "hooks.json").read_text())["hooks"]


def _timeout_s(event: str) -> float:
    """Claude Code's timeout for ``event``'s hook, from hooks/hooks.json."""
    return float(HOOKS[event][0]["hooks"][0]["timeout"])


class Pipelined:
    """The front as Claude Code runs it, spoken to without waiting: answers carry their time."""

    def __init__(self, env: dict[str, str], cwd: Path) -> None:
        self.proc = subprocess.Popen(["sh", str(ROOT / "bin" / "mama-server")], env=env, cwd=cwd,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, text=True)  # fmt: skip
        self.sent: dict[int, tuple[str, float]] = {}
        self.answers: queue.Queue[tuple[int, float, dict[str, Any]]] = queue.Queue()
        self.next_id = 0
        self.answered: dict[int, float] = {}  # seconds from sending to the answer
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            message = json.loads(line)
            if "id" in message:
                self.answers.put((message["id"], time.monotonic(), message))

    def send(self, method: str, params: dict[str, Any], label: str = "") -> int:
        self.next_id += 1
        self.sent[self.next_id] = (label or method, time.monotonic())
        line = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(line) + "\n")
        self.proc.stdin.flush()
        return self.next_id

    def call(self, tool: str, arguments: dict[str, Any]) -> int:
        return self.send("tools/call", {"name": tool, "arguments": arguments}, tool)

    def collect(self, idents: set[int], within_s: float) -> dict[int, tuple[float, dict]]:
        """The answers to ``idents`` as (seconds after sending, message); bounded wait."""
        got: dict[int, tuple[float, dict]] = {}
        deadline = time.monotonic() + within_s
        while idents - got.keys() and (left := deadline - time.monotonic()) > 0:
            try:
                ident, at, message = self.answers.get(timeout=left)
            except queue.Empty:
                break
            got[ident] = (at - self.sent[ident][1], message)
            self.answered[ident] = got[ident][0]
        return got

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        assert self.proc.stdout is not None
        self.proc.stdout.close()


def _hold_write_lock(db: Path, seconds: float) -> subprocess.Popen[str]:
    """Another process takes the write lock (BEGIN IMMEDIATE) and keeps it ``seconds``."""
    code = (
        "import sqlite3, sys, time\n"
        f"c = sqlite3.connect({str(db)!r}, isolation_level=None)\n"
        "c.execute('BEGIN IMMEDIATE')\n"
        "print('locked', flush=True)\n"
        f"time.sleep({seconds})\n"
        "c.execute('COMMIT')\n"
    )
    holder = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
    return holder


def test_hooks_answer_within_their_deadlines_while_another_process_holds_the_lock(
    tmp_path: Path, mama_home: Path
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    with Store.open(config=Config(mama_home)) as store:
        save_decision(store, project_key(project), {
            "topic": "auth_strategy", "decision": "Use JWT access tokens for API auth",
            "reasoning": "no session store to run on the two API nodes"})  # fmt: skip
    transcript = tmp_path / "transcript.jsonl"
    transcript.write_text(json.dumps({"type": "user", "message": {"role": "user",
                                      "content": "Should we use JWT?"}}) + "\n")  # fmt: skip
    prompt = {"prompt": "Should the API use JWT tokens for auth?", "session_id": "s1",
              "transcript_path": str(transcript)}  # fmt: skip
    turn = {"session_id": "s1", "transcript_path": str(transcript), "cwd": str(project),
            "last_assistant_message": "Kept JWT. Next: token rotation.",
            "stop_hook_active": "false"}  # fmt: skip
    env = {**os.environ, "MAMA_HOME": str(mama_home), "PYTHONPATH": str(ROOT)}
    env.pop("MAMA_TURN_WAIT_S", None)
    front = Pipelined(env, project)
    try:
        front.send(
            "initialize",
            {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "claude-code", "version": "test"},
            },
        )
        warm = front.call("observe_prompt", prompt)  # the server is warm before the lock
        assert warm in front.collect({warm}, 60)
        holder = _hold_write_lock(mama_home / "mama.db", HOLD_S)
        locked_at = time.monotonic()
        timed: list[tuple[int, float]] = []  # (request, Claude Code's timeout for it)
        session_start: list[tuple[float, subprocess.CompletedProcess[str]]] = []
        for round_ in range(3):
            # A write tool waits for the lock (the configured busy timeout) beside the hooks.
            front.call(
                "save_decision",
                {
                    "topic": f"cache_{round_}",
                    "decision": "Use Redis",
                    "reasoning": "sessions must survive a restart",
                },
            )
            time.sleep(0.2)
            timed.append((front.call("observe_prompt", prompt), _timeout_s("UserPromptSubmit")))
            timed.append((front.send("ping", {}), _timeout_s("UserPromptSubmit")))
            timed.append((front.call("checkpoint_turn", turn), _timeout_s("Stop")))
            if round_ == 0:  # the SessionStart command hook, meanwhile
                event = json.dumps({"session_id": "s2", "cwd": str(project), "source": "startup",
                                    "hook_event_name": "SessionStart"})  # fmt: skip
                started = time.monotonic()
                ran = subprocess.run(["sh", str(ROOT / "bin" / "mama-hook"), "session-start"],
                                     input=event, capture_output=True, text=True, env=env,
                                     cwd=project, timeout=60)  # fmt: skip
                session_start.append((time.monotonic() - started, ran))
            front.collect({i for i, _ in timed} - front.answered.keys(), 30)
            assert {i for i, _ in timed} <= front.answered.keys(), "a hook call went unanswered"
            time.sleep(1.0)
        still_locked = holder.poll() is None
        answered_by = time.monotonic() - locked_at
        holder.wait(timeout=HOLD_S + 30)
        assert holder.stdout is not None
        holder.stdout.close()
    finally:
        front.close()
    late = [(front.sent[i][0], round(front.answered[i], 2), limit)
            for i, limit in timed if front.answered[i] >= limit]  # fmt: skip
    assert not late, f"answered after Claude Code's hook timeout: {late}"
    assert still_locked and answered_by < HOLD_S, "the lock was released before the hooks ran"
    took, ran = session_start[0]
    assert ran.returncode == 0 and took < _timeout_s("SessionStart"), (took, ran.stderr)
    assert not ran.stdout or "hookSpecificOutput" in json.loads(ran.stdout)
