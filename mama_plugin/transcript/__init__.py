"""What a Claude Code session did, read from its transcript: files, commands, tasks, requests.

Standard library only: the Stop hook's checkpoint and the narrative drafter both read this.
The transcript is JSONL; only ``user``/``assistant`` lines carry the conversation, tool calls
are ``tool_use`` blocks and their results come back as ``tool_result`` blocks on a later user
line, with Claude Code's own parsed result in the line's ``toolUseResult``. Line ranges come
from what the tools report (Read's window, Edit's patch hunks, Write's length), never guessed.

Reading never raises: a missing, unreadable or malformed transcript gives what could be read
(possibly nothing). Only the tail is read (``max_bytes``) so a long session costs the same as
a short one.
"""

from __future__ import annotations

import json
import os
import threading
import time
from copy import deepcopy
from typing import Any

from .digest import Command, Digest, FileTouch, Task
from .entries import take

__all__ = [
    "TURN_LIMIT_S",
    "Command",
    "Digest",
    "FileTouch",
    "Reader",
    "Task",
    "read_transcript",
    "settle",
]

MAX_BYTES = 4 * 1024 * 1024
# Claude Code queues transcript entries and appends them in batches (every 100 ms when its
# event loop is free; measured lagging a turn by 0.4 s in 2.1.197): see Reader.settle().
QUIET_S = 0.25
SETTLE_LIMIT_S = 3.0
# The Stop hook's wait for the turn it closes: the server answers a hook within 3 s
# (server/hook_table.HOOK_DEADLINE_S) and the checkpoint needs the rest of that.
TURN_LIMIT_S = 1.5
POLL_S = 0.02


def settle(
    path: str | os.PathLike[str],
    *,
    marker: str = "",
    quiet_s: float = QUIET_S,
    limit_s: float = SETTLE_LIMIT_S,
) -> float:
    """Wait until the transcript at ``path`` has caught up (see :meth:`Reader.settle`)."""
    return Reader(path).settle(marker, quiet_s=quiet_s, limit_s=limit_s)


def read_transcript(path: str | os.PathLike[str] | None, *, max_bytes: int = MAX_BYTES) -> Digest:
    """Digest the transcript at ``path``; never raises (see the module docstring)."""
    return Reader(path, max_bytes=max_bytes).read()


class Reader:
    """Reads a transcript incrementally: each :meth:`read` parses only the lines added since.

    A long-running process (the MCP server, called by the Stop hook after every turn) keeps
    one reader per session, so each turn costs its own new lines, not the whole file. The hooks
    and a draft may share it from two threads: each read holds the reader's own lock.
    """

    def __init__(self, path: str | os.PathLike[str] | None, *, max_bytes: int = MAX_BYTES) -> None:
        self.path = path
        self.max_bytes = max_bytes
        self.digest = Digest()
        self._offset: int | None = None  # None: nothing read yet
        self._calls: dict[str, dict[str, Any]] = {}  # tool calls waiting for their result
        self._seen: set[str] = set()  # the id of every tool call read
        self.readable = True  # whether the last read could open the file
        self._lock = threading.RLock()

    def settle(
        self, marker: str = "", *, quiet_s: float = QUIET_S, limit_s: float = SETTLE_LIMIT_S
    ) -> float:
        """Read until the transcript has caught up, at most ``limit_s``; the seconds waited.

        Claude Code queues transcript entries and appends them in batches, and a batch can lag
        the conversation by a few hundred milliseconds: a tool call (a draft asked for on the
        same turn as the work, or on the next prompt) can find a file without the last tool
        calls or the last thing Claude said. With ``marker`` (the id Claude Code gave the tool
        call being answered), caught up means the call has been read: entries are appended in
        order, so everything before it has been read too. Without one, it means nothing was
        written for ``quiet_s``. Returns at once when caught up, and when the file cannot be
        read. Each read holds the reader's lock; the waits do not.
        """
        started = time.monotonic()
        while True:
            with self._lock:
                self.read()
                pause = self._behind(marker, quiet_s)
            left = limit_s - (time.monotonic() - started)
            if pause <= 0 or left <= 0:
                return time.monotonic() - started
            time.sleep(min(pause, left))

    def settle_turn(self, last_message: str, *, limit_s: float = TURN_LIMIT_S) -> float:
        """Read until the turn that ``last_message`` closed is in the file, at most ``limit_s``.

        When the Stop hook fires, Claude Code has not yet appended the turn's last entries (its
        final tool results and what Claude said last; on a first turn not even the file).
        Entries are appended in order, so once the turn's final assistant text — the one that
        ends ``last_message`` — has been read, every tool result before it has been too. Without
        ``last_message`` (an interrupted turn), caught up means nothing was written for
        :data:`QUIET_S`. Returns the seconds waited; after ``limit_s`` the caller takes what is
        there. Each read holds the reader's lock; the waits do not.
        """
        started = time.monotonic()
        wanted = _norm(last_message)
        while True:
            with self._lock:
                self.read()
                if wanted:
                    texts = self.digest.assistant_texts[self.digest.turn_start :]
                    pause = 0.0 if texts and _closes(_norm(texts[-1]), wanted) else POLL_S
                else:
                    pause = self._behind("", QUIET_S) if self.readable else POLL_S
            left = limit_s - (time.monotonic() - started)
            if pause <= 0 or left <= 0:
                return time.monotonic() - started
            time.sleep(min(pause, left))

    def copy(self) -> Digest:
        """A copy of the digest so far, which later reads (from any thread) leave alone."""
        with self._lock:
            return deepcopy(self.digest)

    def _behind(self, marker: str, quiet_s: float) -> float:
        """Seconds to wait before reading again; 0 or less when caught up or unreadable."""
        if not self.path or not self.readable:
            return 0.0
        if marker:
            return 0.0 if marker in self._seen else 0.02
        try:
            return quiet_s - (time.time() - os.stat(self.path).st_mtime)
        except OSError:
            return 0.0

    def read(self) -> Digest:
        """Parse what was appended since the last call and return the digest so far."""
        with self._lock:
            return self._read()

    def _read(self) -> Digest:
        if not self.path:
            return self.digest
        try:
            with open(self.path, "rb") as handle:
                size = handle.seek(0, os.SEEK_END)
                if self._offset is None or size < self._offset:  # first read, or rewritten
                    self.digest, self._calls, self._seen = Digest(), {}, set()
                    start = max(0, size - self.max_bytes)
                else:
                    start = self._offset
                handle.seek(start)
                raw = handle.read()
        except OSError:
            self.readable = False
            return self.digest
        self.readable = True
        complete = raw.rfind(b"\n") + 1  # a line still being written waits for the next call
        lines = raw[:complete].split(b"\n")
        if start > 0 and self._offset is None:
            lines = lines[1:]  # the tail began in the middle of a line
        self._offset = start + complete
        for line in lines:
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            if isinstance(entry, dict):
                take(entry, self.digest, self._calls, self._seen)
        return self.digest


def _norm(text: str) -> str:
    return " ".join(str(text or "").split())


def _closes(text: str, message: str) -> bool:
    """Whether a transcript text block ends Claude's last message (as Stop forwards it).

    The message may hold several text blocks (the block is its end) or be cut short by the
    hook's input limit (the block then begins the same way, for a long message).
    """
    if not text:
        return False
    if message.endswith(text) or text.endswith(message):
        return True
    return len(message) >= 10_000 and text.startswith(message[:2000])
