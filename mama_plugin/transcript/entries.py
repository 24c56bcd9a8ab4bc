"""How each line of a transcript adds to its digest: requests, tool calls and their results.

One entry at a time, in file order (:func:`take`): an assistant line's text and tool calls, a
user line's request (slash commands as typed, Claude Code's own notices left out) or the
results of earlier calls — the files read and written with the line ranges the tools report,
the commands run (a failure's exit code and first line), the tasks. What an entry lacks, or
holds in another shape than expected, is skipped. Standard library only.
"""

from __future__ import annotations

import re
from typing import Any

from .digest import Command, Digest, FileTouch, Refused, Task, span_of
from .looks import only_looks
from .verdict import FAILED, INTERRUPTED, NOT_RUN, PASSED, UNKNOWN, verdict

_EDITORS = {"Edit", "MultiEdit", "NotebookEdit"}
_TASKS = {"TaskCreate", "TaskUpdate", "TodoWrite"}
# MAMA's tools that write a memory: a refusal from one of them means nothing was saved.
_SAVES = ("save_", "evolve_")
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")
# A failed Write is made good by a later one to another file that holds this share of its
# content's words, WRITTEN_MIN at least: the notes /proc refused, written to CHANGELOG.md.
_WORD = re.compile(r"\d+(?:\.\d+)+|[a-z][a-z0-9_]{2,}|\d+")
WRITTEN_SHARE, WRITTEN_MIN = 0.7, 3
_TAG = re.compile(r"<(command-name|command-message|command-args)>(.*?)</\1>", re.S)
_NOISE = (
    "<local-command-stdout>",
    "<local-command-stderr>",
    "<system-reminder>",
    "Caveat:",
    "[Request interrupted by user",
)


def take(
    entry: dict[str, Any], digest: Digest, calls: dict[str, dict[str, Any]], seen: set[str]
) -> None:
    """Add one parsed transcript line to ``digest``, skipping what it cannot use.

    ``calls`` holds the tool calls still waiting for their result (a result is matched to its
    call by id and removed), ``seen`` the id of every tool call read.
    """
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
        command, description = args["command"], str(args.get("description", ""))
        output = _text_of(block.get("content"))
        # A look around is judged by its status alone.
        result = verdict(command, failed, output, read_output=not only_looks(command))
        ran = Command(
            command,
            description,
            result.state in (FAILED, INTERRUPTED),
            "" if result.state == PASSED else result.line,
            len(digest.tool_names),
            unknown=result.state in (UNKNOWN, NOT_RUN),
            shown=result.line if result.state == PASSED else "",
            stopped=result.state if result.state in (INTERRUPTED, NOT_RUN) else "",
        )
        digest.commands.append(ran)
        if not ran.not_run:  # what never ran did nothing
            digest.last = ran
            digest.turn_work += not ran.looks
        return
    path = args.get("file_path") or args.get("notebook_path")
    written = str(args.get("content", "")) if name == "Write" else ""
    _refusal(
        name, path if isinstance(path, str) else "", failed, block.get("content"), digest, written
    )
    if failed:
        return
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


def _refusal(
    name: str, path: str, failed: bool, content: Any, digest: Digest, written: str = ""
) -> None:
    """Keep a change that did not happen (a failed edit or write, a refused memory save); a
    later success of the same change (any edit or write of that file; the same tool's save)
    makes it good, and so does a Write elsewhere of what a failed Write held (``written``:
    the content; :func:`_holds`)."""
    short = name.rsplit("__", 1)[-1]
    words = frozenset(_WORD.findall(written.lower()))
    if name in _EDITORS | {"Write"} and path:
        key = ("Write" if short == "Write" else "Edit", path)
        # Only a failed Write keeps words, and only a Write that went through has them here.
        digest.refused = [
            r for r in digest.refused if r.target != path and (failed or not _holds(words, r.words))
        ]
    elif name.startswith("mcp__plugin_mama_") and short.startswith(_SAVES):
        key = (short, "")
        digest.refused = [r for r in digest.refused if (r.tool, r.target) != key]
    else:
        return
    if failed:
        why = next((x.strip() for x in _text_of(content).splitlines() if x.strip()), "")
        why = _SENTENCE.split(re.sub(r"</?tool_use_error>", "", why))[0]
        why = why if len(why) <= 240 else why[:239] + "…"
        digest.refused.append(Refused(key[0], key[1], why, words))


def _holds(words: frozenset[str], refused: frozenset[str]) -> bool:
    """Whether a Write's ``words`` hold what a failed Write's (``refused``) held: most of them."""
    held = len(words & refused)
    return held >= WRITTEN_MIN and held >= WRITTEN_SHARE * len(refused)


def _text_of(content: Any) -> str:
    """A tool result's text (a string, or a list of text blocks)."""
    if isinstance(content, list):
        return "\n".join(str(b.get("text", "")) for b in content if isinstance(b, dict))
    return str(content or "")


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
