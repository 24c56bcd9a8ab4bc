"""``python -m benchmarks turns``: does the Stop checkpoint see the end of the turn it closes?

Real Claude Code (``.tools/``, ``-p`` over ``--input-format stream-json``, the plugin loaded
from this checkout) against the scripted fake model of ``tests/fake_anthropic.py``. Every
turn ends the way the user trial's did: a Bash call that fails (``sh -c 'echo boom-N; exit
7'``), then Claude's closing text. After each turn the bench reads the session's rolling
checkpoint from the store (once the Stop hook has stored that turn's closing text) and counts
the turns whose checkpoint does not carry the failed command with its exit code. Sessions
alternate between the Stop hook's wait (the default) and no wait (``MAMA_TURN_WAIT_S=0``, the
code path before the wait), so both counts come from the same run, under the same load.

A development tool: it needs a source checkout (``tests/fake_anthropic.py``) and Claude Code
in ``.tools/`` (``scripts/setup.sh --dev``). Nothing leaves 127.0.0.1.
"""

from __future__ import annotations

import os
import queue
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

from mama_plugin.config import Config
from mama_plugin.errors import MamaError
from mama_plugin.project import project_key
from mama_plugin.server.hook_tools import TURN_WAIT_ENV
from mama_plugin.services.story.worklog import WorkLog
from mama_plugin.storage import Store

from .checkout import CLAUDE, ROOT, fake_anthropic
from .latency import percentile
from .stream import read_events, send_turn

TURN_TIMEOUT_S = 120
STORED_TIMEOUT_S = 10.0
ARMS = {"wait": None, "no wait": "0"}


def turn_script(fake: ModuleType, n: int) -> list[dict[str, Any]]:
    """Turn ``n``'s replies: a failing smoke test, then a closing text that names no command."""
    command = f"sh -c 'echo boom-{n}; exit 7'"
    return [
        fake.tool_use("Bash", {"command": command, "description": f"smoke test {n}"}),
        fake.text(f"Turn {n}: the smoke test did not pass. Next: look at the server log {n}."),
    ]


def carries(checkpoint: Any, n: int) -> bool:
    """Whether a stored checkpoint names turn ``n``'s failed command and its exit code."""
    concerns = checkpoint.tension.get("concerns") or [] if checkpoint is not None else []
    return any(f"boom-{n}" in c and "exit 7" in c for c in concerns)


def _stored(config: Config, project: str, closing: str) -> Any:
    """The rolling checkpoint once it holds ``closing`` (the Stop hook ran), or None."""
    deadline = time.monotonic() + STORED_TIMEOUT_S
    with Store.open(config=config) as store:
        while True:
            found = [
                m
                for m in store.memories.latest(project=project, type="checkpoint", limit=5)
                if (log := WorkLog.of(m)) is not None and log.last_message == closing
            ]
            if found or time.monotonic() > deadline:
                return found[0] if found else None
            time.sleep(0.05)


def _session(
    fake_module: ModuleType, first: int, turns: int, work: Path, wait: str | None
) -> list[dict[str, Any]]:
    """One Claude Code session of ``turns`` turns; per turn: stored?, carried?"""
    home, mama_home, project = work / "home", work / "mama", work / "project"
    for folder in (home, mama_home, project):
        folder.mkdir(parents=True, exist_ok=True)
    numbers = list(range(first, first + turns))
    script = [reply for n in numbers for reply in turn_script(fake_module, n)]
    config = Config(mama_home)
    key = project_key(project)
    rows = []
    with fake_module.FakeAnthropic(script) as fake:
        env = fake_module.claude_env(fake, home, MAMA_HOME=str(mama_home))
        if wait is not None:
            env[TURN_WAIT_ENV] = wait
        command = [
            str(CLAUDE),
            "-p",
            "--plugin-dir",
            str(ROOT),
            "--allowedTools",
            "Bash,mcp__plugin_mama_mama",
            "--input-format",
            "stream-json",
            "--output-format",
            "stream-json",
            "--verbose",
        ]
        with tempfile.TemporaryFile("w+") as err:
            proc = subprocess.Popen(
                command,
                cwd=project,
                env=env,
                text=True,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=err,
            )
            assert proc.stdin is not None and proc.stdout is not None
            events: queue.Queue[dict[str, Any] | None] = queue.Queue()
            threading.Thread(target=read_events, args=(proc.stdout, events), daemon=True).start()
            try:
                for n in numbers:
                    started = time.monotonic()
                    send_turn(proc.stdin, events, f"run smoke test {n}", TURN_TIMEOUT_S)
                    took = time.monotonic() - started
                    closing = turn_script(fake_module, n)[1]["text"]
                    cp = _stored(config, key, closing)
                    rows.append(
                        {"turn": n, "stored": cp is not None, "carried": carries(cp, n), "s": took}
                    )
                proc.stdin.close()
                proc.wait(timeout=TURN_TIMEOUT_S)
            except (MamaError, subprocess.TimeoutExpired, OSError) as exc:
                proc.kill()
                proc.wait()
                err.seek(0)
                raise MamaError(f"claude -p: {exc}\nstderr: {err.read()[-2000:]}") from exc
    return rows


def turns_run(
    turns: int = 200, *, per_session: int = 10, progress: Callable[[str], None] | None = None
) -> tuple[str, dict[str, Any]]:
    """Run ``turns`` turns in each arm (sessions alternate); the report and its figures."""
    if not CLAUDE.exists():
        raise MamaError(f"{CLAUDE} is missing: scripts/setup.sh --dev installs Claude Code")
    fake_module = fake_anthropic()
    rows: dict[str, list[dict[str, Any]]] = {arm: [] for arm in ARMS}
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="mama-bench-turns-") as tmp:
        first, session = 1, 0
        while min(len(r) for r in rows.values()) < turns:
            for arm, wait in ARMS.items():
                count = min(per_session, turns - len(rows[arm]))
                if count <= 0:
                    continue
                session += 1
                work = Path(tmp) / f"s{session}"
                rows[arm] += _session(fake_module, first, count, work, wait)
                first += count
                if progress:
                    missing = sum(not r["carried"] for r in rows[arm])
                    progress(f"{arm}: {missing}/{len(rows[arm])} missing")
    load = os.getloadavg()[0]
    data: dict[str, Any] = {"turns": turns, "per_session": per_session, "load": load}
    lines = [
        f"Stop checkpoint vs the turn's last tool result ({turns} turns per arm, "
        f"{per_session} per session, load {load:.1f}, {time.monotonic() - started:.0f} s)"
    ]
    for arm, found in rows.items():
        missing = sum(not r["carried"] for r in found)
        unstored = sum(not r["stored"] for r in found)
        times = [r["s"] for r in found]
        median, p95 = percentile(times, 50), percentile(times, 95)
        data[arm] = {"missing": missing, "total": len(found), "no_checkpoint": unstored,
                     "turn_median_s": median, "turn_p95_s": p95}  # fmt: skip
        lines.append(
            f"  {arm:8} missing {missing}/{len(found)} ({missing - unstored} checkpoints "
            f"without it, {unstored} turns without a checkpoint within {STORED_TIMEOUT_S:.0f} s); "
            f"turn (prompt → result) median {median:.2f} s, p95 {p95:.2f} s"
        )
    return "\n".join(lines) + "\n", data
