"""The automatic checkpoint: one rolling checkpoint per session, upserted after every turn.

Claude Code's Stop hook fires after every assistant turn, so whenever a session ends its
latest state is already saved. The checkpoint is built without a model from what the session
visibly did (:mod:`mama_plugin.transcript`: files, commands, tasks, the user's requests) and
from Claude's last message. It never replaces a checkpoint Claude wrote itself: those are
separate memories, and the cliffhanger prefers the newest of either kind.
"""

from __future__ import annotations

from typing import Any

from ..storage import MemoryRecord, NewMemory, Store
from ..text import NEXT, TENSION, split
from ..transcript import Digest
from .render import clip

TAG = "auto"
MAX_ITEMS = 8
MAX_TEXT = 400


def checkpoint_turn(
    store: Store,
    project: str,
    *,
    session_id: str,
    digest: Digest,
    last_message: str = "",
    cwd: str = "",
    request: str = "",
) -> MemoryRecord | None:
    """Upsert this session's rolling checkpoint; return it, or None when nothing happened yet.

    ``request`` is the user's latest prompt as the prompt hook saw it, used when the
    transcript does not hold it yet. Writes nothing when the session has neither a request nor
    a reply, and leaves the row untouched (no new version, no re-embedding) when this turn
    changed nothing in it.
    """
    last_message = last_message.strip() or (digest.assistant_texts or [""])[-1]
    request = digest.last_request or request.strip()
    if not (request or last_message) or not session_id:
        return None
    decisions = [m.id for m in store.memories.of_session(session_id, type="decision")]
    layers = _layers(digest, request, last_message, cwd, decisions)
    with store.transaction():
        existing = [
            m
            for m in store.memories.of_session(session_id, type="checkpoint")
            if m.metadata.get("auto")
        ]
        if existing:
            old = existing[-1]
            if all(getattr(old, k) == v for k, v in layers.items()):
                return old
            return store.memories.update(old.id, expected_version=old.version, **layers)[0]
        return store.memories.insert(
            NewMemory(
                type="checkpoint",
                project=project,
                topic="checkpoint",
                tags=[TAG],
                session_id=session_id,
                **layers,
            )
        )[0]


def _layers(
    digest: Digest, request: str, last: str, cwd: str, decisions: list[str]
) -> dict[str, Any]:
    sentences = split(last)
    request = clip(request, MAX_TEXT)
    summary = f"Working on: {request}" if request else "Session in progress"
    if sentences:
        summary += f" — last: {clip(sentences[0], MAX_TEXT)}"
    changed = digest.changed()
    done = [f"{t.subject}" for t in digest.done_tasks()]
    if changed:
        done.append("Changed " + ", ".join(f"{t.cite(cwd)} ({t.action})" for t in changed))
    ran = [c for c in digest.commands if not c.failed]
    if ran:
        done.append("Ran " + "; ".join(clip(c.description or c.command, 120) for c in ran[-4:]))
    open_tasks = digest.open_tasks()
    next_steps = [
        {
            "step": clip(t.subject, MAX_TEXT),
            "priority": "HIGH" if t.status == "in_progress" else "MEDIUM",
            "context": "in progress" if t.status == "in_progress" else "",
        }
        for t in open_tasks
    ] + [
        {"step": clip(s, MAX_TEXT), "priority": "MEDIUM", "context": "from Claude's last message"}
        for s in sentences
        if NEXT.match(s)
    ]
    concerns = [clip(c.failure(), MAX_TEXT) for c in digest.commands[-MAX_ITEMS:] if c.failed] + [
        clip(s, MAX_TEXT) for s in sentences if TENSION.search(s) and not NEXT.match(s)
    ]
    evidence = [{"source": t.cite(cwd), "kind": "file", "detail": t.action} for t in changed]
    evidence += [
        {
            "source": clip(c.command, 300),
            "kind": "command",
            "detail": c.description + (f" ({c.outcome})" if c.failed else ""),
        }
        for c in digest.commands[-4:]
    ]
    return {
        "content": summary,
        "continuity": {
            "done": done[-MAX_ITEMS:],
            "remains": [clip(t.subject, MAX_TEXT) for t in open_tasks][:MAX_ITEMS],
            "next_steps": next_steps[:MAX_ITEMS],
            "open_files": [t.cite(cwd) for t in changed][-MAX_ITEMS:],
        },
        "tension": {"concerns": concerns[:MAX_ITEMS]},
        "evidence": evidence[-MAX_ITEMS:],
        "metadata": {
            "auto": True,
            "request": request,
            "last_message": clip(last, 1200),
            "decisions": decisions,
            "tool_calls": digest.tool_calls,
        },
    }
