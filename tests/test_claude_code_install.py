"""Real Claude Code, fake model: a marketplace install in a fresh HOME, no environment ready.

The user's first session: the SessionStart hook tells the user (``systemMessage``) and the
model (``additionalContext``) once that MAMA is installing; the model works (a Write) while
the bridge stands in for the server; once the bootstrap has built the core, ``mama catchup``
checkpoints that session, and the next session starts with it. Then ``bin/mama`` run through
Claude Code's Bash tool (no CLAUDE_PLUGIN_DATA there) answers from the same environment:
the tool result is the command's output alone, and no second environment is built.

The bootstrap is the real one (pip, the local pip cache; MAMA_BOOTSTRAP_LOCAL=0 skips the
local-model phase): one run of this file is ~30–90 s on this machine's two cores.
"""

from __future__ import annotations

import contextlib
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
from test_bootstrap import SYSTEM_PYTHON
from test_claude_code import CLAUDE, ROOT, needs_claude, result_of
from test_claude_code_hooks import injected, sent

from mama_plugin.bootstrap import paths
from mama_plugin.config import Config
from mama_plugin.storage import Store

pytestmark = needs_claude
PARTS = ("bin", "mama_plugin", "templates", "commands", "hooks", ".claude-plugin")
READY_WAIT_S = 600.0  # the core build (~10-40 s here) under a loaded machine, then the catch-up
NOTICE = "MAMA (the memory plugin) is installing its Python environment"


