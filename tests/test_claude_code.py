"""Real Claude Code, fake model: the plugin as Claude Code loads it, end to end.

`claude -p` runs with ``--plugin-dir`` on this repository, so Claude Code itself starts
``mama serve`` from ``.mcp.json``, lists its tools to the model and calls them. The model is
tests/fake_anthropic.py: each request of the agent loop gets the next scripted reply (a tool
call, then a closing text), and every request body is kept, so the tests read exactly what
Claude Code sent the model — the tool list, the server's instructions, the tool results.
Claude Code comes from npm into .tools/ (scripts/setup.sh --dev); nothing leaves 127.0.0.1.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from fake_anthropic import FakeAnthropic, claude_env, text, tool_use

from mama_plugin.config import Config
from mama_plugin.project import project_key
from mama_plugin.server.catalogue import CORE
from mama_plugin.storage import Store

ROOT = Path(__file__).resolve().parents[1]
CLAUDE = ROOT / ".tools" / "node_modules" / ".bin" / "claude"
SERVER = "mcp__plugin_mama_mama"  # Claude Code's name for plugin mama's server mama
SAVE, SEARCH = f"{SERVER}__save_decision", f"{SERVER}__search_by_context"
RUN_TIMEOUT_S = 120
JWT = {
    "topic": "auth_strategy",
    "decision": "Use stateless JWT access tokens for API auth",
    "reasoning": "no session store to run: the API must serve 10K req/s on two nodes",
}

needs_claude = pytest.mark.skipif(
    not CLAUDE.exists() and shutil.which("npm") is None,
    reason="no Claude Code in .tools/ and no npm to install it: scripts/setup.sh --dev "
    "installs @anthropic-ai/claude-code with npm",
)


def run_claude(
    script: list[dict[str, Any]], prompt: str, workdir: Path, label: str
) -> FakeAnthropic:
    """One `claude -p` session against a scripted model; the stopped fake keeps its log."""
    # Setup problems go through pytest.fail, not AssertionError, so the xfail cannot hide them.
    if not CLAUDE.exists():
        pytest.fail("run scripts/setup.sh --dev: it installs Claude Code into .tools/")
    if not (ROOT / ".venv" / "bin" / "python").exists():
        pytest.fail("run scripts/setup.sh: bin/mama-server (.mcp.json) runs this checkout's .venv")
    home, project = workdir / "home", workdir / "project"
    home.mkdir(exist_ok=True)
    project.mkdir(exist_ok=True)
    command = [str(CLAUDE), "-p", prompt, "--plugin-dir", str(ROOT), "--allowedTools", SERVER]
    with FakeAnthropic(script) as fake:
        started = time.monotonic()
        proc = subprocess.Popen(command, cwd=project, env=claude_env(fake, home), stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                start_new_session=True)  # fmt: skip
        try:
            out, err = proc.communicate(timeout=RUN_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):  # Claude Code and its server
                os.killpg(proc.pid, signal.SIGKILL)
            out, err = proc.communicate()
            pytest.fail(f"claude -p ran over {RUN_TIMEOUT_S} s\nstdout: {out}\nstderr: {err}")
        elapsed = time.monotonic() - started
    print(f"claude -p ({label}): {elapsed:.2f} s wall, {len(fake.main_requests)} model requests")
    if proc.returncode != 0:
        pytest.fail(f"claude -p exited {proc.returncode}\nstdout: {out}\nstderr: {err}")
    if any(CLOSED in json.dumps(r) for r in fake.main_requests):
        pytest.fail(f"MAMA's server closed the connection during a call\n{server_logs(home)}")
    return fake


CLOSED = "MCP error -32000: Connection closed"  # Claude Code's result for a call the server dropped


def server_logs(home: Path) -> str:
    """The ends of MAMA's server log and of Claude Code's log of the MCP server, for a failure."""
    mama = Path(os.environ.get("MAMA_HOME") or home / ".mama")
    logs = [
        *sorted(mama.glob("logs/server.log*")),
        *sorted(home.glob(".cache/claude-cli-nodejs/*/mcp-logs-*/*")),
    ]
    return "\n".join(
        f"--- {p}\n{p.read_text(errors='replace')[-6000:]}" for p in logs if p.is_file()
    )


def tool_names(request: dict[str, Any]) -> list[str]:
    return [t.get("name", "") for t in request.get("tools", [])]


def result_of(request: dict[str, Any], tool: str) -> dict[str, Any]:
    """The tool_result Claude Code sent for the model's call of ``tool``: text and is_error."""
    calls = [b["id"] for m in request["messages"] if m["role"] == "assistant"
             for b in _blocks(m) if b.get("type") == "tool_use" and b.get("name") == tool]  # fmt: skip
    assert calls, f"no call of {tool} in the conversation sent back to the model"
    for message in request["messages"]:
        for block in _blocks(message):
            if block.get("type") == "tool_result" and block.get("tool_use_id") == calls[-1]:
                content = block.get("content", "")
                if isinstance(content, list):
                    content = "\n".join(
                        c.get("text", "") for c in content if c.get("type") == "text"
                    )
                return {"text": content, "is_error": bool(block.get("is_error"))}
    raise AssertionError(f"no tool_result for the call of {tool}")


