"""A recorded session replayed turn by turn through the Stop hook's code path, for ``truth``.

A transcript is split where the product's reader starts a turn (a user request: see
:func:`turn_ends`), and grown one turn at a time in a file that one :class:`~mama_plugin.
transcript.Reader` reads on, as the MCP server's reader of a session does; after each turn the
digest it holds goes to :func:`~mama_plugin.services.story.autosave.checkpoint_turn`, the
function the Stop hook's handler (``server.hook_tools.do_checkpoint_turn``) calls, with the
turn's last text as Claude Code's ``last_assistant_message``.

The baseline (``exit_status``) is the rule before the verdicts were read from output: a Bash
call failed when Claude Code marked its result ``is_error``, and passed otherwise. It is fed
where the product reads verdicts, the digest's commands (``failed``, ``unknown``, ``error``),
before the checkpoint is built; everything else is the product's own path. A call marked
``is_error`` is failed under both rules (the product's line is kept), so only the others change.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mama_plugin.errors import MamaError
from mama_plugin.services.story.autosave import checkpoint_turn
from mama_plugin.storage import MemoryRecord, Store
from mama_plugin.transcript import Digest, Reader
from mama_plugin.transcript.entries import take

__all__ = ["BashResult", "Replay", "bash_results", "parse", "turn_ends"]


@dataclass(frozen=True)
class BashResult:
    """A Bash call as the transcript holds it: its command, ``is_error``, the turn it is in."""

    command: str
    is_error: bool
    turn: int


def parse(lines: list[bytes]) -> list[dict[str, Any] | None]:
    """Each line as the JSON object it holds (None for anything else)."""
    out: list[dict[str, Any] | None] = []
    for line in lines:
        try:
            entry = json.loads(line)
        except ValueError:
            entry = None
        out.append(entry if isinstance(entry, dict) else None)
    return out


def turn_ends(entries: list[dict[str, Any] | None]) -> tuple[int, list[int]]:
    """Where the first turn starts and where each turn ends (exclusive line indexes).

    A turn starts at a line the product's reader takes as a user request (a prompt or a slash
    command; tool results and Claude Code's notices are not), exactly as ``turn_digests`` does.
    """
    digest, calls, seen = Digest(), dict[str, dict[str, Any]](), set[str]()
    starts: list[int] = []
    for k, entry in enumerate(entries):
        if entry is None:
            continue
        asked = len(digest.user_requests)
        take(entry, digest, calls, seen)
        if len(digest.user_requests) > asked:
            starts.append(k)
    if not starts:
        return 0, []
    return starts[0], [*starts[1:], len(entries)]


def bash_results(entries: list[dict[str, Any] | None]) -> list[BashResult]:
    """Every Bash call whose result is in ``entries``, in the order of their results (the order
    the digest lists its commands in), with the 1-based turn its result came in."""
    _, ends = turn_ends(entries)
    commands: dict[str, str] = {}
    out: list[BashResult] = []
    for k, entry in enumerate(entries):
        message = entry.get("message") if entry else None
        content = message.get("content") if isinstance(message, dict) else None
        for block in content if isinstance(content, list) else []:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "tool_use" and block.get("name") == "Bash":
                commands[str(block.get("id"))] = str((block.get("input") or {}).get("command"))
            elif block.get("type") == "tool_result" and str(block.get("tool_use_id")) in commands:
                turn = next((i for i, end in enumerate(ends, 1) if k < end), len(ends))
                command = commands.pop(str(block["tool_use_id"]))
                out.append(BashResult(command, bool(block.get("is_error")), turn))
    return out


def exit_status(digest: Digest, entries: list[dict[str, Any] | None]) -> Digest:
    """``digest`` with every command judged by its exit status alone (the baseline)."""
    results = bash_results(entries)
    if [r.command for r in results] != [c.command for c in digest.commands]:
        raise MamaError("the digest's commands are not the transcript's Bash results")
    for command, result in zip(digest.commands, results, strict=True):
        if not result.is_error:
            command.failed, command.unknown, command.error = False, False, ""
    return digest


class Replay:
    """One session as the Stop hook sees it: a transcript file grown turn by turn."""

    def __init__(
        self, store: Store, project: str, session_id: str, path: Path, *, baseline: bool
    ) -> None:
        self.store, self.project, self.session_id = store, project, session_id
        self.path, self.baseline = path, baseline
        self.lines: list[bytes] = []
        self.entries: list[dict[str, Any] | None] = []
        path.write_bytes(b"")
        self.reader = Reader(path)

    def turn(
        self, lines: list[bytes], entries: list[dict[str, Any] | None]
    ) -> tuple[Digest, MemoryRecord | None]:
        """Append one turn's lines, then do what the Stop hook does: read on, checkpoint."""
        self.lines += lines
        self.entries += entries
        with self.path.open("ab") as handle:
            handle.write(b"".join(line + b"\n" for line in lines))
        self.reader.read()
        digest = self.reader.copy()
        if self.baseline:
            digest = exit_status(digest, self.entries)
        last = digest.assistant_texts[-1] if digest.assistant_texts else ""
        saved = checkpoint_turn(
            self.store,
            self.project,
            session_id=self.session_id,
            digest=digest,
            last_message=last,
            cwd=digest.cwd,
        )
        return digest, saved
