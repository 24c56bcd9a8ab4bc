"""Real Claude Code, scripted model: multi-session stories and what the next session is told.

A :class:`Story` is one project (one HOME, one MAMA_HOME) that sessions run in, one ``claude -p``
each, each against its own scripted model (tests/fake_anthropic.py), optionally ``--resume``-ing
an earlier one. The assertions read the request bodies Claude Code sent: what the SessionStart
hook injected and what ``load_checkpoint`` answered, checked for the cliffhanger's structure,
its budget, its fence, and that nothing in it is said twice or urgently.

CI runs the smallest story (real work, a trivial session, a new session); ``MAMA_STORIES=all``
runs every story.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import time
import uuid
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from fake_anthropic import FakeAnthropic, claude_env, text, tool_use
from test_claude_code import CLAUDE, ROOT, RUN_TIMEOUT_S, SERVER, needs_claude, result_of
from test_claude_code_hooks import injected

from mama_plugin.config import Config

pytestmark = needs_claude
T = f"{SERVER}__"
ALL = os.environ.get("MAMA_STORIES", "") == "all"
full_only = pytest.mark.skipif(not ALL, reason="MAMA_STORIES=all runs every story")
ALLOWED = ",".join((SERVER, "Bash", "Write", "Edit", "Read"))
URGENT = re.compile(
    r"\b(urgent(ly)?|immediately|asap|right away|critical(ly)?|hurry|at once|must)\b", re.I
)
FENCE = re.compile(r"<mama-memory>\n(.*?)\n</mama-memory>", re.S)


@dataclass
class Session:
    """One finished ``claude -p`` run of a story: its id and what its model was sent."""

    id: str
    fake: FakeAnthropic

    @property
    def start(self) -> str:
        """MAMA's session start in the first request: its header to its pointer ("" if none)."""
        found = re.search(r"MAMA — .*?</mama-memory>\n[^\n]*",
                          injected(self.fake.main_requests[0], "SessionStart"), re.S)  # fmt: skip
        return found.group(0) if found else ""

    def starts(self) -> int:
        """How many copies of MAMA's session start the first request holds."""
        body = json.dumps(self.fake.main_requests[0]["messages"], ensure_ascii=False)
        return body.count("SessionStart hook additional context: MAMA")