def _blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    content = message.get("content")
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


@needs_claude
def test_save_then_search_across_two_claude_code_sessions(tmp_path: Path, mama_home: Path) -> None:
    # Session 1: the model saves a decision through the plugin's server.
    fake = run_claude(
        [tool_use(SAVE, JWT), text("Saved.")], "Record our API auth decision", tmp_path, "save"
    )
    first, second = fake.main_requests[:2]
    listed = tool_names(first)
    # clientInfo is claude-code and dynamic_tools is auto, in a new project: the core set only.
    assert sorted(n for n in listed if n.startswith(SERVER)) == sorted(
        f"{SERVER}__{n}" for n in CORE
    )
    assert f"{SERVER}__evolve_supersede" not in listed
    seen = json.dumps([first.get("system"), first["messages"]])
    assert "MAMA is this project's memory of decisions" in seen  # the server's instructions
    saved = result_of(second, SAVE)
    assert not saved["is_error"], saved["text"]
    ids = re.findall(r"\bdec_[a-z0-9]+", saved["text"])
    assert ids and "auth_strategy" in saved["text"], saved["text"]
    with Store.open(config=Config(mama_home)) as store:
        [record] = store.memories.by_topic("auth_strategy")
    assert (record.id, record.content) == (ids[0], JWT["decision"])
    assert record.reasoning["primary"] == JWT["reasoning"] and record.status == "current"
    assert record.project == project_key(tmp_path / "project")  # Claude Code's project dir

    # Session 2, same MAMA_HOME and project: the model asks before deciding again.
    query = {"query": "how should the API authenticate requests at high traffic?"}
    fake = run_claude(
        [tool_use(SEARCH, query), text("Found it.")], "Auth for the API?", tmp_path, "search"
    )
    found = result_of(fake.main_requests[1], SEARCH)
    assert not found["is_error"], found["text"]
    assert JWT["decision"] in found["text"] and record.id in found["text"], found["text"]
    assert "current" in found["text"], found["text"]


@needs_claude
def test_a_decision_without_reasoning_comes_back_as_an_error(
    tmp_path: Path, mama_home: Path
) -> None:
    no_why = {"topic": "auth_strategy", "decision": "Use JWT"}
    fake = run_claude(
        [tool_use(SAVE, no_why), text("I will add the why.")], "Save: use JWT", tmp_path, "bad save"
    )
    refused = result_of(fake.main_requests[1], SAVE)
    assert refused["is_error"], refused["text"]
    assert "reasoning.primary is required" in refused["text"], refused["text"]
    with Store.open(config=Config(mama_home)) as store:
        assert store.memories.by_topic("auth_strategy") == []  # nothing written


