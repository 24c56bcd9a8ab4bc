"""Turns sessions took while MAMA's environment was being built, kept for ``mama catchup``.

Until the core environment is ready the bridge answers the hook tools ``{}``, so no
checkpoint is written. Instead it records each call here: ``DATA/pending-turns.jsonl``, one
JSON object a line, appended under ``DATA/pending.lock``, private (0600) and bounded (each
text clipped as the hook tools clip it, the file to ``MAX_BYTES``). Once the core is ready
``mama catchup`` claims the file (renames it under the same lock, so nothing appended later
is lost), replays the turns through the Stop hook's own code, then deletes what it claimed.
Standard library only: the bridge runs under the system Python.

An entry: ``{"kind": "turn" | "prompt", "at": <ms since the epoch>, "project_dir": …,
"args": {<the hook tool's arguments>}, "tries": <n>}``; readers skip any line that is not one.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..home import private_folder
from . import paths

PENDING = "pending-turns.jsonl"
CLAIMED = "pending-turns.claimed.jsonl"
LOCK = "pending.lock"
MAX_BYTES = 4 * 1024 * 1024
MAX_TEXT = 20_000  # what the hook tools' inputs keep of a prompt or a message (schema/inputs)
LOCK_WAIT_S = 1.0
KINDS = {"checkpoint_turn": "turn", "observe_prompt": "prompt"}
FIELDS = {
    "turn": ("session_id", "transcript_path", "last_assistant_message", "cwd", "stop_hook_active"),
    "prompt": ("session_id", "transcript_path", "prompt"),
}


def pending_path() -> Path:
    """The file the bridge appends to."""
    return paths.data_dir() / PENDING


def claimed_path() -> Path:
    """The file ``mama catchup`` is replaying (left behind if it was killed)."""
    return paths.data_dir() / CLAIMED


def waiting() -> bool:
    """Whether any recorded turn waits for a catch-up (never raises)."""
    return any(_size(p) > 0 for p in (pending_path(), claimed_path()))


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


@contextlib.contextmanager
def locked(wait_s: float = LOCK_WAIT_S) -> Iterator[bool]:
    """Hold ``DATA/pending.lock``; yields False when it stayed busy for ``wait_s``."""
    folder = paths.data_dir()
    private_folder(folder)
    with open(folder / LOCK, "ab") as handle:
        deadline = time.monotonic() + wait_s
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    yield False
                    return
                time.sleep(0.01)
        try:
            yield True
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def entry(tool: str, arguments: dict[str, Any], project_dir: str) -> dict[str, Any] | None:
    """The pending entry for a hook tool's call, or None for a tool that is not recorded."""
    kind = KINDS.get(tool)
    if kind is None:
        return None
    args = {name: str(arguments.get(name) or "")[:MAX_TEXT] for name in FIELDS[kind]}
    if not args["session_id"]:
        return None  # nothing to attach a checkpoint to
    return {
        "kind": kind,
        "at": int(time.time() * 1000),
        "project_dir": project_dir,
        "args": args,
        "tries": 0,
    }


def append(entries: list[dict[str, Any]]) -> str | None:
    """Append ``entries`` to the pending file; None when written, else why not (never raises)."""
    lines = b"".join(
        json.dumps(e, ensure_ascii=False, separators=(",", ":")).encode() + b"\n" for e in entries
    )
    try:
        with locked() as held:
            if not held:
                return "the pending file stayed locked"
            target = pending_path()
            if _size(target) + len(lines) > MAX_BYTES:
                return f"{target} is full ({MAX_BYTES} bytes)"
            fd = os.open(target, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            try:
                os.write(fd, lines)
            finally:
                os.close(fd)
    except OSError as exc:
        return f"cannot write the pending file: {exc}"
    return None


def record(tool: str, arguments: dict[str, Any], project_dir: str) -> str | None:
    """Record one hook tool call made while the core is not ready; None when recorded (or not
    a recorded tool), else why it was not (never raises)."""
    made = entry(tool, arguments, project_dir)
    return None if made is None else append([made])


def claim() -> Path | None:
    """The claimed file to replay: one left by a killed catch-up, else the pending file
    renamed under the lock (later calls append to a new one); None when nothing waits."""
    claimed = claimed_path()
    if claimed.exists():
        return claimed
    with locked(wait_s=10.0) as held:
        if not held or _size(pending_path()) == 0:
            return None
        os.replace(pending_path(), claimed)
    return claimed


def read(path: Path) -> tuple[list[dict[str, Any]], int]:
    """The well-formed entries of ``path`` in order, and how many lines were skipped."""
    entries: list[dict[str, Any]] = []
    skipped = 0
    try:
        raw = path.read_bytes()
    except OSError:
        return [], 0
    for line in raw.splitlines():
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except ValueError:
            skipped += 1
            continue
        if _well_formed(item):
            entries.append(item)
        else:
            skipped += 1
    return entries, skipped


def _well_formed(item: Any) -> bool:
    if not isinstance(item, dict) or item.get("kind") not in FIELDS:
        return False
    args = item.get("args")
    return (
        isinstance(args, dict)
        and isinstance(args.get("session_id"), str)
        and bool(args["session_id"])
        and all(isinstance(args.get(name, ""), str) for name in FIELDS[item["kind"]])
        and isinstance(item.get("at"), int)
        and isinstance(item.get("project_dir"), str)
        and isinstance(item.get("tries", 0), int)
    )