class Story:
    """A project that sessions run in, one after another."""

    def __init__(self, tmp_path: Path) -> None:
        if not CLAUDE.exists():
            pytest.fail("run scripts/setup.sh --dev: it installs Claude Code into .tools/")
        self.home, self.project = tmp_path / "home", tmp_path / "project"
        self.home.mkdir(exist_ok=True)
        self.project.mkdir(exist_ok=True)
        self.sessions: list[Session] = []

    def run(self, prompt: str, script: list[dict[str, Any]], *, resume: str = "") -> Session:
        """Run one session (``resume``: continue that session) and return it."""
        sid = resume or str(uuid.uuid4())
        where = ["--resume", sid] if resume else ["--session-id", sid]
        command = [str(CLAUDE), "-p", prompt, *where, "--plugin-dir", str(ROOT),
                   "--allowedTools", ALLOWED]  # fmt: skip
        with FakeAnthropic(script) as fake:
            started = time.monotonic()
            proc = subprocess.Popen(command, cwd=self.project, env=claude_env(fake, self.home),
                                    stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, text=True, start_new_session=True)  # fmt: skip
            try:
                out, err = proc.communicate(timeout=RUN_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                out, err = proc.communicate()
                pytest.fail(f"claude -p ran over {RUN_TIMEOUT_S} s\n{out}\n{err}")
        label = f"{len(self.sessions) + 1}{' (resumed)' if resume else ''}"
        print(f"session {label}: {time.monotonic() - started:.2f} s, {prompt!r}")
        if proc.returncode != 0:
            pytest.fail(f"claude -p exited {proc.returncode}\nstdout: {out}\nstderr: {err}")
        session = Session(sid, fake)
        self.sessions.append(session)
        return session


def tokens(words: str) -> int:
    """A cautious token count: ASCII at four characters a token, anything else one each."""
    ascii_chars = sum(1 for ch in words if ord(ch) < 128)
    return -(-ascii_chars // 4) + (len(words) - ascii_chars)


def told(words: str, *, budget: int) -> str:
    """The fenced memory of a cliffhanger, after checking the things every one must hold.

    Within ``budget`` tokens; every memory inside the fence (one fence, nothing after it but
    MAMA's pointer); no urgency wording; nothing said twice (no line, and no clause of 24+
    characters, appears twice).
    """
    assert tokens(words) <= budget, (tokens(words), words)
    fences = FENCE.findall(words)
    assert len(fences) == 1, words
    after = words.split("</mama-memory>", 1)[1].strip()
    assert ("\n" not in after and "mama-resume" in after) or after == "", after
    body = fences[0]
    assert not URGENT.search(body), URGENT.search(body)
    clauses = [c.strip(" .-").lower() for c in re.split(r"\n| — |; | · ", body)]
    repeated = [c for c, n in Counter(c for c in clauses if len(c) >= 24).items() if n > 1]
    assert not repeated, (repeated, body)
    return str(body)


def write(path: Path, content: str) -> dict[str, Any]:
    return tool_use("Write", {"file_path": str(path), "content": content})


def bash(command: str, description: str) -> dict[str, Any]:
    return tool_use("Bash", {"command": command, "description": description})


CACHE = (
    "import time\n\n\nclass TTLCache:\n    def __init__(self, ttl=60):\n        self.ttl = ttl\n"
    "        self._entries = {}\n\n    def get(self, key):\n        hit = self._entries.get(key)\n"
    "        return hit[1] if hit and hit[0] > time.time() else None\n"
)
PARSES = "python3 -c 'import ast; ast.parse(open(\"app/cache.py\").read())'"


def test_a_trivial_session_never_erases_the_work(tmp_path: Path) -> None:
    story = Story(tmp_path)
    (story.project / "app").mkdir()
    story.run("Add a TTL cache to the price service", [
        write(story.project / "app" / "cache.py", CACHE),
        bash(PARSES, "Check that app/cache.py parses"),
        text("Added a TTL cache in app/cache.py; it parses. Next: start the price service on "
             "port 8765 and run the smoke test."),
    ])  # fmt: skip
    story.run("어제 작업 이어서 하자", [text("어디서 멈췄는지 볼게요.")])
    third = story.run("hello", [text("Hi.")])
    memory = told(third.start, budget=600)
    print(memory)
    assert "Add a TTL cache to the price service — Added a TTL cache in app/cache.py" in memory
    assert re.search(r"\(\d{4}-\d{2}-\d{2}, chk_[a-z0-9]+, saved automatically\)", memory)
    assert "Changed app/cache.py:1-11 (created)" in memory
    assert "Where I stopped: Check that app/cache.py parses had just passed" in memory
    assert "✅ Check that app/cache.py parses — evidence: `python3 -c" in memory
    assert "Next step: start the price service on port 8765 and run the smoke test (HIGH)" in memory
    assert (
        "Since then: one session only asked “어제 작업 이어서 하자” and changed nothing." in memory
    )
    assert memory.count("Since then") == 1


@full_only
def test_mama_resume_after_a_failing_command_tells_where_it_stopped(tmp_path: Path) -> None:
    story = Story(tmp_path)
    smoke = "sh -c 'echo \"curl: (7) Failed to connect to localhost port 8765\" >&2; exit 7'"
    story.run("Run the unit tests, then smoke test the price service", [
        bash("python3 -c 'print(\"2 passed\")'", "Run the unit tests"),
        bash(smoke, "Smoke test the price service"),
        text("The smoke test failed: nothing listens on port 8765 yet. Next: start the price "
             "service on port 8765."),
    ])  # fmt: skip
    resumed = story.run("/mama-resume", [
        tool_use("Skill", {"skill": "mama:resume"}), tool_use(T + "load_checkpoint", {}),
        text("We stopped at the smoke test."),
    ])  # fmt: skip
    answer = result_of(resumed.fake.main_requests[2], T + "load_checkpoint")
    assert not answer["is_error"], answer["text"]
    for words, budget in ((answer["text"], 1200), (resumed.start, 600)):
        memory = told(words, budget=budget)
        print(memory)
        assert "What I did (" in memory
        assert "Where I stopped: Smoke test the price service had just failed (exit 7)" in memory
        unresolved = memory.split("Unresolved:\n", 1)[1]
        assert "failed (Smoke test the price service): exit 7, curl: (7) Failed to connect" in (
            unresolved
        )
        assert "✅ Run the unit tests — evidence: `python3 -c 'print(\"2 passed\")'` exited 0" in (
            memory
        )
        assert "Next step: start the price service on port 8765 (HIGH)" in memory


@full_only
def test_resume_holds_one_copy_and_an_unchanged_start_is_byte_identical(tmp_path: Path) -> None:
    story = Story(tmp_path)
    (story.project / "app").mkdir()
    story.run("Add a TTL cache to the price service", [
        write(story.project / "app" / "cache.py", CACHE),
        text("Added a TTL cache in app/cache.py. Next: bound its size."),
    ])  # fmt: skip
    Config().set("stop_mode", "off")  # from here on no session writes to the memory
    first = story.run("hello", [text("Hi.")])
    second = story.run("hello again", [text("Hi again.")])
    assert first.start and first.start == second.start  # byte-identical: the cache holds
    told(second.start, budget=600)
    for n in (1, 2):  # resumed twice: still the one copy of the first start
        again = story.run(f"go on ({n})", [text("Going on.")], resume=second.id)
        assert again.starts() == 1, again.fake.main_requests[0]["messages"]


@full_only
def test_a_korean_session_comes_back_in_its_own_words(tmp_path: Path) -> None:
    story = Story(tmp_path)
    (story.project / "app").mkdir()
    smoke = "sh -c 'echo \"연결 거부: 포트 8765\" >&2; exit 7'"
    story.run("가격 서비스에 TTL 캐시를 추가해줘", [
        write(story.project / "app" / "cache.py", CACHE),
        bash(smoke, "스모크 테스트"),
        text("app/cache.py에 TTL 캐시를 추가했습니다. 스모크 테스트는 아직 실패합니다."),
    ])  # fmt: skip
    story.run("검색해줘: 캐시 결정", [tool_use(T + "search_by_context", {"query": "캐시"}),
                                     text("관련 기억이 없습니다.")])  # fmt: skip
    back = story.run("어제 작업 이어서 하자", [text("이어서 하겠습니다.")])
    memory = told(back.start, budget=600)
    print(memory)
    assert (
        "What I did (" in memory
        and "): 가격 서비스에 TTL 캐시를 추가해줘 — app/cache.py에" in memory
    )
    assert "Changed app/cache.py:1-11 (created)" in memory
    assert "failed (스모크 테스트): exit 7, 연결 거부: 포트 8765" in memory
    assert "Since then: one session searched memory." in memory
