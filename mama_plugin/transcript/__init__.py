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
import re
import threading
import time
from copy import deepcopy
from typing import Any

from .digest import Command, Digest, FileTouch, Task, span_of

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
_EDITORS = {"Edit", "MultiEdit", "NotebookEdit"}
_TASKS = {"TaskCreate", "TaskUpdate", "TodoWrite"}
_TAG = re.compile(r"<(command-name|command-message|command-args)>(.*?)</\1>", re.S)
_EXIT = re.compile(r"^(?:Error: )?Exit code (\d+)$")
_SHELL_PREFIX = re.compile(r"^/bin/(?:ba|z)?sh: (?:line \d+: )?")
_NOISE = ("<local-command-stdout>", "<local-command-stderr>", "<system-reminder>", "Caveat:")


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
                _take(entry, self.digest, self._calls, self._seen)
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


def _take(
    entry: dict[str, Any], digest: Digest, calls: dict[str, dict[str, Any]], seen: set[str]
) -> None:
    kind = entry.get("type")
    message = entry.get("message")
    if kind not in ("user", "assistant") or not isinstance(message, dict):
        return
    if isinstance(entry.get("cwd"), str) and entry["cwd"]:
        digest.cwd = entry["cwd"]
    content = message.get("content")
    blocks = [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []
    if kind == "assistant":
        for block in blocks:
            if block.get("type") == "text" and str(block.get("text", "")).strip():
                digest.assistant_texts.append(str(block["text"]).strip())
            elif block.get("type") == "tool_use" and isinstance(block.get("input"), dict):
                calls[str(block.get("id"))] = block
                seen.add(str(block.get("id")))
                digest.tool_calls += 1
                digest.tool_names.append(str(block.get("name", "")))
        return
    if entry.get("isMeta") or entry.get("isSidechain"):
        return
    results = [b for b in blocks if b.get("type") == "tool_result"]
    for block in results:
        call = calls.pop(str(block.get("tool_use_id")), None)
        if call is not None:
            _result(call, block, entry.get("toolUseResult"), digest)
    if not results:
        request = _request_text(content, blocks)
        if request:
            digest.user_requests.append(request)
            digest.turn_start = len(digest.assistant_texts)
            digest.turn_tools = len(digest.tool_names)
            digest.turn_work = 0


def _request_text(content: Any, blocks: list[dict[str, Any]]) -> str:
    text = (
        content
        if isinstance(content, str)
        else "\n".join(str(b.get("text", "")) for b in blocks if b.get("type") == "text")
    )
    text = text.strip()
    if not text or text.startswith(_NOISE):
        return ""
    tags = dict((name, value.strip()) for name, value in _TAG.findall(text))
    if "command-name" in tags:  # a slash command: keep what the user typed
        return " ".join(x for x in (tags["command-name"], tags.get("command-args", "")) if x)
    return text


def _result(call: dict[str, Any], block: dict[str, Any], meta: Any, digest: Digest) -> None:
    name, args = str(call.get("name", "")), call["input"]
    failed = bool(block.get("is_error"))
    meta = meta if isinstance(meta, dict) else {}
    if name == "Bash" and isinstance(args.get("command"), str):
        error = _error_of(block.get("content")) if failed else ""
        digest.commands.append(
            Command(
                args["command"],
                str(args.get("description", "")),
                failed,
                error,
                len(digest.tool_names),
            )
        )
        digest.last = digest.commands[-1]
        digest.turn_work += not digest.last.looks
        return
    if failed:
        return
    path = args.get("file_path") or args.get("notebook_path")
    if name in _EDITORS | {"Write"} | _TASKS:
        digest.turn_work += 1
    if name == "Read" and isinstance(path, str):
        digest.files.append(FileTouch(path, "read", _read_window(args, meta)))
    elif name == "Write" and isinstance(path, str):
        lines = str(args.get("content", "")).count("\n") or 1
        action = "created" if meta.get("type") == "create" else "edited"
        for touch in digest.files:  # the old content's lines are gone
            if touch.path == path and touch.lines is not None:
                touch.lines = (1, lines) if touch.action == "created" else None
        digest.files.append(FileTouch(path, action, (1, lines)))
        digest.last = digest.files[-1]
    elif name in _EDITORS and isinstance(path, str):
        hunks = [h for h in meta.get("structuredPatch") or [] if isinstance(h, dict)]
        _shift([t for t in digest.files if t.path == path], hunks)
        ranges = [_hunk(h) for h in hunks] or [None]
        digest.files.extend(FileTouch(path, "edited", r) for r in ranges)
        digest.last = span_of(digest.files[-len(ranges) :])
    else:
        _task(name, args, meta, digest)


def _error_of(content: Any) -> str:
    """ "exit N, first line of output" from a failed Bash result ("" when it says nothing)."""
    if isinstance(content, list):
        content = "\n".join(str(b.get("text", "")) for b in content if isinstance(b, dict))
    code, said = "", ""
    for line in str(content or "").splitlines():
        line = line.strip()
        exit_line = _EXIT.match(line)
        if exit_line and not code:
            code = exit_line.group(1)
        elif line and not said:
            said = _SHELL_PREFIX.sub("", line)
    text = ", ".join(x for x in (f"exit {code}" if code else "", said) if x)
    return text if len(text) <= 160 else text[:159] + "…"


def _read_window(args: dict[str, Any], meta: dict[str, Any]) -> tuple[int, int] | None:
    file: dict[str, Any] = meta["file"] if isinstance(meta.get("file"), dict) else {}
    start, count = file.get("startLine"), file.get("numLines")
    if isinstance(start, int) and isinstance(count, int) and count > 0:
        content = file.get("content")
        if isinstance(content, str) and content.endswith("\n") and count == content.count("\n") + 1:
            count -= 1  # Claude Code counts the empty "line" after a final newline
        return (start, start + max(count, 1) - 1)
    offset, limit = args.get("offset"), args.get("limit")
    if isinstance(offset, int) and isinstance(limit, int) and limit > 0:
        return (offset, offset + limit - 1)
    return None


def _shift(touches: list[FileTouch], hunks: list[dict[str, Any]]) -> None:
    """Move earlier ranges of a file to where an edit's hunks left their lines.

    Evidence cites the file as the session left it: lines below a hunk move by the lines it
    added or removed, a range the hunk cuts into grows or shrinks with it. Hunks are applied
    bottom-up, so each one's old line numbers still hold when it is applied.
    """
    spans = []
    for hunk in hunks:
        start, old, new = hunk.get("oldStart"), hunk.get("oldLines"), hunk.get("newLines")
        if isinstance(start, int) and isinstance(old, int) and isinstance(new, int):
            spans.append((start, old, new))
    for start, old, new in sorted(spans, reverse=True):
        end, delta = start + old - 1, new - old  # the hunk's old lines: start..end
        for touch in touches:
            if touch.lines is None or delta == 0 or touch.lines[1] < start:
                continue
            first, last = touch.lines
            if first > end:
                touch.lines = (first + delta, last + delta)
            else:  # the hunk changes lines inside the range
                touch.lines = (first, max(first, last + delta))


def _hunk(hunk: dict[str, Any]) -> tuple[int, int] | None:
    """The lines a patch hunk added or changed, in the new file (its context lines left out)."""
    start, count = hunk.get("newStart"), hunk.get("newLines")
    if not (isinstance(start, int) and isinstance(count, int)):
        return None
    lines = hunk.get("lines")
    if isinstance(lines, list) and all(isinstance(x, str) for x in lines):
        line, added, removed_at = start, [], None
        for text in lines:
            if text.startswith("+"):
                added.append(line)
                line += 1
            elif text.startswith("-"):
                removed_at = line if removed_at is None else removed_at
            else:
                line += 1
        if added:
            return (added[0], added[-1])
        if removed_at is not None:  # a pure deletion: cite where the lines were
            return (removed_at, removed_at)
    return (start, start + max(count, 1) - 1)


def _task(name: str, args: dict[str, Any], meta: dict[str, Any], digest: Digest) -> None:
    if name == "TaskCreate":
        made: dict[str, Any] = meta["task"] if isinstance(meta.get("task"), dict) else {}
        task_id = str(made.get("id") or f"new{len(digest.tasks) + 1}")
        digest.tasks[task_id] = Task(task_id, str(args.get("subject", "")).strip())
    elif name == "TaskUpdate" and args.get("taskId") is not None:
        task_id = str(args["taskId"])
        task = digest.tasks.setdefault(task_id, Task(task_id, f"task #{task_id}"))
        if isinstance(args.get("subject"), str) and args["subject"].strip():
            task.subject = args["subject"].strip()
        if args.get("status") == "deleted":
            digest.tasks.pop(task_id, None)
        elif isinstance(args.get("status"), str):
            task.status = args["status"]
    elif name == "TodoWrite" and isinstance(args.get("todos"), list):
        digest.tasks = {
            str(i): Task(str(i), str(t.get("content", "")).strip(), str(t.get("status", "")))
            for i, t in enumerate(args["todos"], 1)
            if isinstance(t, dict)
        }
