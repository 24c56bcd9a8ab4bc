"""The automatic checkpoint: one rolling checkpoint per session, upserted after every turn.

Claude Code's Stop hook fires after every assistant turn, so whenever a session ends its
latest state is already saved. The checkpoint is built without a model from what the session
visibly did (:mod:`mama_plugin.transcript`: files, commands, tasks, the user's requests) and
from Claude's last message. It never replaces a checkpoint Claude wrote itself: those are
separate memories, and the cliffhanger prefers the newest of either kind.
"""

from __future__ import annotations

import re
from typing import Any

from ..storage import MemoryRecord, NewMemory, Store
from ..text import next_step, remains, split, tension, unique
from ..transcript import Command, Digest
from .render import clip

TAG = "auto"
_ASSIGNMENTS = re.compile(r"^(?:[A-Za-z_][A-Za-z0-9_]*=(?:'[^']*'|\"[^\"]*\"|\S*)\s+)+")
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
    decisions = store.memories.of_session(session_id, type="decision")
    layers = layers_of(digest, request, last_message, cwd, decisions)
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


def layers_of(
    digest: Digest, request: str, last: str, cwd: str, decisions: list[Any]
) -> dict[str, Any]:
    """The checkpoint's layers for a session so far (no model: what it did and said last).

    Unresolved: the failed commands no later run of the same command made good (the newest
    four, newest first), the sentences of Claude's last message that state a failure, risk
    or gap, and the open concerns of this session's current decisions. The next steps, first
    the one to show: the explicit one ("Next: …"), a task in progress, a current decision's
    HIGH next step, a pending task. What remains ("Remaining: …") is never a next step.
    ``decisions`` are memory records (or anything with ``id``, ``status``, ``topic``,
    ``tension`` and ``continuity``), oldest first.
    """
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
    current = [d for d in decisions if getattr(d, "status", "active") != "superseded"]

    def step(text: str, priority: str, context: str) -> dict[str, str]:
        return {"step": clip(text, MAX_TEXT), "priority": priority, "context": context}

    said = [x for x in (next_step(s) for s in sentences) if x]
    next_steps = [step(x, "HIGH", "from Claude's last message") for x in said]
    next_steps += [step(t.subject, "HIGH", "in progress") for t in open_tasks
                   if t.status == "in_progress"]  # fmt: skip
    next_steps += [
        step(str(n.get("step", "")), "HIGH", f"next step of {d.id}")
        for d in current
        for n in (d.continuity or {}).get("next_steps") or []
        if isinstance(n, dict) and n.get("priority") == "HIGH" and n.get("step")
    ]
    next_steps += [step(t.subject, "MEDIUM", "") for t in open_tasks if t.status != "in_progress"]
    # Newest failure first: a list cut to its first items keeps the one this turn hit.
    concerns = [clip(c.failure(), MAX_TEXT) for c in unresolved(digest.commands)[::-1][:4]]
    concerns += [clip(s, MAX_TEXT) for s in sentences if tension(s)]
    concerns += [
        clip(f"{c} ({d.id})", MAX_TEXT)
        for d in current
        for key in ("concerns", "risks")
        for c in (d.tension or {}).get(key) or []
    ]
    left = [clip(t.subject, MAX_TEXT) for t in open_tasks]
    left += [clip(x, MAX_TEXT) for x in (remains(s) for s in sentences) if x]
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
            "remains": unique(left)[:MAX_ITEMS],
            "next_steps": unique(next_steps, key=lambda n: n["step"].lower())[:MAX_ITEMS],
            "open_files": [t.cite(cwd) for t in changed][-MAX_ITEMS:],
        },
        "tension": {"concerns": unique(concerns)[:MAX_ITEMS]},
        "evidence": evidence[-MAX_ITEMS:],
        "metadata": {
            "auto": True,
            "request": request,
            "last_message": clip(last, 1200),
            "decisions": [d.id for d in decisions],
            "tool_calls": digest.tool_calls,
        },
    }


def unresolved(commands: list[Command]) -> list[Command]:
    """The failed commands, newest last, that no later run of the same command made good.

    "The same command" ignores spacing and leading variable assignments: after
    ``python -m app --check`` failed for want of ``PRICE_DB``, ``PRICE_DB=… python -m app
    --check`` passing settles it.
    """
    later_ok: set[str] = set()
    kept: dict[str, Command] = {}
    for command in reversed(commands):
        key = _ASSIGNMENTS.sub("", " ".join(command.command.split()))
        if not command.failed:
            later_ok.add(key)
        elif key not in later_ok and key not in kept:
            kept[key] = command
    return list(kept.values())[::-1][-MAX_ITEMS:]
