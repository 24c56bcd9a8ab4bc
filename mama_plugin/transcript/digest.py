"""A transcript's digest: the files, commands, tasks and requests of a Claude Code session."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .looks import only_looks


@dataclass
class FileTouch:
    """A file a tool call touched: ``read``, ``edited`` or ``created``, with lines if known."""

    path: str
    action: str
    lines: tuple[int, int] | None = None

    def relative(self, root: str = "") -> str:
        """The file's path, relative to ``root`` when inside it (no lines)."""
        path = self.path
        if root and path.startswith(root.rstrip("/") + "/"):
            path = path[len(root.rstrip("/")) + 1 :]
        return path

    def cite(self, root: str = "") -> str:
        """``path:start-end`` (relative to ``root`` when inside it), as evidence is written."""
        path = self.relative(root)
        if self.lines is None:
            return path
        start, end = self.lines
        return f"{path}:{start}" if start == end else f"{path}:{start}-{end}"


@dataclass
class Command:
    """A shell command the session ran, what it was for, and what its result shows: failed
    (and how), passed, or not known (:mod:`.verdict`). One that was interrupted failed (it
    is not done); one Claude Code never started (``not_run``) neither failed nor passed."""

    command: str
    description: str = ""
    failed: bool = False
    error: str = ""  # what tells the failure: "exit 1, NameError: …", "2 failed, 3 passed"
    calls: int = 0  # the session's tool calls up to and including this one
    unknown: bool = False  # it ran, and nothing shows whether it passed (``| tail``, ``|| true``)
    shown: str = ""  # the line of its output that shows it passed ("7 passed in 0.20s")
    stopped: str = ""  # "interrupted" (a timeout, the user) or "not run" (refused), else ""

    @property
    def not_run(self) -> bool:
        """Whether Claude Code refused to start it (a permission, a blocked path)."""
        return self.stopped == "not run"

    @property
    def outcome(self) -> str:
        """``ran``, ``failed``, ``failed: exit 1, why``, ``interrupted: …`` or ``not run: …``."""
        if self.stopped:
            return f"{self.stopped}: {self.error}" if self.error else self.stopped
        if not self.failed:
            return "ran"
        return f"failed: {self.error}" if self.error else "failed"

    @property
    def looks(self) -> bool:
        """Whether the command only looks around (``ls``, ``git status``…: :mod:`.looks`)."""
        return only_looks(self.command)

    def failure(self) -> str:
        """The failure as a concern: "`cmd` failed (what it was for): exit 1, why"."""
        command = " ".join(self.command.split())
        command = command if len(command) <= 120 else command[:119] + "…"
        what = f" ({self.description})" if self.description else ""
        how = "was interrupted" if self.stopped == "interrupted" else "failed"
        return f"`{command}` {how}{what}" + (f": {self.error}" if self.error else "")


@dataclass(frozen=True)
class Refused:
    """A change that did not happen: an edit or write Claude Code answered with an error, or a
    save MAMA's tool refused ("MAMA is installing …; nothing was saved")."""

    tool: str  # the tool's short name: "Edit", "save_decision"
    target: str  # the file, or "" for a memory write
    why: str  # the answer's first line
    words: frozenset[str] = frozenset()  # a failed Write's content, as words (:mod:`.entries`)

    def told(self, root: str = "") -> str:
        """As a concern: "not saved: save_decision answered “…”", "the edit of a.py failed: …"."""
        if not self.target:
            return f"not saved: {self.tool} answered “{self.why}”"
        path = self.target
        if root and path.startswith(root.rstrip("/") + "/"):
            path = path[len(root.rstrip("/")) + 1 :]
        what = "write" if self.tool == "Write" else "edit"
        return f"the {what} of {path} failed, so it is not in the file: {self.why}"


@dataclass
class Task:
    """A task of the session's task list (TaskCreate/TaskUpdate, or the older TodoWrite)."""

    id: str
    subject: str
    status: str = "pending"


@dataclass
class Digest:
    """The session as the transcript tells it, oldest first within each list."""

    user_requests: list[str] = field(default_factory=list)
    assistant_texts: list[str] = field(default_factory=list)
    files: list[FileTouch] = field(default_factory=list)
    commands: list[Command] = field(default_factory=list)
    tasks: dict[str, Task] = field(default_factory=dict)
    tool_calls: int = 0
    cwd: str = ""  # the session's working directory, as the transcript records it
    turn_start: int = 0  # where the latest request's turn begins in assistant_texts
    # The tools the session called (names as Claude Code gives them), in order.
    tool_names: list[str] = field(default_factory=list)
    turn_tools: int = 0  # where the latest request's turn begins in tool_names
    # Work (an edit, a command, a task change) done since the latest request.
    turn_work: int = 0
    # Changes that did not happen and were not made good later, oldest first.
    refused: list[Refused] = field(default_factory=list)
    # The last work the session did: where it stopped, as it was left.
    last: Command | FileTouch | None = None

    @property
    def last_request(self) -> str:
        """The user's most recent request ("" when none)."""
        return self.user_requests[-1] if self.user_requests else ""

    def changed(self) -> list[FileTouch]:
        """Files edited or created, one entry per path (its line ranges merged)."""
        return _merge(t for t in self.files if t.action != "read")

    def read(self) -> list[FileTouch]:
        """Files only read, one entry per path."""
        changed = {t.path for t in self.files if t.action != "read"}
        return _merge(t for t in self.files if t.action == "read" and t.path not in changed)

    def open_tasks(self) -> list[Task]:
        """Tasks in progress first, then pending ones."""
        tasks = [t for t in self.tasks.values() if t.status in ("in_progress", "pending")]
        return sorted(tasks, key=lambda t: t.status != "in_progress")

    def memory_tools(self, *, turn: bool = False) -> list[str]:
        """MAMA's tools the session (or, with ``turn``, its latest turn) called, short names."""
        names = self.tool_names[self.turn_tools :] if turn else self.tool_names
        return [n.rsplit("__", 1)[-1] for n in names if n.startswith("mcp__plugin_mama_")]

    def done_tasks(self) -> list[Task]:
        """Tasks marked completed."""
        return [t for t in self.tasks.values() if t.status == "completed"]


def span_of(touches: list[FileTouch]) -> FileTouch:
    """One edit's hunks as one touch: from its first changed line to its last."""
    ranges = [t.lines for t in touches if t.lines is not None]
    if not ranges or len(ranges) != len(touches):
        return FileTouch(touches[0].path, "edited", None)
    return FileTouch(
        touches[0].path, "edited", (min(r[0] for r in ranges), max(r[1] for r in ranges))
    )


def _merge(touches: Any) -> list[FileTouch]:
    """One entry per path, in order of first touch; ranges merged into their overall span."""
    merged: dict[str, FileTouch] = {}
    for t in touches:
        seen = merged.get(t.path)
        if seen is None:
            merged[t.path] = FileTouch(t.path, t.action, t.lines)
            continue
        if t.action == "created":
            seen.action = "created"
        if seen.lines and t.lines:
            seen.lines = (min(seen.lines[0], t.lines[0]), max(seen.lines[1], t.lines[1]))
        elif t.lines is None:
            seen.lines = None  # part of the file without a known range: cite the whole file
    return list(merged.values())
