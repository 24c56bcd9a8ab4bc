"""Real Claude Code, fake model: `/mama:save` drafts from the session, then saves the review.

One `claude -p` session in stream-json mode, two prompts, the way a user works: first the
model does real work with Claude Code's own tools (Write, Edit) and says why in plain text;
then the user types ``/mama:save …``, which Claude Code expands into commands/save.md. The
scripted model follows it: ``search_by_context``, ``save_decision`` with ``draft: true`` (MAMA
answers with a narrative whose evidence is read from this session's transcript, and saves
nothing), then ``save_decision`` with the reviewed fields. ``assist_model_path`` is ``off``, so
the draft comes from the deterministic extractor, not the slow local model.
See tests/test_claude_code.py for the harness and tests/fake_anthropic.py for the model.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from fake_anthropic import FakeAnthropic, claude_env, text, tool_use
from test_claude_code import CLAUDE, ROOT, RUN_TIMEOUT_S, SERVER, needs_claude, result_of

from mama_plugin.config import Config
from mama_plugin.project import project_key
from mama_plugin.storage import MemoryRecord, Store

pytestmark = needs_claude
T = f"{SERVER}__"
BENCH = "SKIP LOCKED: 2,140 jobs/s, p99 38 ms\n"
QUEUE_PY = "import psycopg\n\n\ndef claim(conn):\n    return None\n"
CLAIM = ("    sql = 'SELECT id FROM jobs FOR UPDATE SKIP LOCKED LIMIT 1'\n"
         "    return conn.execute(sql).fetchone()\n")  # fmt: skip
WHY = (
    "Postgres, because SKIP LOCKED handled 2,140 jobs/s in bench/queue.txt. Next: tune autovacuum."
)
DECISION = "Use Postgres for the job queue"
# What the transcript's tool calls touched, with the line ranges the tools reported, as the
# files stand at the end: Write's length (1 line; 5, grown to 6 by the Edit) and the Edit's
# patch hunk (lines 5-6 of the new app/queue.py).
# Each file once: app/queue.py was created (lines 1-6), then lines 5-6 edited.
EVIDENCE = [{"source": "bench/queue.txt:1", "kind": "file", "detail": "created"},
            {"source": "app/queue.py:1-6", "kind": "file", "detail": "created"}]  # fmt: skip


def _evidence(draft: str) -> list[dict[str, str]]:
    """The evidence a draft's text lists ("- source, kind, detail" under its "evidence" label)."""
    block = draft.split("\nevidence [", 1)[1].split("\n", 1)[1]
    lines = [line[2:] for line in block.splitlines()]
    lines = lines[
        : next(
            (i for i, line in enumerate(block.splitlines()) if not line.startswith("- ")),
            len(lines),
        )
    ]
    return [
        dict(zip(("source", "kind", "detail"), line.split(", ", 2), strict=True)) for line in lines
    ]


REVIEWED: dict[str, Any] = {
    "topic": "job_queue",
    "decision": DECISION,
    "reasoning": {"primary": "SKIP LOCKED handled 2,140 jobs/s (p99 38 ms) in bench/queue.txt",
                  "alternatives_considered": []},
    "specifics": ["2,140 jobs/s", "p99 38 ms"],
    "evidence": EVIDENCE,
    "next_steps": [{"step": "Tune autovacuum", "priority": "MEDIUM",
                    "context": "the next step named after the bench/queue.txt run"}],
}  # fmt: skip


class PausingFake(FakeAnthropic):
    """The fake model, running ``check`` just before it hands out script step ``at``.

    The whole of ``/mama:save`` is one turn, milliseconds long: this is the only moment to
    look at the store between the draft and the save.
    """

    def __init__(self, script: list[dict[str, Any]], at: int, check: Callable[[], Any]) -> None:
        super().__init__(script)
        self.at, self.check = at, check
        self.checked: Any = None

    def _next_reply(self, body: Any) -> tuple[bool, dict[str, Any]]:
        main, reply = super()._next_reply(body)
        if main and self.checked is None and self.steps_used == self.at + 1:
            self.checked = self.check()
        return main, reply


def converse(fake: FakeAnthropic, prompts: list[str], workdir: Path) -> list[dict[str, Any]]:
    """One `claude -p` session (stream-json), one prompt after another; their result events."""
    if not CLAUDE.exists():
        pytest.fail("run scripts/setup.sh --dev: it installs Claude Code into .tools/")
    if not (ROOT / ".venv" / "bin" / "python").exists() and not os.environ.get("MAMA_VENV"):
        pytest.fail("run scripts/setup.sh, or set MAMA_VENV: bin/mama-server needs a venv")
    home, project = workdir / "home", workdir / "project"
    home.mkdir(exist_ok=True)
    project.mkdir(exist_ok=True)
    command = [str(CLAUDE), "-p", "--input-format", "stream-json", "--output-format",
               "stream-json", "--verbose", "--plugin-dir", str(ROOT),
               "--allowedTools", SERVER, "Write", "Edit"]  # fmt: skip
    proc = subprocess.Popen(command, cwd=project, env=claude_env(fake, home), text=True,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True)  # fmt: skip
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    results = []
    # A hung session must not hang the test: past the limit, its output ends and it fails.
    watchdog = threading.Timer(RUN_TIMEOUT_S, os.killpg, (proc.pid, signal.SIGKILL))
    watchdog.start()
    try:
        for words in prompts:
            line = {"type": "user", "message": {"role": "user", "content": words}}
            proc.stdin.write(json.dumps(line) + "\n")
            proc.stdin.flush()
            for out in proc.stdout:
                if (event := json.loads(out)).get("type") == "result":
                    results.append(event)
                    break
            else:
                pytest.fail(f"Claude Code ended without a result (or ran over {RUN_TIMEOUT_S} s)"
                            f"\nstderr: {proc.stderr.read()}")  # fmt: skip
        proc.stdin.close()
        proc.wait(timeout=RUN_TIMEOUT_S)
    finally:
        watchdog.cancel()
        with contextlib.suppress(ProcessLookupError):  # Claude Code and its server
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
        for pipe in (proc.stdin, proc.stdout, proc.stderr):
            with contextlib.suppress(OSError):
                pipe.close()
    return results