@needs_claude
def test_the_model_reads_the_summary_text(tmp_path: Path) -> None:
    """Claude Code shows the model structured content instead of text: MAMA sends it text."""
    fake = run_claude(
        [tool_use(SAVE, JWT), text("Saved.")], "Record our API auth decision", tmp_path, "summary"
    )
    assert result_of(fake.main_requests[1], SAVE)["text"].startswith("Saved decision")


def test_the_fake_model_answers_whatever_it_is_sent() -> None:
    """The fake itself: scripted steps for tool requests only, and no crash on odd input."""

    def ask(fake: FakeAnthropic, method: str, path: str, body: bytes | None = None,
            headers: dict[str, str] | None = None) -> tuple[int, str]:  # fmt: skip
        conn = http.client.HTTPConnection(fake.url.removeprefix("http://"), timeout=10)
        try:
            conn.request(method, path, body=body, headers=headers or {})
            answer = conn.getresponse()
            return answer.status, answer.read().decode()
        finally:
            conn.close()

    def events(stream: str) -> list[dict[str, Any]]:
        return [json.loads(line[6:]) for line in stream.splitlines() if line.startswith("data: ")]

    main = json.dumps({"model": "m", "stream": True, "tools": [{"name": "t"}], "messages": []})
    with FakeAnthropic([tool_use("t", {"a": 1}), text("first")]) as fake:
        assert ask(fake, "HEAD", "/")[0] == 404
        assert ask(fake, "GET", "/v1/models")[0] == 404
        status, helper = ask(fake, "POST", "/v1/messages", b'{"messages": [], "max_tokens": 5}')
        assert status == 200 and json.loads(helper)["content"][0]["text"] == "OK"
        status, stream = ask(fake, "POST", "/v1/messages?beta=true", main.encode())
        sent = events(stream)
        assert [e["type"] for e in sent] == ["message_start", "content_block_start",
                                             "content_block_delta", "content_block_stop",
                                             "message_delta", "message_stop"]  # fmt: skip
        assert sent[1]["content_block"]["name"] == "t"
        assert json.loads(sent[2]["delta"]["partial_json"]) == {"a": 1}
        assert sent[4]["delta"]["stop_reason"] == "tool_use"
        assert (
            events(ask(fake, "POST", "/v1/messages", main.encode())[1])[2]["delta"]["text"]
            == "first"
        )
        status, last = ask(fake, "POST", "/v1/messages", main.encode())  # the script ran out
        assert events(last)[4]["delta"]["stop_reason"] == "end_turn"
        status, counted = ask(fake, "POST", "/v1/messages/count_tokens", main.encode())
        assert status == 200 and json.loads(counted)["input_tokens"] > 0
        assert ask(fake, "POST", "/v1/messages", b"not json")[0] == 200  # a helper call
        assert ask(fake, "POST", "/v1/messages", b"", {"Content-Length": "x"})[0] == 500
        assert fake.steps_used == 2 and len(fake.main_requests) == 3
        assert fake.requests[4].body["tools"] == [{"name": "t"}]


@needs_claude
def test_claude_code_validates_the_plugin_strictly(tmp_path: Path) -> None:
    if not CLAUDE.exists():
        pytest.fail("run scripts/setup.sh --dev: it installs Claude Code into .tools/")
    env = {"HOME": str(tmp_path), "PATH": os.environ.get("PATH", ""), "DISABLE_AUTOUPDATER": "1",
           "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_TELEMETRY": "1"}  # fmt: skip
    out = subprocess.run([str(CLAUDE), "plugin", "validate", "--strict", str(ROOT)],
                         capture_output=True, text=True, env=env, timeout=120)  # fmt: skip
    assert out.returncode == 0 and "Validation passed" in out.stdout, out.stdout + out.stderr