def _claude(command: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    proc = subprocess.Popen([str(CLAUDE), *command], cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)  # fmt: skip
    try:
        out, err = proc.communicate(timeout=180)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        pytest.fail(f"claude {command[:2]} ran over 180 s\nstdout: {out}\nstderr: {err}")
    if proc.returncode != 0:
        pytest.fail(f"claude {command[:2]} exited {proc.returncode}\nstdout: {out}\nstderr: {err}")
    return subprocess.CompletedProcess(command, 0, out, err)


def _events(stream: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stream.splitlines() if line.startswith("{")]


def _texts(request: dict[str, Any]) -> str:
    """The text blocks of a request's messages, joined (the user's expanded command)."""
    parts = []
    for message in request["messages"]:
        content = message.get("content")
        blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
        parts += [b.get("text", "") for b in blocks if isinstance(b, dict)]
    return "\n".join(str(p) for p in parts)


def _checkpoints(mama_home: Path, session: str) -> list[Any]:
    if not (mama_home / "mama.db").exists():
        return []
    with Store.open(config=Config(mama_home)) as store:
        return store.memories.of_session(session, type="checkpoint")


def _wait_for(condition: Any, what: str, log: Path) -> float:
    started = time.monotonic()
    while not condition():
        if time.monotonic() - started > READY_WAIT_S:
            tail = log.read_text()[-3000:] if log.exists() else "(no log)"
            raise AssertionError(f"waited {READY_WAIT_S:.0f} s for {what}; bootstrap log:\n{tail}")
        time.sleep(0.2)
    return time.monotonic() - started


def test_the_first_session_after_a_marketplace_install_is_checkpointed(
    tmp_path: Path, mama_home: Path
) -> None:
    if not CLAUDE.exists():
        pytest.fail("run scripts/setup.sh --dev: it installs Claude Code into .tools/")
    plugin = tmp_path / "Market Place" / "mama"  # a space in the path; no .venv: not ready
    for part in PARTS:
        shutil.copytree(ROOT / part, plugin / part, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / ".mcp.json", plugin / ".mcp.json")
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    project.mkdir()
    plain = {"HOME": str(home), "PATH": os.environ.get("PATH", ""), "DISABLE_AUTOUPDATER": "1",
             "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_TELEMETRY": "1"}  # fmt: skip
    for step in (["marketplace", "add", str(plugin)], ["install", "mama@mama"]):
        _claude(["plugin", *step], tmp_path, plain)
    mama = {"MAMA_PYTHON": SYSTEM_PYTHON, "MAMA_BOOTSTRAP_LOCAL": "0",
            # The user's pip cache (the fresh HOME has none): the core installs from it.
            "PIP_CACHE_DIR": str(Path.home() / ".cache" / "pip"),
            "MAMA_WHEEL_CACHE": str(tmp_path / "no-wheels")}  # fmt: skip
    log = mama_home / "logs" / "bootstrap.log"

    # 1. The first session: told once, works, its Stop hook answered by the bridge.
    prompt = "Write the release plan into notes.md"
    notes = project / "notes.md"
    script = [tool_use("Write", {"file_path": str(notes), "content": "# Plan\n- ship 2.0\n"}),
              text("Wrote the plan into notes.md. Next: add the release checklist.")]  # fmt: skip
    with FakeAnthropic(script) as fake:
        first = _claude(["-p", prompt, "--allowedTools", "Write", "--output-format", "stream-json",
                         "--verbose"], project, claude_env(fake, home, **mama))  # fmt: skip
        requests = fake.main_requests
    ended = time.monotonic()
    assert notes.read_text() == "# Plan\n- ship 2.0\n"
    events = _events(first.stdout)
    [init] = [e for e in events if e.get("subtype") == "init"]
    session = init["session_id"]
    # A local-directory marketplace's plugin runs from that directory (its cached copy unused).
    assert [Path(p["path"]) for p in init["plugins"]] == [plugin]
    [hook] = [json.loads(e["output"]) for e in events
              if e.get("subtype") == "hook_response" and e.get("hook_event") == "SessionStart"]  # fmt: skip
    print(f"the user is shown (systemMessage): {hook['systemMessage']}")
    assert "MAMA is installing its Python environment" in hook["systemMessage"]
    context = injected(requests[0], "SessionStart")
    print(f"the model is told: {context.split(chr(10))[0]}")
    assert context.startswith(f"SessionStart hook additional context: {NOTICE}")
    assert all(sent(r).count(NOTICE) == 1 for r in requests)  # once, not per request or hook
    # The bridge's initialize instructions say the same in the server's words.
    assert "work is checkpointed from its transcript once the environment is ready" in sent(
        requests[0]
    )
    assert hook["systemMessage"] not in sent(requests[0])  # the user's message is not the model's
    assert not _checkpoints(mama_home, session)  # nothing could be saved yet

    # 2. The bootstrap builds the core, then the catch-up checkpoints the first session.
    data = home / ".claude" / "plugins" / "data" / "mama-mama"
    waited = _wait_for(lambda: _checkpoints(mama_home, session), "the catch-up", log)
    core = [line for line in log.read_text().splitlines() if "core environment ready in" in line]
    print(f"checkpoint saved {waited:.1f} s after the first session ended; {core[-1]}")
    assert (data / "venv" / paths.CORE_MARKER).exists()  # built where Claude Code said
    [checkpoint] = _checkpoints(mama_home, session)
    ready_at = time.mktime(time.strptime(core[-1][:19], "%Y-%m-%d %H:%M:%S"))
    print(f"core ready → checkpoint saved: {checkpoint.created_at / 1000 - ready_at:.1f} s "
          "(log time has 1 s resolution)")  # fmt: skip
    assert checkpoint.content.startswith(f"Working on: {prompt}")
    assert "notes.md" in json.dumps(checkpoint.continuity)

    # 3. The next session starts with the first one's checkpoint, and no notice.
    with FakeAnthropic([text("We were writing the release plan.")]) as fake:
        _claude(["-p", "Where were we?"], project, claude_env(fake, home, **mama))
        story = injected(fake.main_requests[0], "SessionStart")
    print("the next session starts with: " + story[:1200].replace("\n", " | "))
    assert prompt in story and "notes.md" in story
    assert NOTICE not in sent(fake.main_requests[0])

    # 4. bin/mama through the Bash tool (no CLAUDE_PLUGIN_DATA): the same environment, and the
    # command's output alone.
    with FakeAnthropic([text("Here they are.")]) as fake:
        _claude(["-p", "/mama:configure"], project, claude_env(fake, home, **mama))
        body = _texts(fake.main_requests[0])
    # What /mama:configure has the model run (2.1.197 substitutes the plugin's directory with a
    # trailing slash: ".../mama//bin/mama").
    found = re.search(r'run `(sh "([^"]+)/bin/mama" config list)`', body)
    assert found, body[:2000]
    command, commands_root = found.groups()
    assert Path(commands_root) == plugin
    print(f"/mama:configure runs: {command}")
    expected = subprocess.run(["sh", f"{commands_root}/bin/mama", "config", "list"],
                              env={**os.environ, **mama, "CLAUDE_PLUGIN_DATA": str(data)},
                              capture_output=True, text=True, check=True).stdout  # fmt: skip
    script = [tool_use("Bash", {"command": command, "description": "List MAMA's settings"}),
              text("Those are MAMA's settings.")]  # fmt: skip
    with FakeAnthropic(script) as fake:
        _claude(["-p", "/mama:configure"], project, claude_env(fake, home, **mama))
        listed = result_of(fake.main_requests[1], "Bash")
    print(f"the Bash tool result: {listed['text'][:200]!r}")
    assert not listed["is_error"], listed["text"]
    assert listed["text"].strip() == expected.strip()
    assert "embedding_model" in listed["text"] and "mama:" not in listed["text"]
    assert not (mama_home / "plugin-env").exists()  # no second environment
    assert (mama_home / "plugin-data").read_text().strip() == str(data)
    caught = [line for line in log.read_text().splitlines() if line.startswith("mama catchup:")]
    print(f"{caught}; the first session ended {time.monotonic() - ended:.1f} s ago")
    assert caught and caught[0].startswith("mama catchup: 1 session(s), 1 checkpoint(s) saved")