def decisions(mama_home: Path) -> list[MemoryRecord]:
    with Store.open(config=Config(mama_home)) as store:
        return store.memories.recent(type="decision", limit=50)


def test_mama_save_drafts_from_the_session_then_saves_the_reviewed_narrative(
    tmp_path: Path, mama_home: Path
) -> None:
    Config(mama_home).set("assist_model_path", "off")
    project = tmp_path / "project"
    bench, app = project / "bench" / "queue.txt", project / "app" / "queue.py"
    draft = {"decision": DECISION, "draft": True,
             "context": "The user asked which store should back the job queue. We benchmarked "
                        "Postgres SKIP LOCKED and wired it into app/queue.py."}  # fmt: skip
    script = [
        # Turn 1: real work with Claude Code's own tools, a draft on the same turn (as Claude
        # may ask for one on its own), and the why in plain text.
        tool_use("Write", {"file_path": str(bench), "content": BENCH}),
        tool_use("Write", {"file_path": str(app), "content": QUEUE_PY}),
        tool_use("Edit", {"file_path": str(app), "old_string": "    return None\n",
                          "new_string": CLAIM}),
        tool_use(T + "save_decision", draft),
        text(WHY),
        # Turn 2, /mama:save: save.md's steps 2, 3 and 5.
        tool_use(T + "search_by_context", {"query": "which store backs the job queue"}),
        tool_use(T + "save_decision", draft),
        tool_use(T + "save_decision", REVIEWED),
        text("Saved the job queue decision."),
    ]  # fmt: skip
    # Claude Code appends its transcript in batches every 100 ms, and this fake model answers in
    # milliseconds: without waiting for the file to settle, a draft right after Write, Write,
    # Edit listed one or both Writes and never the Edit, and even a draft on the next prompt
    # missed turn 1's last entries about one run in six.
    started = time.monotonic()
    fake = PausingFake(script, at=7, check=lambda: decisions(mama_home))
    with fake:
        results = converse(fake, ["Which store should back the job queue? Benchmark it and wire "
                                  "it up.", "/mama:save use Postgres for the job queue"],
                           tmp_path)  # fmt: skip
    elapsed = time.monotonic() - started
    print(f"claude -p (work, draft, /mama:save): {elapsed:.2f} s wall, "
          f"{len(fake.main_requests)} requests")  # fmt: skip
    assert [r.get("is_error") for r in results] == [False, False], results
    assert fake.steps_used == len(script)
    requests = fake.main_requests

    # /mama:save typed verbatim: Claude Code expanded it into commands/save.md itself.
    expanded = json.dumps(requests[5]["messages"][-1], ensure_ascii=False)
    assert "<command-name>/mama:save</command-name>" in expanded
    assert "use Postgres for the job queue" in expanded and "`draft: true`" in expanded

    # The same-turn draft: every tool call before it, though the why is not said yet.
    early = result_of(requests[4], T + "save_decision")
    assert not early["is_error"], early["text"]
    assert _evidence(early["text"]) == EVIDENCE, early["text"]

    # The draft: nothing saved, the extractor's why, the evidence from the session's tools.
    answer = result_of(requests[7], T + "save_decision")
    assert not answer["is_error"], answer["text"]
    said = answer["text"]
    assert said.startswith("Draft of a decision, NOT saved"), said
    assert "(model: not used: assist_model_path is off" in said, said
    assert f"reasoning.primary [extractor]: {WHY.split(' Next')[0]}" in said, said
    assert _evidence(said) == EVIDENCE, said
    assert "- Tune autovacuum (MEDIUM)" in said, said
    assert f"decision: {DECISION}" in said and "{" not in said, said  # told once, no JSON copy
    assert fake.checked == [], fake.checked  # the store, after the draft and before the save

    # The reviewed save: one decision, the draft's evidence with it.
    saved = result_of(requests[8], T + "save_decision")
    assert not saved["is_error"], saved["text"]
    [record] = decisions(mama_home)
    assert re.search(rf"\b{record.id}\b", saved["text"]), saved["text"]
    assert (record.topic, record.content) == ("job_queue", DECISION)
    assert record.reasoning["primary"] == REVIEWED["reasoning"]["primary"]
    assert [(e["source"], e["kind"], e["detail"]) for e in record.evidence] == [
        (e["source"], e["kind"], e["detail"]) for e in EVIDENCE]  # fmt: skip
    assert record.project == project_key(project)
