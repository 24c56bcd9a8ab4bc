"""Killed writers lose nothing they acknowledged (``python -m benchmarks kills``).

Two trials, each repeated and each ending in a SIGKILL at a random moment:

- **writer**: a process saves decisions (with a checkpoint every few) through the real save
  path and prints each id after the save returned, i.e. after it committed; the bench kills it
  20–300 ms after its first save.
- **server**: a real ``mama serve`` (the front, with its warm-up and its embedder when a model
  is configured) answers ``save_decision`` calls over stdio; an answer that is not an error is
  an acknowledgement; the bench kills the process 0–1.5 s after its first one.

After each kill the store is reopened: every acknowledged memory must be there, and SQLite's
``integrity_check`` must find nothing. A SIGKILL leaves a WAL behind, so each reopen also
replays it, as the next session would.
"""

from __future__ import annotations

import contextlib
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import apsw

from mama_plugin.config import Config
from mama_plugin.storage import Store
from mama_plugin.storage.integrity import integrity_check

from .checkout import ROOT
from .stdio import StdioServer

PROJECT = "/bench/kills"
_SAVED = re.compile(r"^Saved decision (dec_[a-z0-9]+)")
_WRITER = """
import sys
from pathlib import Path
from mama_plugin.config import Config
from mama_plugin.services.saving.memories import save_checkpoint, save_decision
from mama_plugin.storage import Store

with Store.open(sys.argv[1], config=Config(Path(sys.argv[2]))) as store:
    i = 0
    while True:
        saved = save_decision(store, sys.argv[3], {"topic": f"kill_{i % 7}",
                              "decision": f"decision {i} of a writer about to die",
                              "reasoning": f"it wrote {i} before"})
        print(saved.memory.id, flush=True)
        if i % 5 == 4:
            point = save_checkpoint(store, sys.argv[3], {"summary": f"at {i}",
                                    "implements": [saved.memory.id]})
            print(point.memory.id, flush=True)
        i += 1
"""


def _env(home: Path) -> dict[str, str]:
    env = {**os.environ, "MAMA_HOME": str(home)}
    root = str(ROOT)
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def _lost(home: Path, acked: list[str]) -> tuple[list[str], list[str]]:
    """The acknowledged ids missing from the reopened store, and what integrity_check found."""
    db = home / "mama.db"
    with Store.open(db, config=Config(home)) as store:
        found = store.memories.get_many(acked)
    conn = apsw.Connection(str(db))
    try:
        problems = integrity_check(conn)
    finally:
        conn.close()
    return [i for i in acked if i not in found], problems


def _first(acked: list[str], proc: subprocess.Popen[str], timeout_s: float = 60) -> None:
    """Wait (bounded) until ``proc`` acknowledged its first save or died."""
    deadline = time.monotonic() + timeout_s
    while not acked and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)


def kill_writer(home: Path, rng: random.Random) -> tuple[list[str], list[str]]:
    """One writer process killed at a random moment: (acknowledged ids, problems)."""
    proc = subprocess.Popen(
        [sys.executable, "-c", _WRITER, str(home / "mama.db"), str(home), PROJECT],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=_env(home),
    )
    out = proc.stdout
    assert out is not None
    acked: list[str] = []
    reader = threading.Thread(target=lambda: acked.extend(line.strip() for line in out))
    reader.start()
    _first(acked, proc)  # its imports take a moment: kill it mid-flight, not before it starts
    time.sleep(rng.uniform(0.02, 0.3))
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    reader.join(timeout=10)
    out.close()
    acked = [a for a in acked if a]
    lost, problems = _lost(home, acked)
    return acked, lost + problems


def kill_server(home: Path, rng: random.Random) -> tuple[list[str], list[str]]:
    """One ``mama serve`` killed while it saves: (acknowledged ids, problems)."""
    project = home / "project"
    project.mkdir(exist_ok=True)
    server = StdioServer(_env(home), cwd=str(project))
    server.request("tools/list", {})
    acked: list[str] = []
    stop = threading.Event()

    def save() -> None:
        i = 0
        while not stop.is_set():
            try:
                _, result = server.call("save_decision", {
                    "topic": f"served_{i % 5}", "decision": f"served decision {i}",
                    "reasoning": "a server about to be killed saved it"})  # fmt: skip
            except (RuntimeError, OSError, ValueError):
                return  # the pipe closed under us: the kill
            said = " ".join(c.get("text", "") for c in result.get("content") or [])
            saved = _SAVED.search(said)
            if saved and not result.get("isError"):
                acked.append(saved.group(1))
            i += 1

    worker = threading.Thread(target=save, daemon=True)
    worker.start()
    _first(acked, server.proc)  # the warm-up imports take a while: kill it while it saves
    time.sleep(rng.uniform(0.0, 1.5))
    server.proc.send_signal(signal.SIGKILL)
    server.proc.wait()
    stop.set()
    worker.join(timeout=70)
    for pipe in (server.proc.stdin, server.proc.stdout):
        if pipe is not None:
            with contextlib.suppress(OSError):
                pipe.close()
    lost, problems = _lost(home, acked)
    return acked, lost + problems


def kills_run(
    writers: int, servers: int, *, seed: int = 7, progress: Callable[[str], None] = print
) -> tuple[str, dict[str, Any]]:
    """Kill ``writers`` writer processes and ``servers`` servers; report what was lost."""
    rng = random.Random(seed)
    data: dict[str, Any] = {}
    for kind, trials, trial in (("writer", writers, kill_writer), ("server", servers, kill_server)):
        acked = lost = 0
        problems: list[str] = []
        with tempfile.TemporaryDirectory(prefix=f"mama-kills-{kind}-") as tmp:
            home = Path(tmp)
            for n in range(trials):
                ids, found = trial(home, rng)
                acked += len(ids)
                lost += sum(1 for p in found if p.startswith(("dec_", "chk_")))
                problems += [p for p in found if not p.startswith(("dec_", "chk_"))]
                if (n + 1) % 10 == 0 or n + 1 == trials:
                    progress(f"{kind}: {n + 1}/{trials} kills, {acked} acknowledged, {lost} lost")
        data[kind] = {"kills": trials, "acknowledged": acked, "lost": lost, "problems": problems}
    lines = ["SIGKILL at a random moment; every acknowledged save must survive the reopen"]
    for kind, row in data.items():
        lines.append(
            f"  {kind:<7} {row['kills']:>4} kills  {row['acknowledged']:>7} acknowledged  "
            f"{row['lost']:>3} lost  integrity problems: {len(row['problems'])}"
        )
        lines += [f"    {p}" for p in row["problems"][:5]]
    return "\n".join(lines) + "\n", data
